// A robot's phenotype: the points and springs a body expands to. Bodies are
// data, not code (ARCHITECTURE.md): this is what kernels are run over.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace evoc::runtime {

/// One spring as SCIENCE.md stores it: endpoints a, b (indices into the
/// robot's points), rest length, stiffness, actuation amplitude.
struct Spring {
  int a = 0, b = 0;
  double rest = 0, stiffness = 0, actuation = 0;
};

/// A mass-spring robot. `dim` is 2 or 3; point i's coordinates are
/// points[i * dim + c].
struct Robot {
  int dim = 2;
  std::vector<double> points;
  std::vector<Spring> springs;

  int numPoints() const { return dim == 0 ? 0 : int(points.size()) / dim; }
  int numSprings() const { return int(springs.size()); }
};

/// A terrain ground's (x, height) rows, x increasing (empty: flat ground).
using GroundProfile = std::vector<std::pair<double, double>>;

/// The profile's height at x: linear between rows, flat beyond the ends
/// (as the physics' ground_height lowers it).
inline double groundHeightAt(const GroundProfile &p, double x) {
  size_t i = 0;
  while (i + 1 < p.size() && x >= p[i + 1].first)
    ++i;
  if (x < p[0].first || i + 1 == p.size())
    return p[i].second;
  double s = (p[i + 1].second - p[i].second) / (p[i + 1].first - p[i].first);
  return p[i].second + s * (x - p[i].first);
}

} // namespace evoc::runtime
