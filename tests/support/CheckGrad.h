// Test support: CHECK_GRAD, the Catch2 check of a gradient check's report
// (test::gradCheck, GradCheck.h).
#pragma once

#include <catch2/catch.hpp>

/// A gradient check's report passes: something checked, all finite,
/// relative error below 1e-6 (its worst place in the message).
#define CHECK_GRAD(rep)                                                                            \
  do {                                                                                             \
    auto r_ = (rep);                                                                               \
    INFO(r_.where);                                                                                \
    CHECK(r_.checked > 0);                                                                         \
    CHECK(r_.finite);                                                                              \
    CHECK(r_.maxRelErr < 1e-6);                                                                    \
  } while (0)
