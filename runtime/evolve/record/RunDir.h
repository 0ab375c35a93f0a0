// A run directory on disk: crash-safe (atomic) writes, the checkpoint that
// resume reads, and the refusal to touch a directory that is not a run.
//
//   DIR/run.json               marker: {"format": "evoc-run", "version": 1}
//   DIR/resolved.evo           the experiment, after imports and overrides
//   DIR/log.jsonl              one JSON line per completed generation
//   DIR/gen_NNNN/population.json
//   DIR/best.json              best robot so far (ROBOTS.json format + params)
//   DIR/state.json             checkpoint; written last, so it marks a
//                              generation as completed
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace evoc::evolve {

/// Writes `text` to `path` so that a reader sees the old file or the new one,
/// never a part: write a temporary beside it, fsync, rename, fsync the
/// directory. Throws evoc::Error on failure.
/// Test hook for fault tests: with the environment variable
/// EVOC_FAULT_AFTER_WRITES=N, the process stops itself (_exit with
/// kFaultExitCode, no cleanup, as a kill would) right after its Nth atomic
/// write; with EVOC_FAULT_BEFORE_RENAME=1 too, just before the Nth write's
/// rename, leaving its temporary behind.
void writeFileAtomic(const std::filesystem::path &path, std::string_view text);

/// The exit status of a process stopped by the fault hook.
inline constexpr int kFaultExitCode = 86;

/// The whole file; throws evoc::Error naming the path if it cannot be read.
std::string readTextFile(const std::filesystem::path &path);

/// An evoc run directory (see the file comment for its layout).
class RunDir {
public:
  /// Starts a new run in `dir`, creating it, or adopting it when it is empty
  /// (or holds only what a creation killed before run.json left). Claims it
  /// atomically: takes the lock, then checks. Refuses (evoc::Error) a
  /// directory that exists and is not empty, or that another process claimed.
  /// Writes run.json, then resolved.evo; returns the run locked.
  static RunDir create(const std::filesystem::path &dir, std::string_view resolvedSource);
  /// Opens a run (to read it, or to resume it). Refuses (evoc::Error)
  /// anything that is not an evoc run directory.
  static RunDir open(const std::filesystem::path &dir);
  /// Opens a run to resume it; a directory holding only what a creation
  /// killed before run.json left is started afresh instead (create, with
  /// `resolvedSource`): nothing had been recorded in it.
  static RunDir resume(const std::filesystem::path &dir, std::string_view resolvedSource);
  /// True when `dir` holds an evoc run (its run.json marker).
  static bool isRun(const std::filesystem::path &dir);

  /// Takes an exclusive lock on the run (flock on DIR/.lock) for as long as
  /// this object or a copy lives, so two processes never write one run; the
  /// kernel drops it when the process dies, even by SIGKILL. Throws
  /// evoc::Error when another process holds it.
  void lock();

  const std::filesystem::path &path() const { return dir_; }
  /// The experiment text the run was started with.
  std::string resolvedSource() const;

  /// True when at least one generation completed (state.json exists).
  bool hasState() const;
  nlohmann::json readState() const;
  void writeState(const nlohmann::json &state) const;

  /// DIR/gen_NNNN (created on demand by writePopulation).
  std::filesystem::path generationDir(int generation) const;
  void writePopulation(int generation, const nlohmann::json &population) const;
  void writeBest(const nlohmann::json &best) const;
  /// Writes DIR/NAME atomically (pictures, extra files).
  void writeFile(const std::string &name, std::string_view text) const;

  /// Removes temporary files left by writes that a kill interrupted
  /// (NAME.tmp.PID, in DIR, its gen_NNNN folders and gaits/). Call only when no
  /// other process writes to this run.
  void removeStaleTemporaries() const;

  /// The log's records, in order.
  std::vector<nlohmann::json> readLog() const;
  /// Rewrites the log atomically with `records`.
  void writeLog(const std::vector<nlohmann::json> &records) const;

private:
  bool tryLock(); ///< false when another process holds the lock
  explicit RunDir(std::filesystem::path dir) : dir_(std::move(dir)) {}
  std::filesystem::path dir_;
  std::shared_ptr<int> lockFd_; // closes (and so unlocks) with the last copy
};

} // namespace evoc::evolve
