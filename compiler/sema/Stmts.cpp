// Checks of fns, physics (sets, fields, the step's loops and assignments),
// controllers and losses.
#include "sema/Checker.h"

#include <functional>

namespace evoc::sema {

using namespace ast;

namespace {

std::string q(const std::string &s) { return "'" + s + "'"; }

/// Resolves a written type; reports unknown names and vectors of the wrong
/// dimension for the world. Either resolves to the error type, so that what
/// uses the field, parameter or let stays silent.
void resolveType(Checker &C, TypeExpr &t) {
  const std::string &n = t.name.name;
  if (n == "scalar")
    t.resolved = Type::scalar();
  else if (n == "bool")
    t.resolved = Type::boolean();
  else if (n == "vec2" || n == "vec3" || n == "mat2" || n == "mat3") {
    // A vector or matrix field matches the world's dimension.
    const int w = n.back() - '0';
    const std::string kind = n.substr(0, 3);
    t.resolved = kind == "vec" ? Type::vec(w) : Type::mat(w);
    if (C.dimKnown && w != C.out.world.dim) {
      C.diags.error(t.name.range, n + " in a dim = " + std::to_string(C.out.world.dim) +
                                      " world; use " + kind + std::to_string(C.out.world.dim));
      t.resolved = Type::error();
    }
  } else {
    std::string c = closest(n, {"scalar", "bool", "vec2", "vec3", "mat2", "mat3"});
    C.diags.error(t.name.range, "unknown type " + q(n) +
                                    (c.empty() ? "; expected scalar, bool, vec2, vec3, mat2 or mat3"
                                               : "; did you mean '" + c + "'?"));
    t.resolved = Type::error();
  }
}

bool assignable(const Type &value, const Type &target) {
  if (value.isError() || target.isError())
    return true;
  if (value.isField())
    return false;
  return value == target || (value.kind == TypeKind::Int && target.kind == TypeKind::Scalar);
}

/// Set names are unique in a physics.
void checkSetNames(Checker &C, const PhysicsDecl &p) {
  std::map<std::string, SetDecl *> sets;
  for (auto &s : p.sets) {
    auto [it, fresh] = sets.emplace(s->name.name, s.get());
    if (!fresh)
      C.diags
          .error(s->name.range,
                 "set " + q(s->name.name) + " is declared twice in physics " + q(p.name.name))
          .note(it->second->name.range, "the first one is here");
  }
}

/// One set's members: unique names, endpoints into sets without endpoints,
/// fields of number types with constant initial values.
void checkSetMembers(Checker &C, const PhysicsDecl &p, SetDecl &s) {
  std::map<std::string, SourceRange> members;
  auto addMember = [&](const Ident &id) {
    auto [it, fresh] = members.emplace(id.name, id.range);
    if (!fresh)
      C.diags.error(id.range, q(id.name) + " is declared twice in set " + q(s.name.name))
          .note(it->second, "the first one is here");
  };
  for (auto &e : s.endpoints) {
    addMember(e.name);
    const SetDecl *t = p.findSet(e.setName.name);
    if (!t) {
      std::vector<std::string> c;
      for (auto &o : p.sets)
        c.push_back(o->name.name);
      C.undefined(e.setName.range, "set", e.setName.name, c);
    } else if (t->grid) {
      C.diags.error(e.setName.range, "endpoint " + q(e.name.name) + " points into grid set " +
                                         q(t->name.name) +
                                         ", whose nodes are reached through a stencil "
                                         "(stencil(" +
                                         t->name.name + ", base, 3)), not an endpoint");
    } else if (!t->endpoints.empty()) {
      C.diags.error(e.setName.range, "endpoint " + q(e.name.name) +
                                         " must point into a set "
                                         "without endpoints (like point), not " +
                                         q(t->name.name));
    }
    e.target = t;
  }
  for (auto &f : s.fields) {
    addMember(f->name);
    resolveType(C, f->type);
    if (f->type.resolved.kind == TypeKind::Bool)
      C.diags.error(f->type.name.range,
                    "fields hold numbers (scalar, vec2, vec3, mat2, mat3), not bool");
    if (f->init) {
      const int comps = f->type.resolved.comps();
      auto *call = dynCast<CallExpr>(f->init.get());
      const std::string what = s.name.name + "." + f->name.name;
      const std::string ctor = call ? call->callee.name : "";
      if (ctor == "vec2" || ctor == "vec3" || ctor == "mat2" || ctor == "mat3") {
        const std::string type = typeToString(f->type.resolved);
        if (!f->type.resolved.isError() && ctor != type)
          C.diags.error(f->init->range, "the initial value of " + q(what) + " is a " + ctor +
                                            ", but the field is a " + type);
        else if (int(call->args.size()) != comps || !call->namedArgs.empty())
          C.diags.error(f->init->range, "the initial value of " + q(what) + " has " +
                                            std::to_string(call->args.size()) +
                                            " components, but the field has " +
                                            std::to_string(comps));
        else
          for (auto &a : call->args)
            if (auto v = C.evalNumber(*a, what))
              f->initValue.push_back(*v);
        call->ref = CallRef::Setting;
      } else if (auto v = C.evalNumber(*f->init, what)) {
        f->initValue.assign(size_t(comps), *v);
      }
      f->init->type = Type::scalar();
    }
  }
}

/// What checking the step gathers: the temps accumulated, the inputs read
/// and the states written (cx points at the first two).
struct StepDraft {
  explicit StepDraft(const PhysicsDecl &p) {
    cx.ctx = Ctx::Step;
    cx.physics = &p;
    cx.accumulated = &accumulated;
    cx.inputsRead = &inputsRead;
    cx.scopes.emplace_back();
  }
  StepDraft(const StepDraft &) = delete;
  StepDraft &operator=(const StepDraft &) = delete;

