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

} // namespace evoc::test
