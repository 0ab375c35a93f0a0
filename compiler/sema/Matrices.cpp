// Typing small matrices (docs/language.md, "Matrices"): the mat2 / mat3
// constructors, transpose, det, trace, outer, polar_rotation, entries
// (`M.xy`) and the operators on matrices: sums, scaling, and the matrix
// products M * N and M * v.
#include "sema/Typer.h"

namespace evoc::sema {

using namespace ast;

namespace {

bool isMat(const Type &t) { return t.kind == TypeKind::Mat; }
bool isVec(const Type &t) { return t.kind == TypeKind::Vec; }

} // namespace

Type Typer::matrixCall(CallExpr &c, const std::vector<Type> &ts, const SetDecl *set) {
  const std::string &fname = c.callee.name;
  const Builtin id = c.builtin;
  auto needMatrix = [&](size_t i) {
    if (isMat(ts[i]))
      return true;
    diags.error(c.args[i]->range,
                q(fname) + " takes a matrix (mat2 or mat3), not " + typeToString(ts[i]));
    return false;
  };
  switch (id) {
  case Builtin::Mat2:
  case Builtin::Mat3: {
    const int w = id == Builtin::Mat2 ? 2 : 3;
    const int n = int(ts.size());
    if (w == 3 && C.out.world.dim == 2 && C.dimKnown) {
      diags.error(c.range, "mat3 in a dim = 2 world; use mat2");
      return err();
    }
    if (n == w * w) { // the entries by rows
      for (size_t i = 0; i < ts.size(); ++i)
        if (!scalarArg(c, ts, i))
          return err();
      return {TypeKind::Mat, w, set};
    }
    if (n == w) { // the rows
      for (size_t i = 0; i < ts.size(); ++i)
        if (!isVec(ts[i]) || ts[i].width != w) {
          diags.error(c.args[i]->range, "row " + std::to_string(i + 1) + " of " + q(fname) +
                                            " must be a vec" + std::to_string(w) + ", not " +
                                            typeToString(ts[i]));
          return err();
        }
      return {TypeKind::Mat, w, set};
    }
    diags.error(c.range, q(fname) + " takes " + std::to_string(w * w) + " numbers (by rows) or " +
                             std::to_string(w) + " vec" + std::to_string(w) + " rows, not " +
                             std::to_string(n) + " argument" + (n == 1 ? "" : "s"));
    return err();
  }
  case Builtin::Transpose:
    if (!needMatrix(0))
      return err();
    return {TypeKind::Mat, ts[0].width, set};
  case Builtin::Det:
  case Builtin::Trace:
    if (!needMatrix(0))
      return err();
    return {TypeKind::Scalar, 1, set};
  case Builtin::Outer:
    if (!isVec(ts[0]) || !isVec(ts[1]) || ts[0].width != ts[1].width) {
      diags.error(c.range, "outer() takes two vectors of the same size, not " +
                               typeToString(ts[0]) + " and " + typeToString(ts[1]));
      return err();
    }
    return {TypeKind::Mat, ts[0].width, set};
  case Builtin::PolarRotation:
    if (!needMatrix(0))
      return err();
    if (ts[0].width != 2) {
      diags.error(c.args[0]->range,
                  "polar_rotation() of a mat3 is not implemented: only the 2 x 2 rotation has a "
                  "closed form here");
      return err();
    }
    return {TypeKind::Mat, 2, set};
  default:
    return err();
  }
}

Type Typer::matrixBinary(BinaryExpr &b, const Type &l, const Type &r, const SetDecl *set) {
  const std::string op = binaryOpSpelling(b.op);
  auto bad = [&](const std::string &hint) {
    diags.error(b.opRange, "cannot apply '" + op + "' to " + typeToString(l) + " and " +
                               typeToString(r) + hint);
    return err();
  };
  const bool ls = isScalarLike(l), rs = isScalarLike(r);
  switch (b.op) {
  case BinaryOp::Add:
  case BinaryOp::Sub:
    if (isMat(l) && isMat(r) && l.width == r.width)
      return {TypeKind::Mat, l.width, set};
    return bad(isMat(l) && isMat(r) ? "; matrix sizes differ" : "");
  case BinaryOp::Mul:
    if (ls && isMat(r))
      return {TypeKind::Mat, r.width, set};
    if (isMat(l) && rs)
      return {TypeKind::Mat, l.width, set};
    if (isMat(l) && isMat(r) && l.width == r.width)
      return {TypeKind::Mat, l.width, set}; // the matrix product
    if (isMat(l) && isVec(r) && l.width == r.width)
      return {TypeKind::Vec, l.width, set}; // matrix times column vector
    if (isVec(l) && isMat(r) && l.width == r.width)
      return bad("; a vector times a matrix is not defined: write transpose(M) * v");
    return bad("; the sizes differ");
  case BinaryOp::Div:
    if (isMat(l) && rs)
      return {TypeKind::Mat, l.width, set};
    return bad("; only a matrix divided by a number is defined");
  default:
    return bad("; compare entries (M.xy) instead");
  }
}

Type Typer::matrixEntry(MemberExpr &m, const Type &base) {
  const std::string &f = m.member.name;
  auto axis = [&](char ch) { return ch == 'x' ? 0 : ch == 'y' ? 1 : ch == 'z' ? 2 : -1; };
  const int row = f.size() == 2 ? axis(f[0]) : -1, col = f.size() == 2 ? axis(f[1]) : -1;
  if (row < 0 || col < 0 || row >= base.width || col >= base.width) {
    diags.error(m.member.range, "mat" + std::to_string(base.width) + " has no entry " + q(f) +
                                    (base.width == 2 ? "; use .xx, .xy, .yx or .yy (row, column)"
                                                     : "; use two of x, y, z (row, column), "
                                                       "like .xz"));
    return err();
  }
  m.ref = MemberRef::Component;
  m.component = row * base.width + col;
  return {TypeKind::Scalar, 1, base.set};
}

} // namespace evoc::sema
