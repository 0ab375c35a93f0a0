// evoc fmt: the canonical layout of a .evo file (docs/language.md,
// "Layout"). The line breaks and comments are the author's; indentation and
// the spaces between tokens are the formatter's. Checked: a result whose
// program differs from the input's is never returned.
#pragma once

#include <string>

namespace evoc::frontend {

struct FormatResult {
  bool ok = false;
  std::string text;     ///< ok: the formatted file
  std::string error;    ///< !ok: why, one line (the first syntax error: file:line:col: error: ...)
  std::string rendered; ///< !ok: the same as `evoc check` prints it (source line, caret)
};

/// Formats the text of one .evo file (`name` for messages). Refuses a file
/// that does not parse, and (as a bug) any result that does not parse to
/// the same program. Formatting a formatted file changes nothing.
FormatResult formatSource(const std::string &text, const std::string &name);

} // namespace evoc::frontend
