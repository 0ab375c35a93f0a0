// The runtime end to end on the ELDiR semantics: the hand-built ELDiR
// kernels of tests/compiler/autodiff, the reference robots and parameters read with
// the ROBOTS.json / PARAMS.json readers, run by simulate() (checkpointed
// rollouts, thread pool), must reproduce the reference vectors
// (docs/evolution.md, "The reference vectors").
#include "Close.h"
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "EldirFixture.h"
#include "autodiff/Differentiate.h"
#include "core/JsonIO.h"
#include "core/Train.h"
#include "support/Error.h"

using namespace evoc;
using namespace evoc::runtime;

namespace {

std::string vectors(const std::string &name) {
  return std::string(EVOC_SHARED_DIR) + "/testdata/eldir-vectors/" + name;
}

// The ELDiR fixture with irgen's field names, differentiated.
ir::Module eldir(test::Contact contact) {
  test::EldirOptions o;
  o.contact = contact;
  o.hidden = 32;
  ir::Module m = test::eldirModule(o);
  test::setIrgenFields(m);
  autodiff::differentiate(m);
  return m;
}

void check(codegen::BackendKind kind, int64_t steps, int64_t checkpointK) {
  auto robots = readRobotsFile(vectors("robots.json"), 2);
  auto params = readParamsFile(vectors("params.json"));
  for (auto contact : {test::Contact::Friction, test::Contact::NoSlip}) {
    std::string cname = contact == test::Contact::Friction ? "friction" : "noslip";
    std::ifstream f(vectors("expected_" + cname + "_T" + std::to_string(steps) + ".json"));
    REQUIRE(f.good());
    auto expected = nlohmann::json::parse(f)["results"];
    ir::Module m = eldir(contact);
    std::unique_ptr<codegen::Executable> exe;
    try {
      exe = codegen::compile(m, kind);
    } catch (const Error &e) {
      WARN("back end skipped: " << e.what());
      return;
    }
    SimOptions o;
    o.steps = steps;
    o.groundHeight = 0.1;
    o.threads = 2;
    o.checkpointK = checkpointK;
    SimResult res = simulate(m, *exe, robots, params, o);
    REQUIRE(res.results.size() == expected.size());
    for (size_t r = 0; r < expected.size(); ++r) {
      INFO(cname << " T " << steps << " robot " << r);
      const TrainResult &got = res.results[r];
      REQUIRE(got.valid);
      double want = expected[r]["loss"];
      CHECK(test::close(got.loss, want, 1e-8, 1e-14));
      auto g = paramSetToJson(got.grad);
      for (const char *key : {"w1", "b1", "w2", "b2"}) {
        ParamSet e = parseParamsJson(
            nlohmann::json{{"params", {{{key, expected[r]["grad"][key]}}}}}.dump())[0];
        const auto &ge = e.at(key).data, &gg = got.grad.at(key).data;
        REQUIRE(ge.size() == gg.size());
        test::Gap gap;
        test::widen(gap, ge, gg);
        INFO(key << ": max |diff| " << gap.worst << " of max |grad| " << gap.scale);
        CHECK(gap.worst <= 1e-6 * gap.scale);
      }
    }
  }
}

} // namespace

TEST_CASE("simulate reproduces the ELDiR vectors (interpreter, T = 100)", "[vectors]") {
  check(codegen::BackendKind::Interp, 100, 0);
  check(codegen::BackendKind::Interp, 100, 7);
}

TEST_CASE("simulate reproduces the ELDiR vectors (CPU back end, T = 1000)", "[vectors]") {
  check(codegen::BackendKind::Cpu, 1000, 0);
}

TEST_CASE("simulate reproduces the ELDiR vectors (CUDA back end where a GPU exists)",
          "[vectors][cuda]") {
  check(codegen::BackendKind::Cuda, 100, 0);
}
