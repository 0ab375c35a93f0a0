// Deterministic RNG: xoshiro256** plus a libm-free normal sampler.
#include "core/Rng.h"

#include <cmath>

namespace evoc::runtime {

uint64_t mixSeed(uint64_t a, uint64_t b) {
  uint64_t x = a ^ rotl64(b, 32) ^ 0x6a09e667f3bcc909ULL;
  uint64_t r = splitmix64(x);
  x ^= b;
  return r ^ splitmix64(x);
}

// ln(x) = e * ln 2 + 2 * atanh(u), u = (m - 1) / (m + 1), m in [sqrt(1/2),
// sqrt(2)), so |u| < 0.172 and 20 odd terms reach double precision. frexp
// and ldexp are exact; only IEEE +, *, / are used (this file is built with
// -ffp-contract=off, so no FMA changes the rounding).
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

double Rng::normal() {
  if (haveSpare_) {
    haveSpare_ = false;
    return spare_;
  }
  for (;;) {
    double u = 2 * uniform() - 1, v = 2 * uniform() - 1;
    double s = u * u + v * v;
    if (s >= 1 || s == 0)
      continue;
    double f = std::sqrt(-2 * portableLog(s) / s); // sqrt is IEEE-exact
    spare_ = v * f;
    haveSpare_ = true;
    return u * f;
  }
}

} // namespace evoc::runtime
