// The evolution engine's random stream: xoshiro256** seeded by SplitMix64,
// with a state that can be saved in a checkpoint and restored bit for bit.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "support/Xoshiro.h"

namespace evoc::evolve {

using evoc::splitmix64;

/// A well-mixed 64-bit seed for design `id` of a run seeded with `seed`;
/// independent of the evolution stream, so resuming cannot change it.
inline uint64_t designSeed(uint64_t seed, uint64_t id) {
  uint64_t s = seed ^ 0x5eed5eed5eed5eedull;
  splitmix64(s);
  s ^= id * 0xd1b54a32d192ed03ull;
  return splitmix64(s);
}

/// The engine's stream: xoshiro256** (support/Xoshiro.h) with unbiased
/// integer sampling and a state that round-trips through a checkpoint.
class EvoRng : public Xoshiro256 {
public:
  using Xoshiro256::Xoshiro256;
  /// A standard normal draw (support/Xoshiro.h's normalPair; the second of
  /// the pair is dropped, so that the state stays the four words a
  /// checkpoint saves).
  double normal() { return normalPair(*this).first; }
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
};

} // namespace evoc::evolve
