// Small bodies the end-to-end tests share.
#pragma once

#include <cmath>

#include "core/Robot.h"

namespace evoc::test {

/// A 2 x 3 ladder of points 0.05 apart from (x0, y0): a small body that
/// walks and hops (actuated rungs and lower rails, one braced diagonal).
inline runtime::Robot ladder(double x0, double y0) {
  runtime::Robot r;
  r.dim = 2;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j) {
      r.points.push_back(x0 + 0.05 * i);
      r.points.push_back(y0 + 0.05 * j);
    }
  auto add = [&](int a, int b, double act) {
    double dx = r.points[2 * a] - r.points[2 * b], dy = r.points[2 * a + 1] - r.points[2 * b + 1];
    r.springs.push_back({a, b, std::sqrt(dx * dx + dy * dy), 3e3, act});
  };
  for (int i = 0; i < 3; ++i)
    add(2 * i, 2 * i + 1, 0.2);
  for (int i = 0; i + 1 < 3; ++i) {
    add(2 * i, 2 * i + 2, 0.2);
    add(2 * i + 1, 2 * i + 3, 0);
    add(2 * i, 2 * i + 3, 0);
    add(2 * i + 1, 2 * i + 2, 0.1);
  }
  return r;
}

/// A cube of 8 points 0.05 apart from corner (x0, y0, z0), a spring between
/// every pair of corners (the 28 of a cube cell), the edges of its bottom
/// face and the vertical edges actuated.
inline runtime::Robot cube(double x0, double y0, double z0) {
  runtime::Robot r;
  r.dim = 3;
  for (int k = 0; k < 8; ++k) {
    r.points.push_back(x0 + 0.05 * (k & 1));
    r.points.push_back(y0 + 0.05 * ((k >> 1) & 1));
    r.points.push_back(z0 + 0.05 * ((k >> 2) & 1));
  }
  for (int a = 0; a < 8; ++a)
    for (int b = a + 1; b < 8; ++b) {
      double d2 = 0;
      for (int c = 0; c < 3; ++c)
        d2 += std::pow(r.points[3 * a + c] - r.points[3 * b + c], 2);
      const bool edge = d2 < 0.05 * 0.05 * 1.01;
      const bool bottom = a < 4 && b < 4, vertical = b - a == 4;
      r.springs.push_back({a, b, std::sqrt(d2), 3e3, edge && (bottom || vertical) ? 0.2 : 0.0});
    }
  return r;
}

} // namespace evoc::test
