// Reading the reference vectors' JSON files in the end-to-end tests.
#pragma once

#include <catch2/catch.hpp>

#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace evoc::test {

/// The JSON document at `path` (the test fails when it cannot be read).
inline nlohmann::json readJson(const std::string &path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

/// Every number of `j` (arrays and objects, depth first) appended to `out`.
inline void flatten(const nlohmann::json &j, std::vector<double> &out) {
  if (j.is_array() || j.is_object()) {
    for (const auto &x : j)
      flatten(x, out);
    return;
  }
  out.push_back(j.get<double>());
}

} // namespace evoc::test
