// A robot in ROBOTS.json's entry format, written by both the runtime
// (`evoc sim`'s files) and the evolution engine (population.json, best.json),
// which does not link the runtime core: header only.
#pragma once

#include "core/Robot.h"

#include <nlohmann/json.hpp>

namespace evoc::runtime {

/// {"points": [[x, y(, z)], ...], "springs": [[a, b, rest, stiffness,
/// actuation], ...]}, and for a particle body "actuators": [id per point].
inline nlohmann::json robotToJson(const Robot &r) {
  nlohmann::json pts = nlohmann::json::array(), springs = nlohmann::json::array();
  for (int i = 0; i < r.numPoints(); ++i) {
    nlohmann::json p = nlohmann::json::array();
    for (int c = 0; c < r.dim; ++c)
      p.push_back(r.points[size_t(i * r.dim + c)]);
    pts.push_back(p);
  }
  for (const auto &s : r.springs)
    springs.push_back({s.a, s.b, s.rest, s.stiffness, s.actuation});
  nlohmann::json j = {{"points", pts}, {"springs", springs}};
  if (!r.actuators.empty())
    j["actuators"] = r.actuators;
  return j;
}

} // namespace evoc::runtime
