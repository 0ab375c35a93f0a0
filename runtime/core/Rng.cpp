// Deterministic RNG: xoshiro256** plus the libm-free normal sampler of
// support/Xoshiro.h, one draw at a time.
#include "core/Rng.h"

namespace evoc::runtime {

uint64_t mixSeed(uint64_t a, uint64_t b) {
  uint64_t x = a ^ rotl64(b, 32) ^ 0x6a09e667f3bcc909ULL;
  uint64_t r = splitmix64(x);
  x ^= b;
  return r ^ splitmix64(x);
}

double Rng::normal() {
  if (haveSpare_) {
    haveSpare_ = false;
    return spare_;
  }
  auto [first, second] = normalPair(*this);
  spare_ = second;
  haveSpare_ = true;
  return first;
}

} // namespace evoc::runtime
