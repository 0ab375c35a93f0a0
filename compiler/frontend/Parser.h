// Parsing one .evo file into an ast::Module (ANTLR stays behind this header).
#pragma once

#include "frontend/AST.h"
#include "support/Diagnostics.h"

#include <memory>

namespace evoc::frontend {

/// Parses the file `file` of `sources`. Syntax errors are reported to `diags`;
/// on any syntax error in the file the result is null (no partial AST).
std::unique_ptr<ast::Module> parseModule(int file, const SourceManager &sources,
                                         DiagnosticEngine &diags);

} // namespace evoc::frontend
