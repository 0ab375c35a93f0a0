// The evolution engine's random stream: xoshiro256** seeded by SplitMix64,
// with a state that can be saved in a checkpoint and restored bit for bit.
#pragma once

#include <array>
#include <cstdint>
#include <string>

namespace evoc::evolve {

/// SplitMix64 step: advances `state` and returns the next mixed word.
inline uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// A well-mixed 64-bit seed for design `id` of a run seeded with `seed`;
/// independent of the evolution stream, so resuming cannot change it.
inline uint64_t designSeed(uint64_t seed, uint64_t id) {
  uint64_t s = seed ^ 0x5eed5eed5eed5eedull;
  splitmix64(s);
  s ^= id * 0xd1b54a32d192ed03ull;
  return splitmix64(s);
}

/// xoshiro256** with integer-only uniform sampling (no libm), so the
/// sequence is identical on every platform.
class EvoRng {
public:
  /// Seeds the four state words from `seed` with SplitMix64.
  explicit EvoRng(uint64_t seed) {
    uint64_t sm = seed;
    for (auto &w : s_)
      w = splitmix64(sm);
  }
  /// The next 64 random bits.
  uint64_t next() {
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
  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }
  /// True with probability p.
  bool bernoulli(double p) { return uniform() < p; }
  /// Uniform integer in [0, n) for n > 0 (rejection sampling, unbiased).
  uint64_t below(uint64_t n) {
    uint64_t limit = ~uint64_t(0) - (~uint64_t(0) % n);
    uint64_t r;
    do
      r = next();
    while (r >= limit);
    return r % n;
  }
  /// The state as 64 hex digits, for checkpoints.
  std::string save() const;
  /// Restores a state written by save(); throws evoc::Error if malformed.
  void restore(const std::string &hex);

  bool operator==(const EvoRng &o) const { return s_ == o.s_; }

private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::array<uint64_t, 4> s_{};
};

} // namespace evoc::evolve
