// The reference vectors of ../shared/testdata/eldir-vectors: examples/eldir.evo
// (its physics, controller and loss, compiled by evoc) must reproduce the
// independently computed losses and gradients, on every back end present.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "driver/Session.h"
#include "core/JsonIO.h"
#include "core/Train.h"

using namespace evoc;

namespace {

const std::string kVectors = std::string(EVOC_SHARED_DIR) + "/testdata/eldir-vectors/";

nlohmann::json readJson(const std::string &path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

/// Largest |entry| over all of a robot's expected gradient tensors.
double maxAbs(const nlohmann::json &j) {
  if (j.is_array()) {
    double m = 0;
    for (const auto &x : j)
      m = std::max(m, maxAbs(x));
    return m;
  }
  if (j.is_object()) {
    double m = 0;
    for (const auto &[k, v] : j.items())
      m = std::max(m, maxAbs(v));
    return m;
  }
  return std::abs(j.get<double>());
}

/// Largest |got - want| over nested arrays.
double maxDiff(const nlohmann::json &want, const runtime::ParamTensor &got) {
  std::vector<double> flat;
  std::function<void(const nlohmann::json &)> walk = [&](const nlohmann::json &j) {
    if (j.is_array())
      for (const auto &x : j)
        walk(x);
    else
      flat.push_back(j.get<double>());
  };
  walk(want);
  REQUIRE(flat.size() == got.data.size());
  double d = 0;
  for (size_t i = 0; i < flat.size(); ++i)
    d = std::max(d, std::abs(flat[i] - got.data[i]));
  return d;
}

void checkVectors(const std::string &backend, const std::string &contact, int steps) {
  driver::CommonOptions opts;
  opts.file = std::string(EVOC_SOURCE_DIR) + "/examples/eldir.evo";
  opts.check.ignoreEnv = true;
  opts.check.overrides = {{"world.physics", "mass_spring_" + contact},
                          {"world.steps", std::to_string(steps)}};
  driver::Session s(opts, backend);
  REQUIRE(s.ok());
  auto robots = runtime::readRobotsFile(kVectors + "robots.json", 2);
  auto params = runtime::readParamsFile(kVectors + "params.json");
  runtime::SimOptions so = s.trainOptions();
  so.iterations = 0;
  so.threads = 2;
  auto r = runtime::simulate(s.module(), s.executable(), robots, params, so);
  auto expected = readJson(kVectors + "expected_" + contact + "_T" + std::to_string(steps) +
                           ".json")["results"];
  REQUIRE(r.results.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO(backend << " " << contact << " T=" << steps << " robot " << i);
    const auto &got = r.results[i];
    REQUIRE(got.valid);
    double want = expected[i]["loss"].get<double>();
    CHECK(std::abs(got.loss - want) <= 1e-8 * std::abs(want));
    double scale = maxAbs(expected[i]["grad"]);
    for (const char *k : {"w1", "b1", "w2", "b2"}) {
      INFO("gradient " << k);
      REQUIRE(got.grad.count(k));
      CHECK(maxDiff(expected[i]["grad"][k], got.grad.at(k)) <= 1e-6 * scale);
    }
  }
}

} // namespace

TEST_CASE("eldir vectors, T = 100, interpreter", "[vectors][interp]") {
  checkVectors("interp", "noslip", 100);
  checkVectors("interp", "friction", 100);
}

TEST_CASE("eldir vectors, T = 100 and 1000, CPU back end", "[vectors][cpu]") {
  for (const char *contact : {"noslip", "friction"})
    for (int steps : {100, 1000})
      checkVectors("cpu", contact, steps);
}
