// The exception type for user-facing errors outside the diagnostics engine
// (bad JSON robot, missing file, unavailable back end). Its message is a
// complete sentence a user can act on; the driver prints it and exits 1.
// Compiler bugs use EVOC_ASSERT / internalError instead.
#pragma once

#include <stdexcept>
#include <string>

namespace evoc {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// An internal invariant was broken: a bug in evoc, never a user error.
[[noreturn]] void internalError(const char *file, int line, const std::string &msg);

} // namespace evoc

#define EVOC_ASSERT(cond, msg)                                                                     \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      ::evoc::internalError(__FILE__, __LINE__, (msg));                                            \
  } while (0)
