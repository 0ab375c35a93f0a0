// A deterministic random generator whose numbers are bit-identical on every
// platform and thread count: integer-only core, arithmetic-only normals.
#pragma once

#include <cstdint>

#include "support/Xoshiro.h"

namespace evoc::runtime {

/// Mixes 64-bit words into one (SplitMix64 finaliser); used to derive
/// independent streams from (seed, robot id, buffer index).
uint64_t mixSeed(uint64_t a, uint64_t b);

/// xoshiro256** (support/Xoshiro.h) with a normal sampler: normalPair's
/// draws, the second kept for the next call, so its output does not depend
/// on the platform's libm.
class Rng : public Xoshiro256 {
public:
  using Xoshiro256::Xoshiro256;
  /// Standard normal N(0, 1).
  double normal();

private:
  bool haveSpare_ = false;
  double spare_ = 0;
};

using evoc::portableLog;

} // namespace evoc::runtime
