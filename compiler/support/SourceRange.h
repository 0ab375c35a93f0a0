// Source positions: a location (file, line, column, offset) and a range.
#pragma once

#include <cstdint>

namespace evoc {

/// A position in a source file. Lines and columns are 1-based; columns count
/// bytes. `file` indexes the SourceManager's files (-1: no file known).
struct SourceLoc {
  int file = -1;
  int line = 0;
  int col = 0;
  int offset = 0; // byte offset into the file's text

  bool valid() const { return file >= 0 && line > 0; }
};

/// A half-open byte range [begin, end) within one file.
struct SourceRange {
  SourceLoc begin;
  SourceLoc end;

  bool valid() const { return begin.valid(); }
  /// The smallest range covering both (same file assumed).
  static SourceRange join(const SourceRange &a, const SourceRange &b) {
    if (!a.valid())
      return b;
    if (!b.valid())
      return a;
    SourceRange r;
    r.begin = a.begin.offset <= b.begin.offset ? a.begin : b.begin;
    r.end = a.end.offset >= b.end.offset ? a.end : b.end;
    return r;
  }
};

} // namespace evoc
