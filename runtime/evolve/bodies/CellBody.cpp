// CellBody: a fixed body of square (2D) or cube (3D) cells, built once,
// behind BodyModel.
#include "evolve/bodies/CellBody.h"

#include "support/Error.h"

#include <algorithm>
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
  case body::CellTemplate::Leg:
    return "leg";
  case body::CellTemplate::AlongX:
    return "along_x";
  case body::CellTemplate::AlongY:
    return "along_y";
  }
  return "none";
}

/// A cell's corners as grid offsets (i, j, k), in order: a b c d for a
/// square (k unused), a .. h for a cube (a b c d at j, e f g h at j + 1).
constexpr int kSquare[4][3] = {{0, 0, 0}, {0, 1, 0}, {1, 0, 0}, {1, 1, 0}};
constexpr int kCube[8][3] = {{0, 0, 0}, {0, 0, 1}, {1, 0, 0}, {1, 0, 1},
                             {0, 1, 0}, {0, 1, 1}, {1, 1, 0}, {1, 1, 1}};

/// A cube's faces, corners counter-clockwise seen from outside: bottom,
/// top, front (x + 1), back, left (y + 1), right.
constexpr int kCubeFaces[6][4] = {{0, 4, 6, 2}, {3, 7, 5, 1}, {2, 6, 7, 3},
                                  {1, 5, 4, 0}, {4, 5, 7, 6}, {2, 3, 1, 0}};

/// Every pair of n corners in order (ab, ac, ..., the last two).
std::vector<std::pair<int, int>> allPairs(int n) {
  std::vector<std::pair<int, int>> out;
  for (int p = 0; p < n; ++p)
    for (int q = p + 1; q < n; ++q)
      out.emplace_back(p, q);
  return out;
}

CellShape makeShape(const int (*offsets)[3], int n, std::vector<std::pair<int, int>> springs,
                    std::vector<int> outline) {
  CellShape s;
  for (int q = 0; q < n; ++q)
    s.corners.push_back({offsets[q][0], offsets[q][1], offsets[q][2]});
  s.springs = std::move(springs);
  s.outline = std::move(outline);
  return s;
}

} // namespace

const CellShape &fixedCellShape(int dim) {
  static const CellShape square = makeShape(kSquare, 4, allPairs(4), {0, 2, 3, 1});
  static const CellShape cube = makeShape(kCube, 8, allPairs(8), {});
  return dim == 2 ? square : cube;
}

const CellShape &voxelCellShape(int dim) {
  // The stdlib voxel part's points (0, 0), (1, 0), (1, 1), (0, 1) and
  // springs bottom, right, top, left, then the diagonals.
  static constexpr int corners[4][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}};
  static const CellShape square =
      makeShape(corners, 4, {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {0, 2}, {1, 3}}, {0, 1, 2, 3});
  return dim == 2 ? square : fixedCellShape(3);
}

namespace {

/// A particle body (docs/language.md, "Particle bodies"): each block's
/// particles, the first axis outermost, at origin + lo + (i + 0.5) * w / n
/// (added in that order, as DiffTaichi's layout does), with the block's
/// actuator; no springs.
runtime::Robot buildParticleRobot(const body::CellBodySpec &spec) {
  const int dim = spec.dim;
  if (spec.blocks.empty())
    throw Error("body '" + spec.name + "' has no particle blocks");
  runtime::Robot r;
  r.dim = dim;
  for (const auto &b : spec.blocks) {
    std::vector<int64_t> n(static_cast<size_t>(dim));
    int64_t count = 1;
    for (int k = 0; k < dim; ++k) {
      n[size_t(k)] = spec.particlesAlong(b.size[size_t(k)]);
      if (n[size_t(k)] < 1)
        throw Error("body '" + spec.name + "': a block narrower than its particles' spacing");
      count *= n[size_t(k)];
    }
    std::vector<int64_t> i(static_cast<size_t>(dim));
    for (int64_t e = 0; e < count; ++e) {
      int64_t rest = e;
      for (int k = dim - 1; k >= 0; --k) {
        i[size_t(k)] = rest % n[size_t(k)];
        rest /= n[size_t(k)];
      }
      for (int k = 0; k < dim; ++k) {
        const double step = b.size[size_t(k)] / double(n[size_t(k)]);
        r.points.push_back(b.lo[size_t(k)] + (double(i[size_t(k)]) + 0.5) * step +
                           spec.origin[size_t(k)]);
      }
      r.actuators.push_back(b.actuator);
    }
  }
  return r;
}

} // namespace

