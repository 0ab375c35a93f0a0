// Internal to the frontend: turns an ANTLR parse tree into the evoc AST.
#pragma once

#include "EvoParser.h"
#include "frontend/AST.h"

#include <memory>
#include <vector>

namespace evoc {
class SourceManager;
class DiagnosticEngine;
} // namespace evoc

namespace evoc::frontend {

/// Maps ANTLR's code-point indices to byte offsets and source locations.
struct LocMap {
  int file = -1;
  const SourceManager *sources = nullptr;
  std::vector<int> cpToByte; ///< code point index -> byte offset (size n + 1)

  SourceLoc at(size_t cpIndex) const;
  SourceRange token(const antlr4::Token *t) const;
  SourceRange rule(antlr4::ParserRuleContext *ctx) const;
};

/// Builds the AST of a parse tree that had no syntax errors. Shape errors the
/// grammar leaves open (an unknown field kind, a malformed mutation rule) are
/// reported to `diags`.
std::unique_ptr<ast::Module> buildModule(EvoParser::ProgramContext *tree, const LocMap &locs,
                                         DiagnosticEngine &diags);

} // namespace evoc::frontend
