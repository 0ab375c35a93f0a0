// The progress line of `evoc run`: one line rewritten in place (\r) on a
// terminal, one plain line per generation otherwise (logs, CI).
#pragma once

#include <cstdio>
#include <string>

namespace evoc::evolve {

/// What the progress line shows after a generation.
struct ProgressInfo {
  int generation = 0;     ///< the generation just completed (0-based, as in the log)
  int generations = 0;    ///< generations the run will complete in all
  double bestFitness = 0; ///< best fitness so far
  double designsPerSecond = 0;
  double secondsLeft = -1; ///< < 0 when unknown
  /// Designs of this generation not trained (nothing to learn:
  /// Evaluation::notTrained); shown only when > 0.
  int notTrained = 0;
};

/// Formats seconds as "1h02m", "3m05s" or "12s".
std::string formatDuration(double seconds);

/// Writes progress to a stream; detects a terminal with isatty.
class Progress {
public:
  /// `out` null silences it; `forceTty` -1 = detect, 0 = plain, 1 = terminal.
  explicit Progress(std::FILE *out, int forceTty = -1);
  ~Progress();
  /// One progress update.
  void update(const ProgressInfo &info);
  /// Prints a message on its own line (ends a pending \r line first).
  void note(const std::string &message);
  /// Ends the \r line, if one is pending.
  void finish();
  /// The line update() prints for `info` (without \r or newline).
  static std::string line(const ProgressInfo &info);

private:
  std::FILE *out_;
  bool tty_;
  bool pending_ = false;
};

} // namespace evoc::evolve
