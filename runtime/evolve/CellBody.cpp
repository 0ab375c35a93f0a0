// CellBody: a fixed body of square cells, built once, behind BodyModel.
#include "evolve/CellBody.h"

#include "support/Error.h"

#include <array>
#include <cmath>
#include <map>
#include <set>
#include <utility>

namespace evoc::evolve {

namespace {

/// The one genotype of a fixed body: nothing varies.
struct CellGenome : Genome {};

const char *templateName(body::CellTemplate t) {
  switch (t) {
  case body::CellTemplate::None:
    return "none";
  case body::CellTemplate::Vertical:
    return "vertical";
  case body::CellTemplate::Horizontal:
    return "horizontal";
  case body::CellTemplate::Diagonal:
    return "diagonal";
  case body::CellTemplate::All:
    return "all";
  }
  return "none";
}

/// Which of a cell's springs ab, ac, ad, bc, bd, cd the template actuates.
std::array<bool, 6> templateMask(body::CellTemplate t) {
  switch (t) {
  case body::CellTemplate::None:
    return {false, false, false, false, false, false};
  case body::CellTemplate::Vertical:
    return {true, false, false, false, false, true};
  case body::CellTemplate::Horizontal:
    return {false, true, false, false, true, false};
  case body::CellTemplate::Diagonal:
    return {false, false, true, true, false, false};
  case body::CellTemplate::All:
    return {true, true, true, true, true, true};
  }
  return {};
}

} // namespace

runtime::Robot buildCellRobot(const body::CellBodySpec &spec,
                              std::vector<std::array<int, 4>> *corners) {
  if (spec.dim != 2 || spec.origin.size() != 2)
    throw Error("body '" + spec.name + "': fixed bodies of square cells are 2D only");
  if (spec.cells.empty())
    throw Error("body '" + spec.name + "' has no cells");
  if (!(spec.edge > 0) || !(spec.stiffness > 0) || !(spec.actuation >= 0))
    throw Error("body '" + spec.name +
                "': edge and stiffness must be positive and actuation not negative");
  runtime::Robot r;
  r.dim = 2;
  std::map<std::pair<int, int>, int> pointOf;
  auto point = [&](int i, int j) {
    auto [it, fresh] = pointOf.emplace(std::make_pair(i, j), r.numPoints());
    if (fresh) {
      r.points.push_back(spec.origin[0] + spec.edge * i);
      r.points.push_back(spec.origin[1] + spec.edge * j);
    }
    return it->second;
  };
  std::set<std::pair<int, int>> made; // (min, max) endpoints of every spring so far
  std::set<std::pair<int, int>> cells;
  for (const auto &c : spec.cells) {
    if (!cells.emplace(c.i, c.j).second)
      throw Error("body '" + spec.name + "': cell (" + std::to_string(c.i) + ", " +
                  std::to_string(c.j) + ") is given twice");
    const int a = point(c.i, c.j), b = point(c.i, c.j + 1), cc = point(c.i + 1, c.j),
              d = point(c.i + 1, c.j + 1);
    if (corners)
      corners->push_back({a, b, cc, d});
    const std::pair<int, int> order[6] = {{a, b}, {a, cc}, {a, d}, {b, cc}, {b, d}, {cc, d}};
    const std::array<bool, 6> actuated = templateMask(c.actuated);
    for (int k = 0; k < 6; ++k) {
      auto [p, q] = order[k];
      if (!made.emplace(std::min(p, q), std::max(p, q)).second)
        continue;
      runtime::Spring s;
      s.a = p;
      s.b = q;
      const double dx = r.points[size_t(2 * p)] - r.points[size_t(2 * q)];
      const double dy = r.points[size_t(2 * p + 1)] - r.points[size_t(2 * q + 1)];
      s.rest = std::sqrt(dx * dx + dy * dy);
      s.stiffness = spec.stiffness;
      s.actuation = actuated[size_t(k)] ? spec.actuation : 0.0;
      r.springs.push_back(s);
    }
  }
  return r;
}

CellBody::CellBody(body::CellBodySpec spec, double groundY)
    : spec_(std::move(spec)), groundY_(groundY), genome_(std::make_shared<CellGenome>()) {
  std::vector<std::array<int, 4>> corners;
  robot_ = buildCellRobot(spec_, &corners);
  for (const auto &[a, b, c, d] : corners)
    outlines_.push_back({"cell", {a, c, d, b}}); // around the square
}

GenomePtr CellBody::sample(EvoRng &) const { return genome_; }

Variation CellBody::vary(const Genome &, const std::vector<const Genome *> &, EvoRng &) const {
  throw Error("body '" + spec_.name +
              "' is a fixed body: it does not evolve, so it has no variation to apply");
}

Phenotype CellBody::express(const Genome &) const {
  Phenotype p;
  p.robot = robot_;
  for (int i = 0; i < robot_.numPoints(); ++i)
    p.pointKeys.push_back(uint64_t(i));
  for (int i = 0; i < robot_.numSprings(); ++i)
    p.springKeys.push_back(uint64_t(i));
  p.outlines = outlines_;
  return p;
}

nlohmann::json CellBody::toJson(const Genome &) const {
  return {{"kind", "cells"}, {"body", spec_.name}};
}

GenomePtr CellBody::fromJson(const nlohmann::json &j) const {
  if (!j.is_object() || !j.contains("kind") || j["kind"] != "cells")
    throw Error("a fixed body's genome must be {\"kind\": \"cells\", ...}; field 'kind' is " +
                (j.is_object() && j.contains("kind") ? j["kind"].dump() : std::string("missing")));
  return genome_;
}

nlohmann::json CellBody::fingerprint() const {
  nlohmann::json cells = nlohmann::json::array();
  for (const auto &c : spec_.cells)
    cells.push_back({c.i, c.j, templateName(c.actuated)});
  return {{"kind", "cells"},        {"name", spec_.name},           {"edge", spec_.edge},
          {"origin", spec_.origin}, {"stiffness", spec_.stiffness}, {"actuation", spec_.actuation},
          {"cells", cells}};
}

} // namespace evoc::evolve
