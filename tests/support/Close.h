// Closeness with a relative tolerance and an absolute floor: the comparisons
// of results across back ends and processors, where a reference that is
// exactly zero may come out as 1e-19 from a kernel that sums in another order
// (other vector widths, FMA contraction), so a purely relative test fails
// on some machines and not on others.
#pragma once

#include <algorithm>
#include <cmath>

namespace evoc::test {

/// |a - b| <= rtol * max(|a|, |b|) + atol; NaN is close only to NaN.
inline bool close(double a, double b, double rtol, double atol) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  return std::fabs(a - b) <= rtol * std::max(std::fabs(a), std::fabs(b)) + atol;
}

/// The largest |a[i] - b[i]| and the largest |a[i]| of two arrays of one size.
struct Gap {
  double worst = 0;
  double scale = 0;
  /// worst <= rtol * scale + atol.
  bool within(double rtol, double atol) const { return worst <= rtol * scale + atol; }
};

/// Adds the entries of `a` (the reference) and `b` to `gap`.
template <class A, class B> void widen(Gap &gap, const A &a, const B &b) {
  for (size_t i = 0; i < a.size(); ++i) {
    gap.scale = std::max(gap.scale, std::fabs(double(a[i])));
    gap.worst = std::max(gap.worst, std::fabs(double(a[i]) - double(b[i])));
  }
}

} // namespace evoc::test
