// Internal to sema: the Typer, which types one expression tree and fills
// its annotations. Its methods are split over Exprs.cpp (names, members,
// times, operators), Calls.cpp (builtins and fn calls), Matrices.cpp and
// Grids.cpp.
#pragma once

#include "sema/Checker.h"

namespace evoc::sema {

class Typer {
public:
  Typer(Checker &c, ExprCtx &cx) : C(c), cx(cx), diags(c.diags) {}

  ast::Type check(ast::Expr &e);
  /// The common element set of two operands, or reports a mismatch.
  bool combine(const ast::Type &a, const ast::Type &b, const SourceRange &r,
               const ast::SetDecl *&out);
  ast::Type dispatch(ast::Expr &e);
  std::vector<std::string> visibleNames();
  ast::Type name(ast::NameExpr &n);
  ast::Type member(ast::MemberExpr &m);
  /// Reports a field of another set used on this set's element or namespace.
  void noSuchMember(ast::MemberExpr &m, const ast::SetDecl *s, const std::string &how);
  ast::Type elementMember(ast::MemberExpr &m, const ast::SetDecl *s);
  ast::Type setMember(ast::MemberExpr &m, const ast::SetDecl *s, bool timed);
  ast::Type worldMember(ast::MemberExpr &m);
  /// A time index: constant (over T) or window variable plus offset.
  bool timeOf(const ast::Expr &e, const ast::WindowExpr *&win, int64_t &value);
  ast::Type index(ast::IndexExpr &ix);
  ast::Type window(ast::WindowExpr &w);
  /// sum(n in stencil(node, base, size): e) (Grids.cpp).
  ast::Type stencil(ast::StencilExpr &s);
  /// node.index / node.offset of a grid element (Grids.cpp).
  ast::Type gridMember(ast::MemberExpr &m, const ast::SetDecl *s);
  /// set[i] in a step: the element of `set` at a computed index (Grids.cpp).
  ast::Type elementAt(ast::IndexExpr &ix, const ast::SetDecl *set);
  /// Matrices (Matrices.cpp): mat2 / mat3 / transpose / det / trace /
  /// outer / polar_rotation, an operator with a matrix operand, `M.xy`.
  ast::Type matrixCall(ast::CallExpr &c, const std::vector<ast::Type> &ts, const ast::SetDecl *set);
  ast::Type matrixBinary(ast::BinaryExpr &b, const ast::Type &l, const ast::Type &r,
                         const ast::SetDecl *set);
  ast::Type matrixEntry(ast::MemberExpr &m, const ast::Type &base);
  ast::Type unary(ast::UnaryExpr &u);
  ast::Type binary(ast::BinaryExpr &b);
  ast::Type ifExpr(ast::IfExpr &f);
  ast::Type call(ast::CallExpr &c);
  /// A call of a name that is no builtin: a fn, or reported.
  ast::Type userCall(ast::CallExpr &c);
  /// sum / mean / min / max of one field: reduced over its set.
  ast::Type reduction(ast::CallExpr &c, const ast::Type &arg);
  /// part_mean(NAME, F) (docs/language.md, Losses).
  ast::Type partMean(ast::CallExpr &c);
  /// The other builtins on numbers (`ts`: the argument types), element-wise
  /// over one set.
  ast::Type elementwise(ast::CallExpr &c, const std::vector<ast::Type> &ts);
  /// ground_height / ground_normal / ground_gap / ground_speed.
  ast::Type groundCall(ast::CallExpr &c, const std::vector<ast::Type> &ts, const ast::SetDecl *set);
  /// in_contact / contact_normal / contact_gap / contact_speed / push_out.
  ast::Type contactCall(ast::CallExpr &c, const std::vector<ast::Type> &ts,
                        const ast::SetDecl *set);
  /// Whether argument i is a scalar; reports it if not.
  bool scalarArg(const ast::CallExpr &c, const std::vector<ast::Type> &ts, size_t i);
  ast::Type repeat(ast::CallExpr &c);
  ast::Type sinWaves(ast::CallExpr &c);
  ast::Type fnCall(ast::CallExpr &c, const ast::FnDecl &fn);

  Checker &C;
  ExprCtx &cx;
  DiagnosticEngine &diags;

  ast::Type err() { return ast::Type::error(); }
  /// The type of `e` checked in scope `s` (a window's or a stencil's
  /// variable); an error type when `e` is not a number (`what` says what is
  /// reduced, for the message) or is a field.
  ast::Type reducedBody(Scope s, ast::Expr &e, const std::string &what);
};

/// Quotes a name for a message.
inline std::string q(const std::string &s) { return "'" + s + "'"; }
/// Scalar or Int (an int promotes to scalar).
inline bool isScalarLike(const ast::Type &t) {
  return t.kind == ast::TypeKind::Scalar || t.kind == ast::TypeKind::Int;
}

} // namespace evoc::sema
