// More reference vectors, beside ../shared/testdata/eldir-vectors: six random
// lattice robots of varied sizes (4 to 42 points on a 6x10 lattice, 45 points
// on the paper's 13x22 lattice) in tests/data/eldir-extra, computed by the
// independent PyTorch implementation of SCIENCE.md in
// tests/reference/eldir_reference.py (see that directory's README.md).
// examples/eldir.evo, compiled by evoc, must reproduce their losses (1e-8
// relative) and gradients (1e-6 of the largest entry), both contact models.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <functional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "driver/Session.h"
#include "core/JsonIO.h"
#include "core/Train.h"

using namespace evoc;

namespace {

const std::string kExtra = std::string(EVOC_SOURCE_DIR) + "/tests/data/eldir-extra/";

nlohmann::json readExtraJson(const std::string &path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

void flatten(const nlohmann::json &j, std::vector<double> &out) {
  if (j.is_array() || j.is_object()) {
    for (const auto &x : j)
      flatten(x, out);
    return;
  }
  out.push_back(j.get<double>());
}

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

/// Simulates the robots `which` (all when empty) of the extra set with
/// `backend`, contact `contact` and `steps` states, and checks them against
/// expected_<contact>_T<steps>.json.
void checkExtra(const std::string &backend, const std::string &contact, int steps,
                const std::vector<size_t> &which = {}) {
  driver::CommonOptions opts;
  opts.file = std::string(EVOC_SOURCE_DIR) + "/examples/eldir.evo";
  opts.check.ignoreEnv = true;
  opts.check.overrides = {{"world.physics", "mass_spring_" + contact},
                          {"world.steps", std::to_string(steps)}};
  driver::Session s(opts, backend);
  REQUIRE(s.ok());
  auto allRobots = runtime::readRobotsFile(kExtra + "robots.json", 2);
  auto allParams = runtime::readParamsFile(kExtra + "params.json");
  auto allExpected = readExtraJson(kExtra + "expected_" + contact + "_T" +
                                   std::to_string(steps) + ".json")["results"];
  REQUIRE(allRobots.size() == 6);
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
    INFO(backend << " " << contact << " T=" << steps << " extra robot " << idx[k]);
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

TEST_CASE("extra eldir vectors, T = 100 and 1000, CPU back end", "[vectors][extra][cpu]") {
  for (const char *contact : {"noslip", "friction"})
    for (int steps : {100, 1000})
      checkExtra("cpu", contact, steps);
}

TEST_CASE("extra eldir vectors, T = 100, interpreter, one small robot",
          "[vectors][extra][interp]") {
  // Robot 0: 8 points, 13 springs (9 actuated). The interpreter is slow, so
  // only this one at T = 100.
  checkExtra("interp", "noslip", 100, {0});
  checkExtra("interp", "friction", 100, {0});
}
