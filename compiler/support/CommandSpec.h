// Robot-level commands and the task mixture that draws them, as plain data:
// sema fills it from a `commands { ... }` block, the runtime draws episodes
// from it (runtime/core/Commands.h). No AST, no runtime types.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace evoc::body {

/// One command's value in a task: base + U(lo, hi) (lo == hi: no draw).
struct CommandDraw {
  double base = 0;
  double lo = 0, hi = 0;
  bool random() const { return lo != hi; }
};

/// A task: its probability and a draw for every command (in
/// CommandSpec::names order).
struct CommandTask {
  std::string name;
  double p = 0;
  std::vector<CommandDraw> values;
};

struct CommandSpec {
  std::vector<std::string> names; ///< scalar commands, in declaration order
  int64_t period = 0;             ///< steps per segment (a new draw each); 0: one per episode
  std::vector<CommandTask> tasks; ///< probabilities sum to 1
  /// The validation grid: values per command (same order as names); the
  /// cases are their Cartesian product, the first command outermost.
  std::vector<std::vector<double>> grid;
  bool empty() const { return names.empty(); }
  /// Number of validation cases (0 without a grid).
  int64_t gridCases() const {
    if (grid.empty())
      return 0;
    int64_t n = 1;
    for (const auto &g : grid)
      n *= int64_t(g.size());
    return n;
  }
};

} // namespace evoc::body
