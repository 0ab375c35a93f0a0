// The shape of a terrain ground, shared by the checker (which reads it), the
// IR generator (which lowers the physics' ground_* built-ins over it) and the
// runtime (which rests a body on it and draws it): a 2D profile of (x, height)
// rows or a 3D height field on a grid, and the scene's static boxes
// (docs/language.md, "Scenes"). Flat ground without boxes is the empty shape.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <limits>
#include <utility>
#include <vector>

namespace evoc {

/// (x, height) rows, x strictly increasing, at least two: the ground is
/// linear between rows and flat beyond the first and the last.
using TerrainProfile = std::vector<std::pair<double, double>>;

/// Heights on a grid: xs and ys strictly increasing (two or more each),
/// h[j * xs.size() + i] the height at (xs[i], ys[j]). Bilinear in each cell,
/// the edge heights continued (flat across) beyond the grid.
struct HeightField {
  std::vector<double> xs, ys, h;

  bool empty() const { return xs.empty(); }
  size_t nx() const { return xs.size(); }
  size_t ny() const { return ys.size(); }
  double at(size_t i, size_t j) const { return h[j * xs.size() + i]; }
};

/// The cell of a sorted grid line that holds v, and v's fraction across it:
/// the last cell start at or below v (the first below the grid), fraction in
/// [0, 1], 0 below the grid and 1 beyond it.
inline std::pair<size_t, double> gridCell(const std::vector<double> &g, double v) {
  size_t i = 0;
  while (i + 2 < g.size() && v >= g[i + 1])
    ++i;
  if (v < g[i])
    return {i, 0.0};
  double f = (v - g[i]) / (g[i + 1] - g[i]);
  return {i, f > 1 ? 1.0 : f};
}

/// The profile's height at x (as the physics' ground_height lowers it).
inline double profileHeightAt(const TerrainProfile &p, double x) {
  size_t i = 0;
  while (i + 1 < p.size() && x >= p[i + 1].first)
    ++i;
  if (x < p[0].first || i + 1 == p.size())
    return p[i].second;
  double s = (p[i + 1].second - p[i].second) / (p[i + 1].first - p[i].first);
  return p[i].second + s * (x - p[i].first);
}

/// The field's height at (x, y), bilinear.
inline double fieldHeightAt(const HeightField &f, double x, double y) {
  auto [i, u] = gridCell(f.xs, x);
  auto [j, w] = gridCell(f.ys, y);
  double a = f.at(i, j) + u * (f.at(i + 1, j) - f.at(i, j));
  double b = f.at(i, j + 1) + u * (f.at(i + 1, j + 1) - f.at(i, j + 1));
  return a + w * (b - a);
}

/// A box of the scene: lo[k] < hi[k] on each of the world's axes (the last
/// one up; z unused in 2D). Its interior is solid.
struct SceneBox {
  std::array<double, 3> lo{}, hi{};
  /// Its bottom face is a contact face: the box floats above the ground
  /// under it (a box resting on or sunk into the ground is entered only
  /// through its sides and top).
  bool floating = false;

  /// p (dim coordinates) lies strictly inside the box.
  bool contains(const double *p, int dim) const {
    for (int k = 0; k < dim; ++k)
      if (!(p[k] > lo[k] && p[k] < hi[k]))
        return false;
    return true;
  }
};

/// A movable object of the world (docs/language.md, "Objects"): a box that
/// starts at rest between lo and hi and moves without turning; `mass` in
/// point masses.
struct WorldObject {
  std::array<double, 3> lo{}, hi{};
  double mass = 1;
};

/// A world's ground: a terrain profile in 2D, a height field in 3D (both
/// empty on flat ground), the scene's boxes, and the movable objects where
/// they start (the pictures draw them).
struct GroundShape {
  TerrainProfile profile;
  HeightField field;
  std::vector<SceneBox> boxes;
  std::vector<WorldObject> objects;

  bool empty() const {
    return profile.empty() && field.empty() && boxes.empty() && objects.empty();
  }
  /// The height under a point of a `dim`-dimensional body (its horizontal
  /// coordinates are all but the last); `flat` when there is no terrain.
  double heightUnder(const double *p, int dim, double flat) const {
    if (dim == 2 && !profile.empty())
      return profileHeightAt(profile, p[0]);
    if (dim == 3 && !field.empty())
      return fieldHeightAt(field, p[0], p[1]);
    return flat;
  }

  /// The highest ground under the horizontal footprint of `b` (flat at
  /// `flat`): profiles and fields are linear (bilinear) between their rows,
  /// so the highest point is at a footprint corner or on a grid line.
  double highestUnder(const SceneBox &b, int dim, double flat) const {
    auto lines = [](const std::vector<double> &grid, double lo, double hi) {
      std::vector<double> v = {lo, hi};
      for (double g : grid)
        if (g > lo && g < hi)
          v.push_back(g);
      return v;
    };
    std::vector<double> xs, ys = {0};
    if (dim == 2 && !profile.empty()) {
      std::vector<double> rows;
      for (const auto &[x, h] : profile)
        rows.push_back(x);
      xs = lines(rows, b.lo[0], b.hi[0]);
    } else {
      xs = lines(field.xs, b.lo[0], b.hi[0]);
      if (dim == 3)
        ys = lines(field.ys, b.lo[1], b.hi[1]);
    }
    double top = -std::numeric_limits<double>::infinity();
    for (double x : xs)
      for (double y : ys) {
        const double p[2] = {x, y};
        top = std::max(top, heightUnder(p, dim, flat));
      }
    return top;
  }

  /// The smallest lift, at least `lift`, that leaves none of the `n` points
  /// (dim coordinates each, the last one up) strictly inside a box: each
  /// point inside one moves the lift to that box's top, until none is.
  double liftOutOfBoxes(const double *points, int n, int dim, double lift) const {
    for (size_t pass = 0; pass <= boxes.size(); ++pass) {
      bool moved = false;
      for (int i = 0; i < n; ++i) {
        std::array<double, 3> p{};
        std::copy(points + i * dim, points + (i + 1) * dim, p.begin());
        p[dim - 1] += lift;
        for (const SceneBox &b : boxes)
          if (b.contains(p.data(), dim) && b.hi[dim - 1] - points[i * dim + dim - 1] > lift) {
            lift = b.hi[dim - 1] - points[i * dim + dim - 1];
            p[dim - 1] = points[i * dim + dim - 1] + lift;
            moved = true;
          }
      }
      if (!moved)
        break;
    }
    return lift;
  }
};

} // namespace evoc
