// The shape of a terrain ground, shared by the checker (which reads it), the
// IR generator (which lowers the physics' ground_* built-ins over it) and the
// runtime (which rests a body on it and draws it): a 2D profile of (x, height)
// rows or a 3D height field on a grid. Flat ground is the empty shape.
#pragma once

#include <cstddef>
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

/// A terrain world's ground: a profile in 2D, a height field in 3D; both
/// empty on flat ground.
struct GroundShape {
  TerrainProfile profile;
  HeightField field;

  bool empty() const { return profile.empty() && field.empty(); }
  /// The height under a point of a `dim`-dimensional body (its horizontal
  /// coordinates are all but the last); `flat` when there is no terrain.
  double heightUnder(const double *p, int dim, double flat) const {
    if (dim == 2 && !profile.empty())
      return profileHeightAt(profile, p[0]);
    if (dim == 3 && !field.empty())
      return fieldHeightAt(field, p[0], p[1]);
    return flat;
  }
};

} // namespace evoc
