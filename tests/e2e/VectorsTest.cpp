// The reference vectors: examples/eldir.evo (its physics, controller and
// loss, compiled by evoc) must reproduce independently computed losses (1e-8
// relative) and gradients (1e-6 of the largest entry), both contact models,
// on every back end present. Two sets: ../shared/testdata/eldir-vectors (two
// robots) and tests/data/eldir-extra (six random lattice robots of 4 to 45
// points, one on the paper's 13x22 lattice), the latter computed by the
// independent PyTorch implementation in tests/reference/eldir_reference.py
// (see tests/data/eldir-extra/README.md).
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <functional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "JsonFiles.h"
#include "core/JsonIO.h"
#include "core/Train.h"
#include "driver/Session.h"

using namespace evoc;

namespace {

const std::string kShared = std::string(EVOC_SHARED_DIR) + "/testdata/eldir-vectors/";
const std::string kExtra = std::string(EVOC_SOURCE_DIR) + "/tests/data/eldir-extra/";

using test::flatten;
using test::readJson;

/// Largest |entry| over all of a robot's expected gradient tensors.
double largestEntry(const nlohmann::json &grad) {
  std::vector<double> flat;
  flatten(grad, flat);
  double m = 0;
  for (double x : flat)
    m = std::max(m, std::abs(x));
  return m;
}

/// Largest |got - want| over one gradient tensor (row-major, as written).
double largestDiff(const nlohmann::json &want, const runtime::ParamTensor &got) {
  std::vector<double> flat;
  flatten(want, flat);
  REQUIRE(flat.size() == got.data.size());
  double d = 0;
  for (size_t i = 0; i < flat.size(); ++i)
    d = std::max(d, std::abs(flat[i] - got.data[i]));
  return d;
}

/// Simulates the robots `which` (all when empty) of the vector set in `dir`
/// with `backend`, contact `contact` and `steps` states, and checks them
/// against its expected_<contact>_T<steps>.json.
void checkVectors(const std::string &dir, const std::string &backend, const std::string &contact,
                  int steps, const std::vector<size_t> &which = {}) {
  driver::CommonOptions opts;
  opts.file = std::string(EVOC_SOURCE_DIR) + "/examples/eldir.evo";
  opts.check.ignoreEnv = true;
  opts.check.overrides = {{"world.physics", "mass_spring_" + contact},
                          {"world.steps", std::to_string(steps)}};
  driver::Session s(opts, backend);
  REQUIRE(s.ok());
  auto allRobots = runtime::readRobotsFile(dir + "robots.json", 2);
  auto allParams = runtime::readParamsFile(dir + "params.json");
  auto allExpected =
      readJson(dir + "expected_" + contact + "_T" + std::to_string(steps) + ".json")["results"];
  REQUIRE(!allRobots.empty());
  REQUIRE(allParams.size() == allRobots.size());
  REQUIRE(allExpected.size() == allRobots.size());

  std::vector<size_t> idx = which;
  if (idx.empty())
    for (size_t i = 0; i < allRobots.size(); ++i)
      idx.push_back(i);
  std::vector<runtime::Robot> robots;
  std::vector<runtime::ParamSet> params;
  for (size_t i : idx) {
    REQUIRE(i < allRobots.size());
    robots.push_back(allRobots[i]);
    params.push_back(allParams[i]);
  }

  runtime::SimOptions so = s.trainOptions();
  so.iterations = 0;
  so.threads = 2;
  auto r = runtime::simulate(s.module(), s.executable(), robots, params, so);
  REQUIRE(r.results.size() == idx.size());
  for (size_t k = 0; k < idx.size(); ++k) {
    const auto &expected = allExpected[idx[k]];
    INFO(dir << ": " << backend << " " << contact << " T=" << steps << " robot " << idx[k]);
    const auto &got = r.results[k];
    REQUIRE(got.valid);
    double want = expected["loss"].get<double>();
    CHECK(std::abs(got.loss - want) <= 1e-8 * std::abs(want));
    double scale = largestEntry(expected["grad"]);
    REQUIRE(scale > 0);
    for (const char *name : {"w1", "b1", "w2", "b2"}) {
      INFO("gradient " << name);
      REQUIRE(got.grad.count(name));
      CHECK(largestDiff(expected["grad"][name], got.grad.at(name)) <= 1e-6 * scale);
    }
  }
}

} // namespace

TEST_CASE("eldir vectors, T = 100, interpreter", "[vectors][interp]") {
  checkVectors(kShared, "interp", "noslip", 100);
  checkVectors(kShared, "interp", "friction", 100);
}

TEST_CASE("eldir vectors, T = 100 and 1000, CPU back end", "[vectors][cpu]") {
  for (const char *contact : {"noslip", "friction"})
    for (int steps : {100, 1000})
      checkVectors(kShared, "cpu", contact, steps);
}

TEST_CASE("extra eldir vectors, T = 100 and 1000, CPU back end", "[vectors][extra][cpu]") {
  for (const char *contact : {"noslip", "friction"})
    for (int steps : {100, 1000})
      checkVectors(kExtra, "cpu", contact, steps);
}

TEST_CASE("extra eldir vectors, T = 100, interpreter, one small robot",
          "[vectors][extra][interp]") {
  // Robot 0: 8 points, 13 springs (9 actuated). The interpreter is slow, so
  // only this one at T = 100.
  checkVectors(kExtra, "interp", "noslip", 100, {0});
  checkVectors(kExtra, "interp", "friction", 100, {0});
}
