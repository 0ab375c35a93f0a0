// Lowering of the loss: the expression is split into a sum of terms with
// constant coefficients; terms at fixed times go into the kernel "loss",
// each time window into a LossStep kernel "loss.wN" run once per step of
// its window. Every kernel accumulates into the Output buffer "loss".
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "ir/Names.h"
#include "irgen/Lowerer.h"

namespace evoc::irgen {

using ir::Op;
using ir::ValueId;

namespace {

struct Term {
  double coef;
  const ast::Expr *e;
  const ast::WindowExpr *window; // null: a term of the "loss" kernel
  int report;                    // index of the reported term, -1 if none
};

// Calls f on each direct sub-expression of e that lowering evaluates: its
// children (ast::forEachChild), and for a name of a let the let's value.
// The callers stop at windows, whose bodies are their own kernels.
template <class F> void forEachOperand(const ast::Expr *e, F &&f) {
  if (!e)
    return;
  if (auto *n = ast::dynCast<ast::NameExpr>(e)) {
    if (n->ref == ast::NameRef::Let)
      f(n->let->value.get());
    return;
  }
  ast::forEachChild(*e, [&](const ast::Expr &c) { f(&c); });
}

bool containsWindow(const ast::Expr *e) {
  if (!e)
    return false;
  if (e->kind == ast::ExprKind::Window)
    return true;
  bool found = false;
  forEachOperand(e, [&](const ast::Expr *c) { found = found || containsWindow(c); });
  return found;
}

// The windows a "loss" kernel term reads as reduced values, in order.
void collectWindows(const ast::Expr *e, std::vector<const ast::WindowExpr *> &out) {
  if (auto *w = ast::dynCast<ast::WindowExpr>(e)) {
    if (std::find(out.begin(), out.end(), w) == out.end())
      out.push_back(w);
    return;
  }
  forEachOperand(e, [&](const ast::Expr *c) { collectWindows(c, out); });
}

/// Splits `e` (times `coef`) into terms: a sum or mean window in a linear
/// position (summed, negated, scaled by a number) becomes a LossStep kernel
/// accumulating into the loss; anything else is a term of the "loss" kernel,
/// which reads the windows inside it (max, min, or nonlinear uses) as values
/// the runtime reduces from per-step samples.
void split(const ast::Expr *e, double coef, int report, std::vector<Term> &out) {
  if (!containsWindow(e)) {
    out.push_back({coef, e, nullptr, report});
    return;
  }
  if (auto *w = ast::dynCast<ast::WindowExpr>(e)) {
    if (w->op == ast::ReduceOp::Sum || w->op == ast::ReduceOp::Mean)
      out.push_back({coef, w->body.get(), w, report});
    else
      out.push_back({coef, e, nullptr, report});
    return;
  }
  if (auto *n = ast::dynCast<ast::NameExpr>(e); n && n->ref == ast::NameRef::Let)
    return split(n->let->value.get(), coef, report, out);
  if (auto *u = ast::dynCast<ast::UnaryExpr>(e)) {
    if (u->op == ast::UnaryOp::Neg)
      return split(u->operand.get(), -coef, report, out);
    if (u->op == ast::UnaryOp::Plus)
      return split(u->operand.get(), coef, report, out);
  }
  if (auto *b = ast::dynCast<ast::BinaryExpr>(e)) {
    auto *lnum = ast::dynCast<ast::NumberExpr>(b->lhs.get());
    auto *rnum = ast::dynCast<ast::NumberExpr>(b->rhs.get());
    switch (b->op) {
    case ast::BinaryOp::Add:
      split(b->lhs.get(), coef, report, out);
      return split(b->rhs.get(), coef, report, out);
    case ast::BinaryOp::Sub:
      split(b->lhs.get(), coef, report, out);
      return split(b->rhs.get(), -coef, report, out);
    case ast::BinaryOp::Mul:
      if (lnum)
        return split(b->rhs.get(), coef * lnum->value, report, out);
      if (rnum)
        return split(b->lhs.get(), coef * rnum->value, report, out);
      break;
    case ast::BinaryOp::Div:
      if (rnum && rnum->value != 0)
        return split(b->lhs.get(), coef / rnum->value, report, out);
      break;
    default:
      break;
    }
  }
  out.push_back({coef, e, nullptr, report}); // nonlinear in its windows
}

/// The reported terms: the summands of the loss's value that are named lets
/// (`return velocity + height + crawl;`). Empty unless at least two
/// summands and one of them named.
struct Reported {
  std::vector<std::string> names;
  std::vector<std::pair<const ast::Expr *, double>> summands; // (expr, sign)
};

void summands(const ast::Expr *e, double sign, Reported &r) {
  if (auto *b = ast::dynCast<ast::BinaryExpr>(e);
      b && (b->op == ast::BinaryOp::Add || b->op == ast::BinaryOp::Sub)) {
    summands(b->lhs.get(), sign, r);
    return summands(b->rhs.get(), b->op == ast::BinaryOp::Sub ? -sign : sign, r);
  }
  if (auto *u = ast::dynCast<ast::UnaryExpr>(e); u && u->op == ast::UnaryOp::Neg)
    return summands(u->operand.get(), -sign, r);
  auto *n = ast::dynCast<ast::NameExpr>(e);
  r.names.push_back(n && n->ref == ast::NameRef::Let ? n->name
                                                     : fmt::format("term{}", r.names.size() + 1));
  r.summands.push_back({e, sign});
}

void accumulate(Lowerer &L, int lossBuf, int termsBuf, const Term &t) {
  L.at(t.e->range);
  Val v = L.expr(t.e);
  if (v.size() != 1)
    Lowerer::unsupported(t.e->range, "a loss term must be a scalar");
  ValueId x = t.coef == 1 ? v[0] : L.b().mul(L.b().constF(t.coef), v[0]);
  L.b().accAdd(lossBuf, L.b().constI(0), x);
  if (termsBuf >= 0 && t.report >= 0)
    L.b().accAdd(termsBuf, L.b().constI(t.report), x);
}

} // namespace

void lowerLoss(const sema::CheckedProgram &prog, ir::Module &m) {
  const ast::LossDecl *loss = prog.loss;
  if (!loss)
    return;
  int lossBuf = ensureBuffer(m, {.name = ir::names::kLoss,
                                 .role = ir::Role::Output,
                                 .field = ir::names::kLoss,
                                 .differentiable = true});
  Reported rep;
  summands(loss->value.get(), 1.0, rep);
  bool named = false;
  for (const auto &[e, sign] : rep.summands)
    if (auto *n = ast::dynCast<ast::NameExpr>(e); n && n->ref == ast::NameRef::Let)
      named = true;
  int termsBuf = -1;
  std::vector<Term> terms;
  if (named && rep.summands.size() >= 2) {
    termsBuf = ensureBuffer(m, {.name = ir::names::kLossTerms,
                                .role = ir::Role::Output,
                                .comps = int(rep.names.size()),
                                .field = ir::names::kLossTerms});
    m.lossTerms = rep.names;
    for (size_t k = 0; k < rep.summands.size(); ++k)
      split(rep.summands[k].first, rep.summands[k].second, int(k), terms);
  } else {
    split(loss->value.get(), 1.0, -1, terms);
  }

  auto newKernel = [&](const std::string &name, ir::KernelKind kind) -> ir::Kernel & {
    ir::addKernel(m, name, kind);
    return m.kernels.back();
  };

  // Windows the "loss" kernel reads as reduced values: one sample kernel each.
  std::vector<const ast::WindowExpr *> reduced;
  for (const Term &t : terms)
    if (!t.window)
      collectWindows(t.e, reduced);
  std::map<const ast::WindowExpr *, int> slots;
  if (!reduced.empty()) {
    const int n = int(reduced.size());
    int sampleBuf = ensureBuffer(m, {.name = ir::names::kLossSample,
                                     .role = ir::Role::Output,
                                     .comps = n,
                                     .field = ir::names::kLossSample,
                                     .differentiable = true});
    ensureBuffer(m, {.name = ir::names::kLossWindow,
                     .role = ir::Role::Window,
                     .comps = n,
                     .field = ir::names::kLossWindow,
                     .differentiable = true});
    for (int i = 0; i < n; ++i) {
      const ast::WindowExpr *w = reduced[size_t(i)];
      slots[w] = i;
      ir::Kernel &k = newKernel(fmt::format("loss.r{}", i), ir::KernelKind::LossStep);
      k.windowBegin = w->loValue;
      k.windowEnd = w->hiValue;
      k.windowSlot = i;
      k.windowReduce = w->op == ast::ReduceOp::Sum    ? ir::WindowReduce::Sum
                       : w->op == ast::ReduceOp::Mean ? ir::WindowReduce::Mean
                       : w->op == ast::ReduceOp::Max  ? ir::WindowReduce::Max
                                                      : ir::WindowReduce::Min;
      Lowerer L(prog, m, k);
      L.window = w;
      L.at(w->body->range);
      Val v = L.expr(w->body.get());
      if (v.size() != 1)
        Lowerer::unsupported(w->body->range, "a window reduces a scalar per step");
      L.b().accAdd(sampleBuf, L.b().constI(i), v[0]);
    }
  }

  bool anyFixed = false;
  for (const Term &t : terms)
    anyFixed |= t.window == nullptr;
  if (anyFixed) {
    ir::Kernel &k = newKernel(ir::names::kLoss, ir::KernelKind::Loss);
    Lowerer L(prog, m, k);
    L.reducedWindows = &slots;
    for (const Term &t : terms)
      if (!t.window)
        accumulate(L, lossBuf, termsBuf, t);
  }
  int n = 0;
  for (const Term &t : terms) {
    if (!t.window)
      continue;
    const ast::WindowExpr *w = t.window;
    Term scaled = t;
    if (w->op == ast::ReduceOp::Mean)
      scaled.coef /= double(w->hiValue - w->loValue + 1);
    ir::Kernel &k = newKernel(fmt::format("loss.w{}", n++), ir::KernelKind::LossStep);
    k.windowBegin = w->loValue;
    k.windowEnd = w->hiValue;
    Lowerer L(prog, m, k);
    L.window = w;
    accumulate(L, lossBuf, termsBuf, scaled);
  }
}

} // namespace evoc::irgen
