// The libm-free logarithm and normal sampler of support/Xoshiro.h. Built
// with -ffp-contract=off: no FMA changes a rounding on machines that have it.
#include "support/Xoshiro.h"

#include <cmath>

namespace evoc {

// ln(x) = e * ln 2 + 2 * atanh(u), u = (m - 1) / (m + 1), m in [sqrt(1/2),
// sqrt(2)), so |u| < 0.172 and 20 odd terms reach double precision. frexp
// and ldexp are exact; only IEEE +, *, / are used.
double portableLog(double x) {
  int e = 0;
  double m = std::frexp(x, &e); // x = m * 2^e, m in [0.5, 1)
  if (m < 0.70710678118654752440) {
    m *= 2;
    e -= 1;
  }
  double u = (m - 1) / (m + 1), u2 = u * u;
  double term = u, sum = 0;
  for (int k = 1; k <= 41; k += 2) {
    sum += term / k;
    term *= u2;
  }
  return double(e) * 0.69314718055994530942 + 2 * sum;
}

std::pair<double, double> normalPair(Xoshiro256 &rng) {
  for (;;) {
    double u = 2 * rng.uniform() - 1, v = 2 * rng.uniform() - 1;
    double s = u * u + v * v;
    if (s >= 1 || s == 0)
      continue;
    double f = std::sqrt(-2 * portableLog(s) / s); // sqrt is IEEE-exact
    return {u * f, v * f};
  }
}

} // namespace evoc
