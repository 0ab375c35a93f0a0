// The SourceManager: owns the text of every source file read in a run and
// maps byte offsets to lines and columns.
#pragma once

#include "support/SourceRange.h"

#include <string>
#include <string_view>
#include <vector>

namespace evoc {

/// Holds source files by id. Ids are stable for the manager's lifetime.
class SourceManager {
public:
  /// Reads a file from disk. Returns its id, or -1 if it cannot be read. A
  /// file already loaded (same normalised path) returns its existing id.
  int loadFile(const std::string &path);
  /// Adds an in-memory buffer under a display name (tests, fuzzing).
  int addBuffer(const std::string &name, std::string text);

  int numFiles() const { return int(files_.size()); }
  const std::string &path(int file) const;
  std::string_view text(int file) const;
  /// The text of a 1-based line, without its newline ("" if out of range).
  std::string_view lineText(int file, int line) const;
  /// The location of a byte offset in a file.
  SourceLoc locAt(int file, int offset) const;

private:
  struct File {
    std::string path;
    std::string text;
    std::vector<int> lineStarts;
  };
  std::vector<File> files_;
};

} // namespace evoc
