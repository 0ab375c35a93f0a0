// The files a run-directory reader reads, and the mutations the fuzz test
// (RunDirFuzzTest.cpp) applies to them.
#pragma once

#include <filesystem>
#include <random>
#include <string>

namespace evoc::evolve::test {

/// state.json, log.jsonl and run.json of one run directory; a file that is
/// absent is written as absent.
struct RunFiles {
  std::string state, log, run;
  bool hasState = true, hasLog = true, hasRun = true;
  /// The three files of `dir`.
  static RunFiles read(const std::filesystem::path &dir);
  /// Replaces the three files of `dir` (plain writes; removes absent ones).
  void write(const std::filesystem::path &dir) const;
  /// The files, shortened, for a failure message.
  std::string describe() const;
};

/// A copy of `f` with one to four mutations of one of its files: byte edits
/// (flips, deletions, duplications, truncation, inserted tokens) or, where
/// the file parses, edits of its JSON (a value replaced by one of another
/// type or an extreme size, a member dropped or duplicated, array entries
/// swapped; log lines dropped, duplicated or swapped), or the file removed.
RunFiles mutateRunFiles(const RunFiles &f, std::mt19937_64 &rng);

} // namespace evoc::evolve::test