runtime::Robot buildCellRobot(const body::CellBodySpec &spec,
                              std::vector<std::vector<int>> *corners, const CellShape *shape) {
  const int dim = spec.dim;
  if (spec.particles && (dim == 2 || dim == 3) && int(spec.origin.size()) == dim)
    return buildParticleRobot(spec);
  if ((dim != 2 && dim != 3) || int(spec.origin.size()) != dim)
    throw Error("body '" + spec.name +
                "': a fixed body is 2D (square cells) or 3D (cube cells), "
                "with an origin of as many numbers");
  if (spec.cells.empty())
    throw Error("body '" + spec.name + "' has no cells");
  if (!(spec.edge > 0) || !(spec.stiffness > 0) || !(spec.actuation >= 0))
    throw Error("body '" + spec.name +
                "': edge and stiffness must be positive and actuation not negative");
  const CellShape &cs = shape ? *shape : fixedCellShape(dim);
  const auto &offsets = cs.corners;
  const int nc = int(offsets.size());
  runtime::Robot r;
  r.dim = dim;
  std::map<std::array<int, 3>, int> pointOf;
  auto point = [&](const std::array<int, 3> &g) {
    auto [it, fresh] = pointOf.emplace(g, r.numPoints());
    if (fresh)
      for (int c = 0; c < dim; ++c)
        r.points.push_back(spec.origin[size_t(c)] + spec.edge * g[size_t(c)]);
    return it->second;
  };
  std::set<std::pair<int, int>> made; // (min, max) endpoints of every spring so far
  std::set<std::array<int, 3>> cells;
  for (const auto &c : spec.cells) {
    // Grid position (i, j) of a square, (i, j, k) of a cube.
    const std::array<int, 3> at{c.i, c.j, dim == 3 ? c.k : 0};
    if (!cells.insert(at).second)
      throw Error("body '" + spec.name + "': cell (" + std::to_string(c.i) + ", " +
                  std::to_string(c.j) + (dim == 3 ? ", " + std::to_string(c.k) : "") +
                  ") is given twice");
    std::vector<int> id(static_cast<size_t>(nc));
    for (int q = 0; q < nc; ++q)
      id[size_t(q)] = point({at[0] + offsets[size_t(q)][0], at[1] + offsets[size_t(q)][1],
                             at[2] + offsets[size_t(q)][2]});
    // The shape's springs in order (a fixed body's: every pair of corners,
    // ab ac ad bc bd cd for a square, ab .. gh for a cube).
    for (const auto &[p, q] : cs.springs) {
      const int a = id[size_t(p)], b = id[size_t(q)];
      if (!made.emplace(std::min(a, b), std::max(a, b)).second)
        continue;
      runtime::Spring s;
      s.a = a;
      s.b = b;
      double d2 = 0;
      bool differs[3] = {false, false, false};
      for (int k = 0; k < dim; ++k) {
        const double d = r.points[size_t(dim * a + k)] - r.points[size_t(dim * b + k)];
        d2 += d * d;
        differs[k] = offsets[size_t(p)][size_t(k)] != offsets[size_t(q)][size_t(k)];
      }
      s.rest = std::sqrt(d2);
      s.stiffness = c.stiffness >= 0 ? c.stiffness : spec.stiffness;
      s.actuation = body::templateActuates(c.actuated, differs, dim)
                        ? (c.actuation >= 0 ? c.actuation : spec.actuation)
                        : 0.0;
      r.springs.push_back(s);
    }
    if (corners)
      corners->push_back(std::move(id));
  }
  return r;
}

std::vector<PartOutline> cellOutlines(int dim, const std::vector<std::vector<int>> &corners,
                                      const std::vector<PartOutline> &kinds,
                                      const CellShape *shape) {
  std::vector<PartOutline> out;
  auto outline = [&](size_t cell, std::vector<int> points) {
    out.push_back({kinds[cell].part, std::move(points), kinds[cell].colour});
  };
  if (dim == 2) {
    const CellShape &cs = shape ? *shape : fixedCellShape(2);
    for (size_t i = 0; i < corners.size(); ++i) {
      std::vector<int> around; // the square's corners in polygon order
      for (int q : cs.outline)
        around.push_back(corners[i][size_t(q)]);
      outline(i, around);
    }
    return out;
  }
  // Cubes: the faces on the body's surface (a face two cells share is inside).
  std::map<std::vector<int>, int> uses;
  auto key = [](std::vector<int> f) {
    std::sort(f.begin(), f.end());
    return f;
  };
  for (const auto &c : corners)
    for (const auto &f : kCubeFaces)
      ++uses[key({c[f[0]], c[f[1]], c[f[2]], c[f[3]]})];
  for (size_t i = 0; i < corners.size(); ++i)
    for (const auto &f : kCubeFaces) {
      const auto &c = corners[i];
      std::vector<int> face{c[f[0]], c[f[1]], c[f[2]], c[f[3]]};
      if (uses[key(face)] == 1)
        outline(i, face);
    }
  return out;
}

CellBody::CellBody(body::CellBodySpec spec, double groundY)
    : spec_(std::move(spec)), groundY_(groundY), genome_(std::make_shared<CellGenome>()) {
  std::vector<std::vector<int>> corners;
  robot_ = buildCellRobot(spec_, &corners);
  outlines_ =
      cellOutlines(spec_.dim, corners, std::vector<PartOutline>(corners.size(), {"cell", {}, ""}));
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
    cells.push_back(spec_.dim == 2 ? nlohmann::json{c.i, c.j, templateName(c.actuated)}
                                   : nlohmann::json{c.i, c.j, c.k, templateName(c.actuated)});
  return {{"kind", "cells"},        {"name", spec_.name},           {"edge", spec_.edge},
          {"origin", spec_.origin}, {"stiffness", spec_.stiffness}, {"actuation", spec_.actuation},
          {"cells", cells}};
}

} // namespace evoc::evolve
