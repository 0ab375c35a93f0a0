// The one random-number core of evoc: xoshiro256** seeded by SplitMix64,
// integer-only so its sequence is identical on every platform. The runtime
// (parameter init) and the evolution engine (bodies, mutation) build their
// samplers on it.
#pragma once

#include <array>
#include <cstdint>
#include <utility>

namespace evoc {

/// SplitMix64 step: advances `state` and returns the next mixed word.
inline uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// 64-bit rotate left.
inline uint64_t rotl64(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/// xoshiro256** (Blackman and Vigna).
class Xoshiro256 {
public:
  /// Seeds the four state words from `seed` with SplitMix64.
  explicit Xoshiro256(uint64_t seed) {
    uint64_t sm = seed;
    for (auto &w : s_)
      w = splitmix64(sm);
  }
  /// The next 64 random bits.
  uint64_t next() {
    uint64_t result = rotl64(s_[1] * 5, 7) * 9;
    uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl64(s_[3], 45);
    return result;
  }
  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }

protected:
  std::array<uint64_t, 4> s_{};
};

/// Natural logarithm of x > 0 from +, *, / only (support/Xoshiro.cpp, built
/// without FMA contraction): the same bits on every machine, unlike libm's,
/// within a few ulps of it.
double portableLog(double x);

/// Two independent standard normal draws from `rng`'s uniforms (Marsaglia's
/// polar method on portableLog): the one normal sampler of the runtime and
/// the evolution engine.
std::pair<double, double> normalPair(Xoshiro256 &rng);

} // namespace evoc
