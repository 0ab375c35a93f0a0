// Test support: the ELDiR reference vectors (docs/evolution.md, "The
// reference vectors": robots, parameters, and the expected loss and
// gradients at T = 100 and 1000), loaded into interpreter Data and checked
// against a rollout's.
#pragma once

#include "Close.h"
#include "GradCheck.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

namespace evoc::test {

/// The vectors' file `name` ("robots.json", "expected_noslip_T100.json").
inline nlohmann::json eldirVectors(const std::string &name) {
  std::ifstream f(std::string(EVOC_SHARED_DIR) + "/testdata/eldir-vectors/" + name);
  REQUIRE(f.good());
  return nlohmann::json::parse(f);
}

/// A JSON vector, or a matrix row after row.
inline std::vector<double> flat(const nlohmann::json &j) {
  std::vector<double> out;
  for (const auto &row : j) {
    if (row.is_array())
      for (const auto &v : row)
        out.push_back(v);
    else
      out.push_back(row);
  }
  return out;
}

/// Data for `m` holding one robot of robots.json (points; springs as a, b,
/// rest, stiffness, actuation) and its parameters of params.json.
inline Data eldirVectorsData(const ir::Module &m, const nlohmann::json &robot,
                             const nlohmann::json &params) {
  const auto n = int64_t(robot["points"].size()), ns = int64_t(robot["springs"].size());
  Data d(m, {{"point", n}, {"spring", ns}});
  for (int64_t i = 0; i < n; ++i)
    for (int c = 0; c < 2; ++c)
      d.F("point.x")[size_t(2 * i + c)] = robot["points"][i][c];
  const char *cols[] = {"spring.rest", "spring.stiffness", "spring.actuation"};
  for (int64_t s = 0; s < ns; ++s) {
    d.I("spring.a")[size_t(s)] = robot["springs"][s][0];
    d.I("spring.b")[size_t(s)] = robot["springs"][s][1];
    for (int c = 0; c < 3; ++c)
      d.F(cols[c])[size_t(s)] = robot["springs"][s][2 + c];
  }
  for (const char *k : {"w1", "b1", "w2", "b2"})
    d.F(std::string("mlp.") + k) = flat(params[k]);
  return d;
}

/// The loss L (to 1e-8) and the parameters' gradients in d's mlp.*.adj
/// buffers (to 1e-6 of the largest entry) against one expected result.
inline void checkEldirResult(double L, Data &d, const nlohmann::json &expected) {
  CHECK(close(L, double(expected["loss"]), 1e-8, 1e-14));
  for (const char *k : {"w1", "b1", "w2", "b2"}) {
    INFO(k);
    std::vector<double> ref = flat(expected["grad"][k]);
    const auto &g = d.F(std::string("mlp.") + k + ".adj");
    REQUIRE(g.size() == ref.size());
    double largest = 0, worst = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
      largest = std::max(largest, std::fabs(ref[i]));
      worst = std::max(worst, std::fabs(g[i] - ref[i]));
    }
    CHECK(worst <= 1e-6 * largest);
  }
}

} // namespace evoc::test
