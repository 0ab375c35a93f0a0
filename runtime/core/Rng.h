// A deterministic random generator whose numbers are bit-identical on every
// platform and thread count: integer-only core, arithmetic-only normals.
#pragma once

#include <cstdint>

namespace evoc::runtime {

/// Mixes 64-bit words into one (SplitMix64 finaliser); used to derive
/// independent streams from (seed, robot id, buffer index).
uint64_t mixSeed(uint64_t a, uint64_t b);

/// xoshiro256** with its own uniform and normal samplers. The normal sampler
/// (Marsaglia polar) uses a logarithm built from +, *, / only, so its output
/// does not depend on the platform's libm.
class Rng {
public:
  /// Seeds the four state words from `seed` with SplitMix64.
  explicit Rng(uint64_t seed);
  /// The next 64 random bits.
  uint64_t next();
  /// Uniform in [0, 1) with 53 random bits.
  double uniform();
  /// Standard normal N(0, 1).
  double normal();

private:
  uint64_t s_[4];
  bool haveSpare_ = false;
  double spare_ = 0;
};

/// Natural logarithm of x > 0 from +, *, / only (portable, correctly rounded
/// to within a few ulps); exposed for tests.
double portableLog(double x);

} // namespace evoc::runtime
