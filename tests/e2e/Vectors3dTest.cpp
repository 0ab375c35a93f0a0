// The 3D reference vectors (tests/data/reference3d): the stdlib's 3D physics
// (mass_spring3_noslip / _friction in ELDiR's world, mass_spring_fang3 in
// Fang's), ELDiR's MLP controller and displacement loss, compiled by evoc,
// reproduce the losses (1e-8 relative) and gradients (1e-6 of the largest
// entry) of the independent PyTorch implementation in
// tests/reference/mass_spring3_reference.py on six random cube-cell robots
// at T = 1000 on the CPU back end, and on the two smallest at T = 100 on the
// interpreter; and the interpreter and the CPU back end agree with each
// other.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/JsonIO.h"
#include "core/Train.h"
#include "driver/Session.h"

using namespace evoc;

namespace {

const std::string kDir = std::string(EVOC_SOURCE_DIR) + "/tests/data/reference3d/";

nlohmann::json readJson(const std::string &path) {
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

/// The program and physics of each model of the reference.
driver::CommonOptions programOf(const std::string &model, int steps) {
  driver::CommonOptions opts;
  opts.check.ignoreEnv = true;
  opts.file = kDir + (model == "fang" ? "fang3d.evo" : "eldir3d.evo");
  opts.check.overrides = {{"world.steps", std::to_string(steps)}};
  if (model != "fang")
    opts.check.overrides.push_back({"world.physics", "mass_spring3_" + model});
  return opts;
}

/// Losses and gradients of the robots `which` (all when empty) with `backend`.
runtime::SimResult simulate(const std::string &backend, const std::string &model, int steps,
                            const std::vector<size_t> &which) {
  driver::Session s(programOf(model, steps), backend);
  REQUIRE(s.ok());
  auto allRobots = runtime::readRobotsFile(kDir + "robots.json", 3);
  auto allParams = runtime::readParamsFile(kDir + "params.json");
  REQUIRE(allParams.size() == allRobots.size());
  std::vector<runtime::Robot> robots;
  std::vector<runtime::ParamSet> params;
  for (size_t i = 0; i < allRobots.size(); ++i)
    if (which.empty() || std::count(which.begin(), which.end(), i)) {
      robots.push_back(allRobots[i]);
      params.push_back(allParams[i]);
    }
  runtime::SimOptions so = s.trainOptions();
  so.iterations = 0;
  so.threads = 2;
  auto r = runtime::simulate(s.module(), s.executable(), robots, params, so);
  REQUIRE(r.results.size() == robots.size());
  return r;
}

/// Checks `backend` against expected_<model>_T<steps>.json.
void checkVectors(const std::string &backend, const std::string &model, int steps,
                  const std::vector<size_t> &which = {}) {
  auto expected =
      readJson(kDir + "expected_" + model + "_T" + std::to_string(steps) + ".json")["results"];
  auto r = simulate(backend, model, steps, which);
  for (size_t k = 0; k < r.results.size(); ++k) {
    const size_t i = which.empty() ? k : which[k];
    INFO(backend << " " << model << " T=" << steps << " robot " << i);
    const auto &got = r.results[k];
    REQUIRE(got.valid);
    const double want = expected[i]["loss"].get<double>();
    CHECK(std::abs(got.loss - want) <= 1e-8 * std::abs(want));
    std::vector<double> all;
    flatten(expected[i]["grad"], all);
    double scale = 0;
    for (double x : all)
      scale = std::max(scale, std::abs(x));
    REQUIRE(scale > 0);
    for (const char *name : {"w1", "b1", "w2", "b2"}) {
      INFO("gradient " << name);
      std::vector<double> ref;
      flatten(expected[i]["grad"][name], ref);
      const auto &g = got.grad.at(name).data;
      REQUIRE(g.size() == ref.size());
      double worst = 0;
      for (size_t e = 0; e < ref.size(); ++e)
        worst = std::max(worst, std::abs(g[e] - ref[e]));
      CHECK(worst <= 1e-6 * scale);
    }
  }
}

} // namespace

TEST_CASE("3D reference vectors, T = 1000, CPU back end", "[vectors][3d][cpu]") {
  for (const char *model : {"noslip", "friction", "fang"})
    checkVectors("cpu", model, 1000);
}

TEST_CASE("3D reference vectors, T = 100, interpreter, the two smallest robots (12 and 16 "
          "points)",
          "[vectors][3d][interp]") {
  for (const char *model : {"noslip", "friction", "fang"})
    checkVectors("interp", model, 100, {0, 1});
}

TEST_CASE("3D physics: the interpreter and the CPU back end agree (T = 100)",
          "[vectors][3d][interp][cpu]") {
  for (const char *model : {"noslip", "friction", "fang"}) {
    auto a = simulate("interp", model, 100, {0, 1, 2});
    auto b = simulate("cpu", model, 100, {0, 1, 2});
    for (size_t k = 0; k < a.results.size(); ++k) {
      INFO(model << " robot " << k);
      REQUIRE(a.results[k].valid);
      REQUIRE(b.results[k].valid);
      CHECK(std::abs(a.results[k].loss - b.results[k].loss) <= 1e-12 * std::abs(a.results[k].loss));
      for (const auto &[name, t] : a.results[k].grad) {
        INFO("gradient " << name);
        const auto &u = t.data, &w = b.results[k].grad.at(name).data;
        REQUIRE(u.size() == w.size());
        double scale = 0, worst = 0;
        for (size_t e = 0; e < u.size(); ++e) {
          scale = std::max(scale, std::abs(u[e]));
          worst = std::max(worst, std::abs(u[e] - w[e]));
        }
        CHECK(worst <= 1e-10 * scale);
      }
    }
  }
}
