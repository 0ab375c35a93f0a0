// Lowering of small matrices (docs/language.md, "Matrices"): a mat2 / mat3
// value is its entries by rows, so sums and scaling are the element-wise
// operators; this file lowers what mixes entries: the matrix products, the
// constructors from rows, transpose, det, trace, outer and the closed-form
// 2 x 2 polar rotation. Their adjoints are those of the scalar operations
// they expand to.
#include <cmath>

#include "irgen/Lowerer.h"

namespace evoc::irgen {

using ir::Op;
using ir::ValueId;

namespace {

/// The width of a square matrix of `n` entries.
int widthOf(size_t n) { return n == 4 ? 2 : 3; }

} // namespace

Val Lowerer::matProduct(const Val &a, const Val &v) {
  const int w = widthOf(a.size());
  const int cols = v.size() == a.size() ? w : 1; // a matrix or a column vector
  Val r;
  for (int i = 0; i < w; ++i)
    for (int j = 0; j < cols; ++j) {
      Val terms;
      for (int k = 0; k < w; ++k)
        terms.push_back(b_.op(Op::Mul, {a[size_t(i * w + k)], v[size_t(k * cols + j)]}));
      r.push_back(sumOf(terms));
    }
  return r;
}

Val Lowerer::matrix(const ast::CallExpr *e) {
  using BI = ast::Builtin;
  auto arg = [&](size_t i) { return expr(e->args.at(i).get()); };
  switch (e->builtin) {
  case BI::Vec2:
  case BI::Vec3:
  case BI::Mat2:
  case BI::Mat3: { // the components in order: a vector's, a matrix's entries or rows
    Val r;
    for (size_t i = 0; i < e->args.size(); ++i)
      for (ValueId x : arg(i))
        r.push_back(x);
    return r;
  }
  case BI::Transpose: {
    Val a = arg(0), r(a.size());
    const int w = widthOf(a.size());
    for (int i = 0; i < w; ++i)
      for (int j = 0; j < w; ++j)
        r[size_t(j * w + i)] = a[size_t(i * w + j)];
    return r;
  }
  case BI::Trace: {
    Val a = arg(0), diag;
    const int w = widthOf(a.size());
    for (int i = 0; i < w; ++i)
      diag.push_back(a[size_t(i * w + i)]);
    return {sumOf(diag)};
  }
  case BI::Det: {
    Val a = arg(0);
    auto mul = [&](ValueId x, ValueId y) { return b_.op(Op::Mul, {x, y}); };
    auto minor = [&](int p, int q, int r, int s) { // a[p] a[s] - a[q] a[r]
      return b_.op(Op::Sub, {mul(a[size_t(p)], a[size_t(s)]), mul(a[size_t(q)], a[size_t(r)])});
    };
    if (a.size() == 4)
      return {minor(0, 1, 2, 3)};
    // Along the first row: a0 (a4 a8 - a5 a7) - a1 (a3 a8 - a5 a6) + a2 (a3 a7 - a4 a6).
    ValueId t0 = mul(a[0], minor(4, 5, 7, 8)), t1 = mul(a[1], minor(3, 5, 6, 8)),
            t2 = mul(a[2], minor(3, 4, 6, 7));
    return {b_.add(b_.op(Op::Sub, {t0, t1}), t2)};
  }
  case BI::Outer: {
    Val u = arg(0), v = arg(1), r;
    for (ValueId x : u)
      for (ValueId y : v)
        r.push_back(b_.op(Op::Mul, {x, y}));
    return r;
  }
  case BI::PolarRotation: {
    // F = R S with R a rotation: R = [[c, -s], [s, c]] with (c, s) the unit
    // vector along (F.xx + F.yy, F.yx - F.xy); undefined (NaN) where both
    // are 0, as in the closed form everyone uses.
    Val f = arg(0);
    ValueId x = b_.add(f[0], f[3]), y = b_.op(Op::Sub, {f[2], f[1]});
    ValueId ny = b_.op(Op::Sub, {f[1], f[2]});
    ValueId s = b_.op(Op::Sqrt, {b_.add(b_.op(Op::Mul, {x, x}), b_.op(Op::Mul, {y, y}))});
    ValueId c = b_.op(Op::Div, {x, s});
    return {c, b_.op(Op::Div, {ny, s}), b_.op(Op::Div, {y, s}), c};
  }
  default:
    unsupported(e->range, "unknown matrix builtin");
  }
}

} // namespace evoc::irgen
