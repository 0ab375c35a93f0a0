// Lowering of the fused step kernel: the controller, then the physics' step
// body (loops over element sets, next-state stores, scatter-adds), then
// copies of the states the step leaves unchanged.
#include <set>

#include "ir/Names.h"
#include "irgen/Lowerer.h"

namespace evoc::irgen {

using ir::Op;
using ir::ValueId;

namespace {

/// Lowers the statements of a step body or a loop body.
class StepLowerer {
public:
  explicit StepLowerer(Lowerer &L) : L_(L) {}

  void stmts(const std::vector<ast::StmtPtr> &body) {
    for (const auto &s : body)
      stmt(s.get());
  }

  std::set<const ast::FieldDecl *> written;

private:
  void stmt(const ast::Stmt *s) {
    L_.at(s->range);
    switch (s->kind) {
    case ast::StmtKind::Let:
      L_.bindLet(ast::cast<ast::LetStmt>(s));
      return;
    case ast::StmtKind::For: {
      auto *f = ast::cast<ast::ForStmt>(s);
      if (f->stencil) {
        L_.forEachStencilNode(f, [&] { stmts(f->body); });
        return;
      }
      ValueId i = L_.b().beginLoop(L_.setId(f->set));
      L_.bindLoopVar(f, i);
      stmts(f->body);
      L_.b().endLoop();
      return;
    }
    case ast::StmtKind::Assign:
      assign(ast::cast<ast::AssignStmt>(s));
      return;
    case ast::StmtKind::Return:
      Lowerer::unsupported(s->range, "'return' is not allowed in a step");
    }
  }

  void assign(const ast::AssignStmt *a) {
    auto *target = ast::dynCast<ast::MemberExpr>(a->target.get());
    if (!target || !a->field)
      Lowerer::unsupported(a->range, "cannot assign to this");
    int comps = Lowerer::comps(a->field->type.resolved);
    Val v = L_.expr(a->value.get());
    ValueId el = L_.elementIndex(target->base.get());
    if (a->ref == ast::AssignRef::NextState) {
      int buf = L_.nextStateBuffer(a->field);
      written.insert(a->field);
      for (int c = 0; c < comps; ++c)
        L_.b().store(buf, L_.flatIndex(el, comps, c), v[v.size() == 1 ? 0 : c]);
      return;
    }
    if (a->ref == ast::AssignRef::Accumulate) {
      v = L_.scatterValue(target->base.get(), std::move(v));
      int buf = L_.fieldBuffer(a->field);
      for (int c = 0; c < comps; ++c) {
        ValueId x = v[v.size() == 1 ? 0 : c];
        if (a->op == ast::AssignOp::SubFrom)
          x = L_.b().op(Op::Neg, {x});
        L_.b().accAdd(buf, L_.flatIndex(el, comps, c), x);
      }
      return;
    }
    Lowerer::unsupported(a->range, "cannot assign to this field in a step");
  }

  Lowerer &L_;
};

} // namespace

void lowerStep(const sema::CheckedProgram &prog, ir::Module &m) {
  ir::Kernel &k = ir::addKernel(m, ir::names::kStep);
  k.kind = ir::KernelKind::Step;
  Lowerer L(prog, m, k);
  if (prog.controller)
    lowerController(prog, L);
  StepLowerer S(L);
  S.stmts(prog.physics->step);
  // A state the step does not assign keeps its value.
  for (const auto &set : prog.physics->sets) {
    for (const auto &f : set->fields) {
      if (f->kind != ast::FieldKind::State || S.written.count(f.get()))
        continue;
      L.at(f->range);
      int comps = Lowerer::comps(f->type.resolved);
      int from = L.fieldBuffer(f.get()), to = L.nextStateBuffer(f.get());
      ValueId i = L.b().beginLoop(L.setId(set.get()));
      for (int c = 0; c < comps; ++c) {
        ValueId idx = L.flatIndex(i, comps, c);
        L.b().store(to, idx, L.b().load(from, idx));
      }
      L.b().endLoop();
    }
  }
}

} // namespace evoc::irgen
