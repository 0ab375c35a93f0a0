// Test support: what a fuzz test runs for, from the environment:
// EVOC_FUZZ_SECONDS (its budget; default per test) and EVOC_FUZZ_SEED (its
// random stream's seed; default 1), so that a failure found in a long run can
// be replayed.
#pragma once

#include <cstdint>
#include <cstdlib>

namespace evoc::test {

struct FuzzBudget {
  double seconds;
  uint64_t seed;
};

inline FuzzBudget fuzzBudget(double defaultSeconds) {
  FuzzBudget b{defaultSeconds, 1};
  if (const char *e = std::getenv("EVOC_FUZZ_SECONDS"))
    b.seconds = std::atof(e);
  if (const char *e = std::getenv("EVOC_FUZZ_SEED"))
    b.seed = std::strtoull(e, nullptr, 10);
  return b;
}

} // namespace evoc::test
