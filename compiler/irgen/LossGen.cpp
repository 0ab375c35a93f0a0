// Lowering of the loss: the expression is split into a sum of terms with
// constant coefficients; terms at fixed times go into the kernel "loss",
// each time window into a LossStep kernel "loss.wN" run once per step of
// its window. Every kernel accumulates into the Output buffer "loss".
#include <fmt/format.h>

#include "irgen/Lowerer.h"

namespace evoc::irgen {

using ir::Op;
using ir::ValueId;

namespace {

struct Term {
  double coef;
  const ast::Expr *e;
  const ast::WindowExpr *window; // null: a term at fixed times
};

bool containsWindow(const ast::Expr *e) {
  if (!e)
    return false;
  switch (e->kind) {
  case ast::ExprKind::Window:
    return true;
  case ast::ExprKind::Unary:
    return containsWindow(ast::cast<ast::UnaryExpr>(e)->operand.get());
  case ast::ExprKind::Binary: {
    auto *b = ast::cast<ast::BinaryExpr>(e);
    return containsWindow(b->lhs.get()) || containsWindow(b->rhs.get());
  }
  case ast::ExprKind::Call:
    for (const auto &a : ast::cast<ast::CallExpr>(e)->args)
      if (containsWindow(a.get()))
        return true;
    return false;
  case ast::ExprKind::If: {
    auto *i = ast::cast<ast::IfExpr>(e);
    return containsWindow(i->cond.get()) || containsWindow(i->thenExpr.get()) ||
           containsWindow(i->elseExpr.get());
  }
  case ast::ExprKind::Member:
    return containsWindow(ast::cast<ast::MemberExpr>(e)->base.get());
  case ast::ExprKind::Name: {
    auto *n = ast::cast<ast::NameExpr>(e);
    return n->ref == ast::NameRef::Let && containsWindow(n->let->value.get());
  }
  default:
    return false;
  }
}

/// Splits `e` (times `coef`) into terms; a window may appear only in a
/// linear position (summed, negated, scaled by a number).
void split(const ast::Expr *e, double coef, std::vector<Term> &out) {
  if (!containsWindow(e)) {
    out.push_back({coef, e, nullptr});
    return;
  }
  if (auto *w = ast::dynCast<ast::WindowExpr>(e)) {
    out.push_back({coef, w->body.get(), w});
    return;
  }
  if (auto *n = ast::dynCast<ast::NameExpr>(e); n && n->ref == ast::NameRef::Let)
    return split(n->let->value.get(), coef, out);
  if (auto *u = ast::dynCast<ast::UnaryExpr>(e)) {
    if (u->op == ast::UnaryOp::Neg)
      return split(u->operand.get(), -coef, out);
    if (u->op == ast::UnaryOp::Plus)
      return split(u->operand.get(), coef, out);
  }
  if (auto *b = ast::dynCast<ast::BinaryExpr>(e)) {
    auto *lnum = ast::dynCast<ast::NumberExpr>(b->lhs.get());
    auto *rnum = ast::dynCast<ast::NumberExpr>(b->rhs.get());
    switch (b->op) {
    case ast::BinaryOp::Add:
      split(b->lhs.get(), coef, out);
      return split(b->rhs.get(), coef, out);
    case ast::BinaryOp::Sub:
      split(b->lhs.get(), coef, out);
      return split(b->rhs.get(), -coef, out);
    case ast::BinaryOp::Mul:
      if (lnum)
        return split(b->rhs.get(), coef * lnum->value, out);
      if (rnum)
        return split(b->lhs.get(), coef * rnum->value, out);
      break;
    case ast::BinaryOp::Div:
      if (rnum && rnum->value != 0)
        return split(b->lhs.get(), coef / rnum->value, out);
      break;
    default:
      break;
    }
  }
  Lowerer::unsupported(e->range, "a time window in a loss must be a term of a sum "
                                 "(optionally scaled by a number)");
}

void accumulate(Lowerer &L, int lossBuf, double coef, const ast::Expr *e) {
  L.at(e->range);
  Val v = L.expr(e);
  if (v.size() != 1)
    Lowerer::unsupported(e->range, "a loss term must be a scalar");
  ValueId x = coef == 1 ? v[0] : L.b().mul(L.b().constF(coef), v[0]);
  L.b().accAdd(lossBuf, L.b().constI(0), x);
}

} // namespace

void lowerLoss(const sema::CheckedProgram &prog, ir::Module &m) {
  const ast::LossDecl *loss = prog.loss;
  if (!loss)
    return;
  int lossBuf = ensureBuffer(
      m, {.name = "loss", .role = ir::Role::Output, .field = "loss", .differentiable = true});
  std::vector<Term> terms;
  split(loss->value.get(), 1.0, terms);

  auto newKernel = [&](const std::string &name, ir::KernelKind kind) -> ir::Kernel & {
    m.kernels.emplace_back();
    m.kernels.back().name = name;
    m.kernels.back().kind = kind;
    return m.kernels.back();
  };

  bool anyFixed = false;
  for (const Term &t : terms)
    anyFixed |= t.window == nullptr;
  if (anyFixed) {
    ir::Kernel &k = newKernel("loss", ir::KernelKind::Loss);
    Lowerer L(prog, m, k);
    for (const Term &t : terms)
      if (!t.window)
        accumulate(L, lossBuf, t.coef, t.e);
  }
  int n = 0;
  for (const Term &t : terms) {
    if (!t.window)
      continue;
    const ast::WindowExpr *w = t.window;
    double coef = t.coef;
    if (w->op == ast::ReduceOp::Mean)
      coef /= double(w->hiValue - w->loValue + 1);
    else if (w->op != ast::ReduceOp::Sum)
      Lowerer::unsupported(w->range, "only sum and mean windows are supported in a loss");
    ir::Kernel &k = newKernel(fmt::format("loss.w{}", n++), ir::KernelKind::LossStep);
    k.windowBegin = w->loValue;
    k.windowEnd = w->hiValue;
    Lowerer L(prog, m, k);
    L.window = w;
    accumulate(L, lossBuf, coef, t.e);
  }
}

} // namespace evoc::irgen
