// Reference vectors and the check against them (ReferenceVectors.h).
#include "ReferenceVectors.h"

#include "Close.h"
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "JsonFiles.h"
#include "app/Session.h"
#include "core/JsonIO.h"

namespace evoc::test {

namespace {

/// Largest |entry| of a JSON tree of numbers.
double largestEntry(const nlohmann::json &j) {
  std::vector<double> flat;
  flatten(j, flat);
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

} // namespace

app::CommonOptions programFile(const std::string &dir, const std::string &file, int steps,
                               const std::string &physics) {
  app::CommonOptions opts;
  opts.check.ignoreEnv = true;
  opts.file = dir + file;
  opts.check.overrides = {{"world.steps", std::to_string(steps)}};
  if (!physics.empty())
    opts.check.overrides.push_back({"world.physics", physics});
  return opts;
}

runtime::SimResult simulateReference(const Reference &ref, const std::string &backend,
                                     const std::string &model, int steps,
                                     const std::vector<size_t> &which) {
  app::Session s(ref.program(model, steps), backend);
  REQUIRE(s.ok());
  auto allRobots = runtime::readRobotsFile(ref.dir + ref.robots, ref.dim);
  auto allParams = runtime::readParamsFile(ref.dir + ref.params);
  REQUIRE(!allRobots.empty());
  REQUIRE(allParams.size() == allRobots.size());
  for (size_t i : which)
    REQUIRE(i < allRobots.size());
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

void checkReference(const Reference &ref, const std::string &backend, const std::string &model,
                    int steps, const std::vector<size_t> &which) {
  auto expected =
      readJson(ref.dir + ref.expected + model + "_T" + std::to_string(steps) + ".json")["results"];
  auto r = simulateReference(ref, backend, model, steps, which);
  if (which.empty())
    REQUIRE(expected.size() == r.results.size());
  for (size_t k = 0; k < r.results.size(); ++k) {
    const size_t i = which.empty() ? k : which[k];
    INFO(ref.dir << ": " << backend << " " << model << " T=" << steps << " robot " << i);
    REQUIRE(i < expected.size());
    const auto &got = r.results[k];
    REQUIRE(got.valid);
    const double want = expected[i]["loss"].get<double>();
    CHECK(test::close(got.loss, want, ref.lossTol, 1e-14));
    const double scale = largestEntry(expected[i]["grad"]);
    REQUIRE(scale > 0);
    for (const char *name : {"w1", "b1", "w2", "b2"}) {
      INFO("gradient " << name);
      REQUIRE(got.grad.count(name));
      CHECK(largestDiff(expected[i]["grad"][name], got.grad.at(name)) <= ref.gradTol * scale);
    }
  }
}

} // namespace evoc::test
