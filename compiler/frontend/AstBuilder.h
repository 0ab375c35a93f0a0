// Internal to the frontend: turns an ANTLR parse tree into the evoc AST.
#pragma once

#include "EvoParser.h"
#include "frontend/AST.h"
#include "support/Diagnostics.h"

#include <memory>
#include <string>
#include <vector>

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

/// Builds expressions and names (ExprBuilder.cpp); the declaration builder
/// (AstBuilder.cpp) derives from it.
class ExprBuilder {
public:
  ExprBuilder(const LocMap &locs, DiagnosticEngine &diags) : L(locs), diags(diags) {}

  ast::ExprPtr expr(EvoParser::ExprContext *c);
  ast::Ident ident(antlr4::tree::TerminalNode *n) const;
  ast::Ident ident(EvoParser::AnyNameContext *n) const;
  /// A string literal's text without quotes, escapes decoded.
  static std::string unquote(const std::string &s);

protected:
  /// `stencil(node, base, size)` after `for v in` or in `sum(v in ...: e)`:
  /// the spec, and the grid set's name into `setName`. Errors for another
  /// callee, another number of arguments or a set that is not a plain name.
  std::unique_ptr<ast::StencilSpec> stencilSpec(const ast::Ident &callee,
                                                const std::vector<EvoParser::ExprContext *> &args,
                                                ast::Ident &setName);

  template <class T> std::unique_ptr<T> node(antlr4::ParserRuleContext *c) const {
    auto n = std::make_unique<T>();
    n->range = L.rule(c);
    return n;
  }

  const LocMap &L;
  DiagnosticEngine &diags;

private:
  ast::ExprPtr exprInner(EvoParser::ExprContext *c);
  ast::ExprPtr primary(EvoParser::PrimaryContext *c);
  int depth = 0;
  bool depthReported = false;
};

/// Builds the AST of a parse tree that had no syntax errors. Shape errors the
/// grammar leaves open (an unknown field kind, a malformed mutation rule) are
/// reported to `diags`.
std::unique_ptr<ast::Module> buildModule(EvoParser::ProgramContext *tree, const LocMap &locs,
                                         DiagnosticEngine &diags);

} // namespace evoc::frontend