  ExprCtx cx;
  std::set<const FieldDecl *> accumulated;
  std::map<const FieldDecl *, SourceRange> inputsRead;
  std::map<const FieldDecl *, SourceRange> stateWrites;
};

/// The target of a step assignment: elem.field (owner: the loop's set) or
/// elem.endpoint.field (owner: the endpoint's set); shapeOk if either.
struct AssignTarget {
  const SetDecl *owner = nullptr;
  const EndpointDecl *through = nullptr;
  bool shapeOk = false;
};

AssignTarget assignTarget(const ForStmt &loop, const MemberExpr *m) {
  AssignTarget t;
  if (!m)
    return t;
  if (auto *n = dynCast<NameExpr>(m->base.get())) {
    if (n->name == loop.var.name) {
      t.owner = loop.set;
      t.shapeOk = true;
    }
  } else if (auto *mm = dynCast<MemberExpr>(m->base.get())) {
    auto *n = dynCast<NameExpr>(mm->base.get());
    if (n && n->name == loop.var.name) {
      t.through = loop.set->findEndpoint(mm->member.name);
      if (t.through) {
        t.owner = t.through->target;
        t.shapeOk = true;
      }
    }
  }
  return t;
}

/// The assignment's operator against the field's kind: `=` sets a state of
/// the loop's own element once per step, `+=` / `-=` accumulate into a temp.
/// False (reported) if the assignment is refused.
bool checkAssignKind(Checker &C, StepDraft &d, AssignStmt &as, const FieldDecl &f,
                     const AssignTarget &t, std::set<const FieldDecl *> &accumulatedHere) {
  std::string fname = q(t.owner->name.name + "." + f.name.name);
  if (as.op == AssignOp::Set) {
    if (f.kind == FieldKind::Temp) {
      C.diags.error(as.opRange, "temp " + fname + " only accumulates; use += or -=");
      return false;
    }
    if (f.kind != FieldKind::State) {
      C.diags.error(as.target->range, std::string("cannot assign ") + fieldKindSpelling(f.kind) +
                                          " field " + fname +
                                          " in a step; only states change over time");
      return false;
    }
    if (t.through) {
      C.diags.error(as.target->range, "a state is written only for the loop's own element; "
                                      "write " +
                                          fname + " in 'for _ in " + t.owner->name.name + "'");
      return false;
    }
    auto [it, fresh] = d.stateWrites.emplace(&f, as.target->range);
    if (!fresh) {
      C.diags.error(as.target->range, "state " + fname + " is written twice in one step")
          .note(it->second, "it is first written here");
      return false;
    }
    as.ref = AssignRef::NextState;
    return true;
  }
  if (f.kind != FieldKind::Temp) {
    C.diags.error(as.opRange,
                  std::string("'") + (as.op == AssignOp::AddTo ? "+=" : "-=") +
                      "' accumulates into temp fields; " + fname + " is " +
                      (f.kind == FieldKind::Input ? "an " : "a ") + fieldKindSpelling(f.kind) +
                      " field" +
                      (f.kind == FieldKind::State ? " (assign its next value with '=')" : ""));
    return false;
  }
  as.ref = AssignRef::Accumulate;
  accumulatedHere.insert(&f);
  return true;
}

/// One assignment in a loop of the step: its value, its target's shape and
/// field, the operator, and the value's type against the field's.
void checkStepAssign(Checker &C, StepDraft &d, const ForStmt &loop, AssignStmt &as,
                     std::set<const FieldDecl *> &accumulatedHere) {
  ExprCtx &cx = d.cx;
  Type vt = C.check(*as.value, cx);
  auto *m = dynCast<MemberExpr>(as.target.get());
  AssignTarget t = assignTarget(loop, m);
  if (!t.shapeOk && m && isa<MemberExpr>(m->base.get()) &&
      (m->member.name == "x" || m->member.name == "y" || m->member.name == "z")) {
    C.diags.error(as.target->range, "a step assigns whole fields, not components; write "
                                    "the vector, e.g. " +
                                        loop.var.name + ".f = vec2(..., ...)");
    return;
  }
  if (!t.shapeOk) {
    C.diags.error(as.target->range, "a step assigns a field of the loop's element (" +
                                        loop.var.name + ".f) or of an endpoint (" + loop.var.name +
                                        ".a.f)");
    return;
  }
  // Type the target without counting it as a read.
  auto *savedAcc = cx.accumulated;
  auto *savedIn = cx.inputsRead;
  cx.accumulated = nullptr;
  cx.inputsRead = nullptr;
  Type tt = C.check(*as.target, cx);
  cx.accumulated = savedAcc;
  cx.inputsRead = savedIn;
  if (tt.isError() || !t.owner)
    return;
  const FieldDecl *f = m->field;
  if (!f)
    return;
  as.field = f;
  as.through = t.through;
  if (!checkAssignKind(C, d, as, *f, t, accumulatedHere))
    return;
  if (!assignable(vt, f->type.resolved))
    C.diags.error(as.value->range, q(t.owner->name.name + "." + f->name.name) + " is " +
                                       typeToString(f->type.resolved) + ", but the value is " +
                                       typeToString(vt));
}

void checkStencilLoop(Checker &C, StepDraft &d, ForStmt &loop,
                      std::set<const FieldDecl *> &accumulatedHere);

/// The body of a loop of the step (`stencil`: of a stencil loop nested in
/// one) in the loop variable's scope: lets, assignments, and in a loop of
/// the step its stencil loops.
void checkLoopBody(Checker &C, StepDraft &d, ForStmt &loop, bool stencil,
                   std::set<const FieldDecl *> &accumulatedHere) {
  ExprCtx &cx = d.cx;
  Scope ls;
  ls.loop = &loop;
  cx.scopes.push_back(std::move(ls));
  for (auto &inner : loop.body) {
    if (auto *let = dynCast<LetStmt>(inner.get())) {
      C.checkLet(*let, cx);
      continue;
    }
    if (auto *st = dynCast<ForStmt>(inner.get())) {
      if (stencil)
        C.diags.error(inner->range, "loops do not nest inside a stencil");
      else if (st->stencil)
        checkStencilLoop(C, d, *st, accumulatedHere);
      else
        C.diags.error(inner->range, "loops do not nest; follow endpoints instead (s.a.x), or "
                                    "reach a grid's nodes with a stencil (for n in "
                                    "stencil(node, base, 3))");
      continue;
    }
    auto *as = dynCast<AssignStmt>(inner.get());
    if (!as) {
      C.diags.error(inner->range, stencil ? "a stencil's body holds lets and accumulations into "
                                            "its nodes (n.m += ...)"
                                          : "a step has no 'return'; it assigns next states");
      continue;
    }
    checkStepAssign(C, d, loop, *as, accumulatedHere);
  }
  C.warnUnused(cx.scopes.back());
  cx.scopes.pop_back();
}

/// A stencil loop nested in a loop of the step, `for n in stencil(node,
/// base, 3) { n.m += w; }`: lets and accumulations into the nodes' temps.
void checkStencilLoop(Checker &C, StepDraft &d, ForStmt &loop,
                      std::set<const FieldDecl *> &accumulatedHere) {
  if (checkStencil(C, d.cx, loop))
    checkLoopBody(C, d, loop, true, accumulatedHere);
}

/// One loop of the step, `for p in point { ... }`: lets and assignments.
void checkStepLoop(Checker &C, StepDraft &d, const PhysicsDecl &p, ForStmt &loop) {
  loop.set = p.findSet(loop.setName.name);
  if (!loop.set) {
    std::vector<std::string> c;
    for (auto &o : p.sets)
      c.push_back(o->name.name);
    C.undefined(loop.setName.range, "set", loop.setName.name, c);
    return;
  }
  std::set<const FieldDecl *> accumulatedHere;
  checkLoopBody(C, d, loop, false, accumulatedHere);
  d.accumulated.insert(accumulatedHere.begin(), accumulatedHere.end());
}

/// The step's top level: lets, and loops holding the assignments.
void checkStep(Checker &C, StepDraft &d, const PhysicsDecl &p) {
  for (auto &st : p.step) {
    if (auto *let = dynCast<LetStmt>(st.get())) {
      C.checkLet(*let, d.cx);
      continue;
    }
    auto *loop = dynCast<ForStmt>(st.get());
    if (!loop) {
      C.diags.error(st->range,
                    isa<ReturnStmt>(st.get())
                        ? "a step has no 'return'; it assigns next states in loops"
                        : "assignments in a step go inside a loop: for p in point { ... }");
      continue;
    }
    checkStepLoop(C, d, p, *loop);
  }
  C.warnUnused(d.cx.scopes.back());
}

/// Warns of states the step never writes and temps nothing accumulates into.
void warnIdleFields(Checker &C, const PhysicsDecl &p, const StepDraft &d) {
  for (auto &s : p.sets)
    for (auto &f : s->fields) {
      std::string fname = q(s->name.name + "." + f->name.name);
      if (f->kind == FieldKind::State && !d.stateWrites.count(f.get()))
        C.diags.warning(f->name.range, "state " + fname +
                                           " is never written by the step, so it "
                                           "never changes; declare it 'body' if it is constant");
      if (f->kind == FieldKind::Temp && !d.accumulated.count(f.get()))
        C.diags.warning(f->name.range,
                        "nothing accumulates into temp " + fname + ", so it is always zero");
    }
}

/// Inputs read by the step must be written by the controller's outputs.
/// With controllers declared but none selected, the selection was reported.
void checkInputsWritten(Checker &C, const PhysicsDecl &p, const StepDraft &d) {
  if (&p != C.out.world.physics || !C.haveWorld ||
      (!C.out.evolve.learn.controller && !C.controllers.empty()))
    return;
  for (auto &[f, where] : d.inputsRead) {
    const ControllerDecl *c = C.out.evolve.learn.controller;
    bool written = false;
    if (c)
      for (auto &o : c->outputs)
        if (auto *m = dynCast<MemberExpr>(o.target.get()))
          if (auto *n = dynCast<NameExpr>(m->base.get()))
            if (n->name == f->owner->name.name && m->member.name == f->name.name)
              written = true;
    if (written)
      continue;
    std::string fname = q(f->owner->name.name + "." + f->name.name);
    if (c)
      C.diags
          .error(where, "input " + fname + " is read here, but controller " + q(c->name.name) +
                            " has no output that writes it")
          .note(c->name.range, "add 'outputs = " + f->owner->name.name + "." + f->name.name +
                                   " tanh;' to this controller");
    else
      C.diags.error(where, "input " + fname +
                               " is read here, but no controller writes it; "
                               "declare a controller with 'outputs = " +
                               f->owner->name.name + "." + f->name.name + " tanh;'");
  }
}

} // namespace

const PhysicsDecl *Checker::learningPhysics() const {
  if (out.world.physics)
    return out.world.physics;
  return physicsDecls.empty() ? nullptr : physicsDecls.front();
}

void Checker::checkLet(LetStmt &let, ExprCtx &cx) {
  Type t = check(*let.value, cx);
  if (let.declaredType) {
    resolveType(*this, *let.declaredType);
    if (!assignable(t, let.declaredType->resolved))
      diags.error(let.value->range, "the value of " + q(let.name.name) + " is " + typeToString(t) +
                                        ", but it is declared " +
                                        typeToString(let.declaredType->resolved));
    if (!let.declaredType->resolved.isError() && !t.isField())
      t = let.declaredType->resolved;
  }
  if (t.kind == TypeKind::Element || t.kind == TypeKind::Set || t.kind == TypeKind::World) {
    diags.error(let.value->range, "cannot bind " + typeToString(t) + " to a name; use it directly");
    t = Type::error();
  }
  let.type = t;
  Scope &s = cx.scopes.back();
  for (auto it = cx.scopes.rbegin(); it != cx.scopes.rend(); ++it) {
    auto prev = it->lets.find(let.name.name);
    if (prev != it->lets.end()) {
      diags.error(let.name.range, q(let.name.name) + " is already defined")
          .note(prev->second->name.range, "the first definition is here");
      return;
    }
    auto p = it->params.find(let.name.name);
    if (p != it->params.end()) {
      diags.error(let.name.range, q(let.name.name) + " is already a parameter")
          .note(p->second->range, "the parameter is declared here");
      return;
    }
    if (it->loop && it->loop->var.name == let.name.name) {
      diags.error(let.name.range, q(let.name.name) + " is already the loop variable")
          .note(it->loop->var.range, "the loop variable is declared here");
      return;
    }
  }
  s.lets[let.name.name] = &let;
}

void Checker::warnUnused(Scope &scope) {
  for (auto &[n, l] : scope.lets)
    if (!l->used && n[0] != '_')
      diags.warning(l->name.range, "unused let " + q(n));
}

void Checker::checkFns() {
  for (auto *fn : fns) {
    std::map<std::string, ParamDecl *> seen;
    for (auto &p : fn->params) {
      resolveType(*this, p.type);
      auto [it, fresh] = seen.emplace(p.name.name, &p);
      if (!fresh)
        diags.error(p.name.range, "parameter " + q(p.name.name) + " is declared twice")
            .note(it->second->range, "the first one is here");
    }
    resolveType(*this, fn->result);
  }
  for (auto *fn : fns) {
    ExprCtx cx;
    cx.ctx = Ctx::Fn;
    Scope s;
    for (auto &p : fn->params)
      s.params.emplace(p.name.name, &p);
    cx.scopes.push_back(std::move(s));
    bool returned = false;
    for (auto &st : fn->body) {
      if (returned) {
        diags.error(st->range, "statement after 'return' in fn " + q(fn->name.name));
        break;
      }
      if (auto *let = dynCast<LetStmt>(st.get())) {
        checkLet(*let, cx);
      } else if (auto *ret = dynCast<ReturnStmt>(st.get())) {
        returned = true;
        Type t = check(*ret->value, cx);
        if (!assignable(t, fn->result.resolved))
          diags
              .error(ret->value->range, "fn " + q(fn->name.name) + " returns " +
                                            typeToString(fn->result.resolved) + ", but this is " +
                                            typeToString(t))
              .note(fn->result.name.range, "the result type is declared here");
      } else {
        diags.error(st->range,
                    std::string("a fn body holds only 'let' and 'return'") +
                        (isa<AssignStmt>(st.get()) ? "; assignments belong in a step" : ""));
      }
    }
    if (!returned)
      diags.error(fn->name.range, "fn " + q(fn->name.name) +
                                      " has no 'return'; end it with "
                                      "'return VALUE;'");
    warnUnused(cx.scopes.back());
  }
  // Fns are inlined, so a call cycle can never be lowered.
  std::map<const FnDecl *, int> state;
  std::vector<const FnDecl *> stack;
  std::function<void(const FnDecl *)> visit = [&](const FnDecl *f) {
    state[f] = 1;
    stack.push_back(f);
    std::function<void(const Expr &)> walk = [&](const Expr &e) {
      if (auto *c = dynCast<CallExpr>(&e)) {
        if (c->fn) {
          if (state[c->fn] == 1) {
            std::string chain;
            bool in = false;
            for (auto *g : stack) {
              in = in || g == c->fn;
              if (in)
                chain += g->name.name + " -> ";
            }
            diags.error(c->callee.range, "fn " + q(c->fn->name.name) + " calls itself (" + chain +
                                             c->fn->name.name +
                                             "); fns are inlined, so recursion "
                                             "is not supported");
          } else if (state[c->fn] == 0) {
            visit(c->fn);
          }
        }
      }
      forEachChild(e, walk);
    };
    for (auto &st : f->body) {
      if (auto *let = dynCast<LetStmt>(st.get()))
        walk(*let->value);
      else if (auto *ret = dynCast<ReturnStmt>(st.get()))
        walk(*ret->value);
    }
    stack.pop_back();
    state[f] = 2;
  };
  for (auto *fn : fns)
    if (state[fn] == 0)
      visit(fn);
}

void Checker::checkPhysics(PhysicsDecl &p) {
  const int errorsBefore = diags.errorCount();
  checkSetNames(*this, p);
  for (auto &s : p.sets) {
    checkSetMembers(*this, p, *s);
    checkGridSet(*this, *s);
  }
  StepDraft d(p);
  checkStep(*this, d, p);
  if (p.stepRange.begin.line == 0)
    diags.error(p.name.range, "physics " + q(p.name.name) + " has no 'step { ... }'");
  else if (diags.errorCount() == errorsBefore)
    warnIdleFields(*this, p, d);
  checkInputsWritten(*this, p, d);
}

} // namespace evoc::sema
