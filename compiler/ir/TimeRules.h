// Two rules of a rollout that the CPU runtime (core/Rollout.cpp), the CUDA
// runtime (cuda/CudaRollout.cpp) and the CUDA code generator
// (codegen/cuda/RolloutEmitter.cpp) all apply: which state a buffer's time
// reference names at step t, and which row of an episode's command table is
// in force at a time. Each is written once here. The command-row rule is a
// macro body that C++ expands and the CUDA generator prints
// (kCommandRowCuda), so host and device cannot disagree.
// (docs/architecture.md, "The one contract")
#pragma once

#include <cstdint>

#include "ir/IR.h"

// The row of a command table of `rows` rows, each `period` steps long
// (period 0: one row for the whole episode; the last row also holds every
// later step), in force at step `when`.
#define EVOC_COMMAND_ROW(when, period, rows)                                                       \
  ((period) > 0 ? ((when) / (period) < 0          ? 0                                              \
                   : (when) / (period) > (rows)-1 ? (rows)-1                                       \
                                                  : (when) / (period))                             \
                : 0)
#define EVOC_STRINGIFY_(...) #__VA_ARGS__
#define EVOC_STRINGIFY(...) EVOC_STRINGIFY_(__VA_ARGS__)

namespace evoc::ir {

/// The state index buffer time reference `ref` (with Buffer::fixedTime
/// `fixedTime`: the time of Fixed, the offset of Offset) names at step t of
/// a rollout of T states (Current: t; Offset: t + offset; First: 0; Last:
/// T - 1; Fixed: the fixed time).
constexpr int64_t stepOf(TimeRef ref, int64_t fixedTime, int64_t t, int64_t T) {
  switch (ref) {
  case TimeRef::Current:
    return t;
  case TimeRef::Offset:
    return t + fixedTime;
  case TimeRef::First:
    return 0;
  case TimeRef::Last:
    return T - 1;
  case TimeRef::Fixed:
    return fixedTime;
  }
  return t;
}

/// EVOC_COMMAND_ROW for C++.
constexpr int64_t commandRow(int64_t when, int64_t period, int64_t rows) {
  return EVOC_COMMAND_ROW(when, period, rows);
}

/// EVOC_COMMAND_ROW as CUDA source (one #define line).
inline constexpr const char *kCommandRowCuda =
    "#define EVOC_COMMAND_ROW(when, period, rows) " EVOC_STRINGIFY(
        EVOC_COMMAND_ROW(when, period, rows)) "\n";

} // namespace evoc::ir
