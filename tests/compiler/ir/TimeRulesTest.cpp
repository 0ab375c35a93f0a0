// The rollout's time rules (ir/TimeRules.h): the state a time reference
// names, and the command row in force, as C++ and as the CUDA text printed
// from the same macro.
#include <catch2/catch.hpp>

#include <string>

#include "ir/TimeRules.h"

using namespace evoc::ir;

TEST_CASE("time references name states", "[ir][time]") {
  CHECK(stepOf(TimeRef::Current, 0, 7, 100) == 7);
  CHECK(stepOf(TimeRef::Offset, -3, 7, 100) == 4);
  CHECK(stepOf(TimeRef::First, 5, 7, 100) == 0);
  CHECK(stepOf(TimeRef::Last, 5, 7, 100) == 99);
  CHECK(stepOf(TimeRef::Fixed, 42, 7, 100) == 42);
}

TEST_CASE("the command row in force", "[ir][time]") {
  // Rows of 500 steps; the last row also holds every later step.
  CHECK(commandRow(0, 500, 2) == 0);
  CHECK(commandRow(499, 500, 2) == 0);
  CHECK(commandRow(500, 500, 2) == 1);
  CHECK(commandRow(999, 500, 2) == 1);
  CHECK(commandRow(5000, 500, 2) == 1);
  // Period 0: one row for the whole episode.
  CHECK(commandRow(0, 0, 1) == 0);
  CHECK(commandRow(123, 0, 1) == 0);
  CHECK(commandRow(-1, 10, 3) == 0); // never before the first row
  // The CUDA definition is the same text.
  const std::string cuda = kCommandRowCuda;
  CHECK(cuda.rfind("#define EVOC_COMMAND_ROW(when, period, rows) ((period) > 0 ? ", 0) == 0);
  CHECK(cuda.back() == '\n');
  CHECK(cuda.find('\n') == cuda.size() - 1); // one line, whatever clang-format makes of the macro
  CHECK(cuda.find("(when) / (period)") != std::string::npos);
}
