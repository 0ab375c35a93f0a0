// Deterministic RNG: xoshiro256** plus a libm-free normal sampler.
#include "core/Rng.h"

#include <cmath>

namespace evoc::runtime {

namespace {
uint64_t splitmix(uint64_t &x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
} // namespace

uint64_t mixSeed(uint64_t a, uint64_t b) {
  uint64_t x = a ^ rotl(b, 32) ^ 0x6a09e667f3bcc909ULL;
  uint64_t r = splitmix(x);
  x ^= b;
  return r ^ splitmix(x);
}

Rng::Rng(uint64_t seed) {
  uint64_t x = seed;
  for (auto &w : s_)
    w = splitmix(x);
}

uint64_t Rng::next() {
  uint64_t result = rotl(s_[1] * 5, 7) * 9;
  uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() { return double(next() >> 11) * 0x1.0p-53; }

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
