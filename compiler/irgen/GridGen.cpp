// Lowering of grids and computed indices (docs/language.md, "Grids and
// particles"): a stencil is unrolled into its size^dim nodes, each an index
// computed from the base node; an element reached by a computed index reads
// NaN (and a stencil scatters NaN) when the index is outside its set, so a
// particle that leaves the grid makes the rollout non-finite instead of
// touching memory it does not own.
#include <cmath>
#include <limits>

#include "irgen/Lowerer.h"

namespace evoc::irgen {

using ir::Op;
using ir::ValueId;

namespace {

/// `valid ? v : NaN` per component (v unchanged when valid is 0: always valid).
Val poison(ir::Builder &b, ValueId valid, Val v) {
  if (!valid)
    return v;
  ValueId nan = b.constF(std::numeric_limits<double>::quiet_NaN());
  for (ValueId &x : v)
    x = b.op(Op::Select, {valid, x, nan});
  return v;
}

} // namespace

void Lowerer::forEachStencilNode(const ast::ForStmt *loop, const std::function<void()> &body) {
  const ast::StencilSpec &spec = *loop->stencil;
  const std::vector<int64_t> &nodes = prog_.world.gridNodes;
  const int dim = int(nodes.size());
  const int64_t size = spec.sizeValue;
  if (dim == 0 || size < 1)
    unsupported(spec.range, "this stencil has no grid to run over");
  at(spec.range);
  Val base = expr(spec.base.get());
  if (int(base.size()) != dim)
    unsupported(spec.base->range, "the stencil's base has the wrong number of components");
  // Per axis: the base clamped into the grid (a NaN base clamps to the top),
  // and whether the whole stencil lies inside it.
  Val clamped;
  ValueId valid = 0, flat = 0;
  for (int k = 0; k < dim; ++k) {
    ValueId fb = b_.op(Op::Floor, {base[size_t(k)]});
    ValueId hi = b_.constF(double(nodes[size_t(k)] - size));
    ValueId zero = b_.constF(0.0);
    ValueId ok = b_.op(Op::And, {b_.op(Op::Ge, {fb, zero}), b_.op(Op::Le, {fb, hi})});
    valid = valid ? b_.op(Op::And, {valid, ok}) : ok;
    ValueId c = b_.op(Op::Max, {zero, b_.op(Op::Min, {hi, fb})});
    clamped.push_back(c);
    flat = k == 0 ? c : b_.add(b_.mul(flat, b_.constF(double(nodes[size_t(k)]))), c);
  }
  ValueId flatIndex = b_.op(Op::FToI, {flat});
  std::vector<int64_t> o(size_t(dim), 0);
  const int64_t count = int64_t(std::pow(double(size), dim));
  for (int64_t n = 0; n < count; ++n) {
    // o: the n-th offset, the last axis fastest.
    int64_t r = n, linear = 0;
    for (int k = dim - 1; k >= 0; --k) {
      o[size_t(k)] = r % size;
      r /= size;
    }
    for (int k = 0; k < dim; ++k)
      linear = linear * nodes[size_t(k)] + o[size_t(k)];
    Stencil s;
    s.valid = valid;
    for (int k = 0; k < dim; ++k) {
      s.offset.push_back(b_.constF(double(o[size_t(k)])));
      s.coords.push_back(b_.add(clamped[size_t(k)], s.offset.back()));
    }
    stencils_[loop] = s;
    bindLoopVar(loop, b_.op(Op::IAdd, {flatIndex, b_.constI(linear)}));
    body();
  }
  stencils_.erase(loop);
  loops_.erase(loop);
}

Val Lowerer::stencilSum(const ast::StencilExpr *e) {
  Val sum;
  forEachStencilNode(e->loop.get(), [&] {
    Val v = expr(e->body.get());
    sum = sum.empty() ? v : map2(Op::Add, sum, v);
  });
  return sum;
}

ValueId Lowerer::elementValid(const ast::Expr *e) {
  if (auto *n = ast::dynCast<ast::NameExpr>(e)) {
    if (n->ref == ast::NameRef::Element)
      if (auto it = stencils_.find(n->loop); it != stencils_.end())
        return it->second.valid;
    return 0;
  }
  if (auto *m = ast::dynCast<ast::MemberExpr>(e))
    return m->ref == ast::MemberRef::Endpoint ? elementValid(m->base.get()) : 0;
  if (auto *ix = ast::dynCast<ast::IndexExpr>(e); ix && ix->elementAt) {
    ValueId valid = 0;
    elementAt(ix, &valid);
    return valid;
  }
  return 0;
}

ValueId Lowerer::elementAt(const ast::IndexExpr *e, ValueId *valid) {
  const ast::SetDecl *set = e->type.set;
  ValueId i = b_.op(Op::Floor, {expr(e->index.get()).at(0)});
  ValueId hi = b_.sub(b_.op(Op::IToF, {b_.size(setId(set))}), b_.constF(1.0));
  ValueId zero = b_.constF(0.0);
  if (valid)
    *valid = b_.op(Op::And, {b_.op(Op::Ge, {i, zero}), b_.op(Op::Le, {i, hi})});
  return b_.op(Op::FToI, {b_.op(Op::Max, {zero, b_.op(Op::Min, {hi, i})})});
}

std::pair<ValueId, ValueId> Lowerer::elementRef(const ast::Expr *e) {
  if (auto *ix = ast::dynCast<ast::IndexExpr>(e); ix && ix->elementAt) {
    ValueId valid = 0;
    const ValueId i = elementAt(ix, &valid);
    return {i, valid};
  }
  if (auto *m = ast::dynCast<ast::MemberExpr>(e); m && m->ref == ast::MemberRef::Endpoint) {
    auto [owner, valid] = elementRef(m->base.get());
    return {b_.load(endpointBuffer(m->endpoint), owner), valid};
  }
  return {elementIndex(e), elementValid(e)};
}

Val Lowerer::readField(const ast::MemberExpr *e) {
  auto [el, valid] = elementRef(e->base.get());
  Val v = loadField(fieldBuffer(e->field), comps(e->field->type.resolved), el);
  return poison(b_, valid, std::move(v));
}

Val Lowerer::scatterValue(const ast::Expr *target, Val v) {
  return poison(b_, elementValid(target), std::move(v));
}

Val Lowerer::gridMember(const ast::MemberExpr *e) {
  auto *n = ast::dynCast<ast::NameExpr>(e->base.get());
  auto it = n ? stencils_.find(n->loop) : stencils_.end();
  if (it != stencils_.end())
    return e->ref == ast::MemberRef::GridOffset ? it->second.offset : it->second.coords;
  if (e->ref == ast::MemberRef::GridOffset)
    unsupported(e->range, "'offset' is only known for a stencil's nodes");
  // A node of a loop over the grid set: its coordinates from its index
  // (exact in f32 too: the grid has at most 2^22 nodes).
  const std::vector<int64_t> &nodes = prog_.world.gridNodes;
  ValueId rest = b_.op(Op::IToF, {elementIndex(e->base.get())});
  Val coords(nodes.size());
  for (size_t k = 0; k + 1 < nodes.size(); ++k) {
    double stride = 1;
    for (size_t j = k + 1; j < nodes.size(); ++j)
      stride *= double(nodes[j]);
    ValueId c = b_.op(Op::Floor, {b_.div(b_.add(rest, b_.constF(0.5)), b_.constF(stride))});
    coords[k] = c;
    rest = b_.sub(rest, b_.mul(c, b_.constF(stride)));
  }
  coords.back() = rest;
  return coords;
}

} // namespace evoc::irgen
