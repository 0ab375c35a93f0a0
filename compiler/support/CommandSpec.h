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

/// A task: its probability and a draw for every column (the commands in
/// CommandSpec::names order, a vector command's components consecutive).
struct CommandTask {
  std::string name;
  double p = 0;
  std::vector<CommandDraw> values;
};

struct CommandSpec {
  std::vector<std::string> names; ///< commands, in declaration order
  std::vector<int> comps;         ///< per command: 1 (scalar), 2 or 3 (vec2, vec3)
  int64_t period = 0;             ///< steps per segment (a new draw each); 0: one per episode
  std::vector<CommandTask> tasks; ///< probabilities sum to 1
  /// The validation grid: values per command (same order as names), each
  /// value comps[i] numbers; the cases are their Cartesian product, the
  /// first command outermost.
  std::vector<std::vector<double>> grid;
  bool empty() const { return names.empty(); }
  int width(size_t i) const { return i < comps.size() ? comps[i] : 1; }
  /// The first column of command i, and the columns of all of them.
  int column(size_t i) const {
    int c = 0;
    for (size_t k = 0; k < i; ++k)
      c += width(k);
    return c;
  }
  int columns() const { return column(names.size()); }
  /// Values of command i in the grid.
  int64_t gridValues(size_t i) const { return int64_t(grid.at(i).size()) / width(i); }
  /// Number of validation cases (0 without a grid).
  int64_t gridCases() const {
    if (grid.empty())
      return 0;
    int64_t n = 1;
    for (size_t i = 0; i < grid.size(); ++i)
      n *= gridValues(i);
    return n;
  }
};

} // namespace evoc::body
