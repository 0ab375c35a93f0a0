// The SourceManager: owns the text of every source file read in a run and
// maps byte offsets to lines and columns.
#pragma once

#include "support/SourceRange.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace evoc {

/// Holds source files by id. Ids are stable for the manager's lifetime.
class SourceManager {
public:
  /// Reads a file from disk. Returns its id, or -1 if it cannot be read. A
  /// file already loaded (same normalised path) returns its existing id.
  int loadFile(const std::string &path);
  /// Adds an in-memory buffer under a display name (tests, fuzzing).
  /// `shown`, when given, is the one line diagnostics show for it instead
  /// of its text (a `--set` value parsed inside a block the user never
  /// wrote); the columns of both must agree.
  int addBuffer(const std::string &name, std::string text, std::string shown = "");

  int numFiles() const { return int(files_.size()); }
  const std::string &path(int file) const;
  std::string_view text(int file) const;
  /// The text of a 1-based line, without its newline ("" if out of range).
  std::string_view lineText(int file, int line) const;
  /// The location of a byte offset in a file.
  SourceLoc locAt(int file, int offset) const;
  /// How many paths loadFile has normalised so far (each file's once, and
  /// each requested path's): the work an import chain costs, for tests.
  int64_t pathNormalisations() const { return normalisations_; }

private:
  /// The path as files are compared: weakly canonical, or as given when
  /// that fails.
  std::string key(const std::string &path);
  struct File {
    std::string path;
    std::string text;
    std::string shown; // shown as line 1 instead of the text, when not empty
    std::vector<int> lineStarts;
  };
  std::vector<File> files_;
  /// key() of files_[0 .. keyed_) -> the first id with that key. Filled
  /// lazily by loadFile, so that looking a path up costs one normalisation
  /// instead of one per file loaded (an import chain of N files was N^2).
  std::unordered_map<std::string, int> byKey_;
  size_t keyed_ = 0;
  int64_t normalisations_ = 0;
};

} // namespace evoc
