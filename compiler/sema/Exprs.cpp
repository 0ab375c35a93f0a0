// Typing expressions: name resolution, field/element-set rules, builtins,
// fn calls, time indices and windows. Fills the AST's annotations.
#include "sema/Checker.h"

namespace evoc::sema {

using namespace ast;

namespace {

struct BuiltinInfo {
  const char *name;
  Builtin id;
  int minArgs, maxArgs;
};

const BuiltinInfo kBuiltins[] = {
    {"norm", Builtin::Norm, 1, 1},   {"dot", Builtin::Dot, 2, 2},
    {"clamp", Builtin::Clamp, 3, 3}, {"abs", Builtin::Abs, 1, 1},
    {"min", Builtin::Min, 1, 2},     {"max", Builtin::Max, 1, 2},
    {"exp", Builtin::Exp, 1, 1},     {"log", Builtin::Log, 1, 1},
    {"sin", Builtin::Sin, 1, 1},     {"cos", Builtin::Cos, 1, 1},
    {"tanh", Builtin::Tanh, 1, 1},   {"sqrt", Builtin::Sqrt, 1, 1},
    {"pow", Builtin::Pow, 2, 2},     {"floor", Builtin::Floor, 1, 1},
    {"vec2", Builtin::Vec2, 2, 2},   {"vec3", Builtin::Vec3, 3, 3},
    {"sum", Builtin::Sum, 1, 1},     {"mean", Builtin::Mean, 1, 1},
    {"sin_waves", Builtin::SinWaves, 1, 1},
};

const char *ctxWord(Ctx c) {
  switch (c) {
  case Ctx::Fn: return "a fn";
  case Ctx::Step: return "a physics step";
  case Ctx::Controller: return "a controller";
  case Ctx::Loss: return "a loss";
  case Ctx::Setting: return "a setting";
  }
  return "here";
}

std::string q(const std::string &s) { return "'" + s + "'"; }

bool isScalarLike(const Type &t) { return t.kind == TypeKind::Scalar || t.kind == TypeKind::Int; }

} // namespace

void Checker::undefined(const SourceRange &r, const std::string &what, const std::string &name,
                        const std::vector<std::string> &candidates) {
  std::string c = closest(name, candidates);
  diags.error(r, "undefined " + what + " '" + name + "'" +
                     (c.empty() ? std::string() : "; did you mean '" + c + "'?"));
}

namespace {

/// The typing of one expression tree; a thin class so helpers share state.
class Typer {
public:
  Typer(Checker &c, ExprCtx &cx) : C(c), cx(cx), diags(c.diags) {}

  Type check(Expr &e) {
    Type t = dispatch(e);
    e.type = t;
    return t;
  }

private:
  Checker &C;
  ExprCtx &cx;
  DiagnosticEngine &diags;

  Type err() { return Type::error(); }

  /// The common element set of two operands, or reports a mismatch.
  bool combine(const Type &a, const Type &b, const SourceRange &r, const SetDecl *&out) {
    out = a.set ? a.set : b.set;
    if (a.set && b.set && a.set != b.set) {
      diags.error(r, "cannot combine a field over " + q(a.set->name.name) +
                         " with a field over " + q(b.set->name.name) +
                         "; reduce one of them first (sum, mean, min, max)");
      return false;
    }
    return true;
  }

  Type dispatch(Expr &e) {
    switch (e.kind) {
    case ExprKind::Number: return Type::scalar();
    case ExprKind::Bool: return Type::boolean();
    case ExprKind::String:
      diags.error(e.range, "a string is not a value in " + std::string(ctxWord(cx.ctx)));
      return err();
    case ExprKind::Tuple:
    case ExprKind::List:
      diags.error(e.range, std::string(e.kind == ExprKind::Tuple ? "a tuple" : "a list") +
                               " is only allowed in settings; use vec2(..) or vec3(..) for vectors");
      return err();
    case ExprKind::Name: return name(*cast<NameExpr>(&e));
    case ExprKind::Member: return member(*cast<MemberExpr>(&e));
    case ExprKind::Index: return index(*cast<IndexExpr>(&e));
    case ExprKind::Call: return call(*cast<CallExpr>(&e));
    case ExprKind::Unary: return unary(*cast<UnaryExpr>(&e));
    case ExprKind::Binary: return binary(*cast<BinaryExpr>(&e));
    case ExprKind::If: return ifExpr(*cast<IfExpr>(&e));
    case ExprKind::Window: return window(*cast<WindowExpr>(&e));
    }
    return err();
  }

  std::vector<std::string> visibleNames() {
    std::vector<std::string> v;
    for (auto &s : cx.scopes) {
      for (auto &[n, l] : s.lets)
        v.push_back(n);
      for (auto &[n, p] : s.params)
        v.push_back(n);
      if (s.loop)
        v.push_back(s.loop->var.name);
      if (s.window)
        v.push_back(s.window->var.name);
    }
    if (cx.physics)
      for (auto &s : cx.physics->sets)
        v.push_back(s->name.name);
    v.push_back("world");
    if (cx.ctx == Ctx::Loss)
      v.push_back("T");
    return v;
  }

  Type name(NameExpr &n) {
    for (auto it = cx.scopes.rbegin(); it != cx.scopes.rend(); ++it) {
      if (auto l = it->lets.find(n.name); l != it->lets.end()) {
        n.ref = NameRef::Let;
        n.let = l->second;
        l->second->used = true;
        return l->second->type;
      }
      if (auto p = it->params.find(n.name); p != it->params.end()) {
        n.ref = NameRef::Param;
        n.param = p->second;
        p->second->used = true;
        return p->second->type.resolved;
      }
      if (it->loop && it->loop->var.name == n.name) {
        n.ref = NameRef::Element;
        n.loop = it->loop;
        if (!it->loop->set)
          return err();
        return {TypeKind::Element, 1, it->loop->set};
      }
      if (it->window && it->window->var.name == n.name) {
        n.ref = NameRef::WindowVar;
        n.window = it->window;
        return Type::integer();
      }
    }
    if (n.name == "world") {
      n.ref = NameRef::World;
      return {TypeKind::World};
    }
    if (n.name == "T" && cx.ctx == Ctx::Loss) {
      n.ref = NameRef::LastTime;
      n.constValue = double(C.out.world.steps - 1);
      return Type::integer();
    }
    if (n.name == "pi") {
      n.ref = NameRef::Constant;
      n.constValue = 3.14159265358979323846;
      return Type::scalar();
    }
    if (cx.ctx != Ctx::Fn && cx.ctx != Ctx::Setting) {
      if (cx.physics) {
        if (const SetDecl *s = cx.physics->findSet(n.name)) {
          n.ref = NameRef::Set;
          n.set = s;
          return {TypeKind::Set, 1, s};
        }
      } else if (C.physicsDecls.empty() && (n.name == "point" || n.name == "spring")) {
        // A library file with no physics: nothing to check fields against.
        return err();
      }
    }
    if (n.name == "T")
      diags.error(n.range, "'T' (the last time index) is only available in losses");
    else if (auto d = C.names.find(n.name); d != C.names.end()) {
      const char *kind = d->second->kind == DeclKind::Fn ? "a fn; call it with arguments"
                                                         : "a declaration, not a value";
      diags.error(n.range, q(n.name) + " is " + kind)
          .note(d->second->name.range, q(n.name) + " is declared here");
    } else if (cx.ctx == Ctx::Fn && cx.physics == nullptr && !C.physicsDecls.empty() &&
               C.learningPhysics() && C.learningPhysics()->findSet(n.name))
      diags.error(n.range, "a fn cannot use the element set " + q(n.name) +
                               "; pass the values it needs as parameters");
    else
      C.undefined(n.range, "name", n.name, visibleNames());
    return err();
  }

  Type member(MemberExpr &m) {
    bool timed = cx.timed;
    cx.timed = false;
    Type base = check(*m.base);
    const std::string &f = m.member.name;
    switch (base.kind) {
    case TypeKind::Error: return err();
    case TypeKind::Element: return elementMember(m, base.set);
    case TypeKind::Set: return setMember(m, base.set, timed);
    case TypeKind::World: return worldMember(m);
    case TypeKind::Vec: {
      int c = f == "x" ? 0 : f == "y" ? 1 : f == "z" ? 2 : -1;
      if (c < 0 || c >= base.width) {
        diags.error(m.member.range, "vec" + std::to_string(base.width) + " has no component " +
                                        q(f) + (base.width == 2 ? "; use .x or .y" : "; use .x, .y or .z"));
        return err();
      }
      m.ref = MemberRef::Component;
      m.component = c;
      return {TypeKind::Scalar, 1, base.set};
    }
    default:
      diags.error(m.member.range, "a value of type " + typeToString(base) + " has no member " + q(f));
      return err();
    }
  }

  /// Reports a field of another set used on this set's element or namespace.
  void noSuchMember(MemberExpr &m, const SetDecl *s, const std::string &how) {
    const std::string &f = m.member.name;
    if (s->physics)
      for (const auto &other : s->physics->sets)
        if (other.get() != s && (other->findField(f) || other->findEndpoint(f))) {
          diags.error(m.member.range, q(f) + " is a field of " + q(other->name.name) + ", but " +
                                          how + " " + q(s->name.name))
              .note(other->name.range, q(other->name.name) + " is declared here");
          return;
        }
    std::vector<std::string> cands;
    for (const auto &fd : s->fields)
      cands.push_back(fd->name.name);
    for (const auto &ep : s->endpoints)
      cands.push_back(ep.name.name);
    std::string c = closest(f, cands);
    diags.error(m.member.range, "set " + q(s->name.name) + " has no field " + q(f) +
                                    (c.empty() ? std::string() : "; did you mean '" + c + "'?"));
  }

  Type elementMember(MemberExpr &m, const SetDecl *s) {
    const std::string &f = m.member.name;
    if (const FieldDecl *fd = s->findField(f)) {
      m.ref = MemberRef::Field;
      m.field = fd;
      if (fd->kind == FieldKind::Input && cx.inputsRead && !cx.inputsRead->count(fd))
        (*cx.inputsRead)[fd] = m.member.range;
      if (fd->kind == FieldKind::Temp && cx.accumulated && !cx.accumulated->count(fd))
        diags.warning(m.member.range, "temp " + q(f) + " is read before anything accumulates "
                                      "into it in this step, so it is zero here");
      return fd->type.resolved;
    }
    if (const EndpointDecl *ep = s->findEndpoint(f)) {
      m.ref = MemberRef::Endpoint;
      m.endpoint = ep;
      if (!ep->target)
        return err();
      return {TypeKind::Element, 1, ep->target};
    }
    noSuchMember(m, s, "this is an element of");
    return err();
  }

  Type setMember(MemberExpr &m, const SetDecl *s, bool timed) {
    const std::string &f = m.member.name;
    const FieldDecl *fd = s->findField(f);
    if (!fd) {
      if (s->findEndpoint(f)) {
        diags.error(m.member.range, "endpoint " + q(f) + " is followed per element: write "
                                    "'for e in " + s->name.name + " { ... e." + f + " ... }'");
        return err();
      }
      noSuchMember(m, s, "this is the set");
      return err();
    }
    m.ref = MemberRef::SetField;
    m.field = fd;
    if (fd->kind == FieldKind::Temp) {
      diags.error(m.range, "temp " + q(f) + " exists only inside a step's loops");
      return err();
    }
    if (cx.ctx == Ctx::Controller && fd->kind == FieldKind::Input) {
      diags.error(m.range, "input " + q(f) + " is written by the controller's outputs; "
                           "a controller cannot read it");
      return err();
    }
    if (cx.ctx == Ctx::Loss && fd->kind == FieldKind::State && !timed) {
      diags.error(m.range, "a loss sees the whole trajectory: give the state a time, e.g. " +
                               s->name.name + "." + f + "[T] or " + s->name.name + "." + f +
                               "[t] in a window");
      return err();
    }
    if (cx.ctx == Ctx::Loss && fd->kind == FieldKind::Input) {
      diags.error(m.range, "a loss cannot read input " + q(f) + "; use the states");
      return err();
    }
    if (fd->kind == FieldKind::Input && cx.inputsRead && !cx.inputsRead->count(fd))
      (*cx.inputsRead)[fd] = m.member.range;
    Type t = fd->type.resolved;
    if (t.isError())
      return err();
    t.set = s;
    return t;
  }

  Type worldMember(MemberExpr &m) {
    const std::string &f = m.member.name;
    const World &w = C.out.world;
    auto *baseMember = dynCast<MemberExpr>(m.base.get());
    m.ref = MemberRef::WorldSetting;
    if (baseMember && baseMember->worldKey == "ground") {
      m.worldKey = "ground." + f;
      if (f == "height")
        m.constValue = w.ground.height;
      else if (f == "friction")
        m.constValue = w.ground.friction;
      else {
        diags.error(m.member.range, "world.ground has no " + q(f) + "; use height or friction");
        return err();
      }
      return Type::scalar();
    }
    m.worldKey = f;
    if (f == "ground")
      return {TypeKind::World};
    if (f == "dt")
      m.constValue = w.dt;
    else if (f == "gravity")
      m.constValue = w.gravity;
    else if (f == "damping")
      m.constValue = w.damping;
    else if (f == "dim")
      m.constValue = w.dim;
    else if (f == "steps")
      m.constValue = double(w.steps);
    else {
      std::string c = closest(f, {"dt", "gravity", "damping", "dim", "steps", "ground"});
      diags.error(m.member.range, "unknown world setting " + q(f) +
                                      (c.empty() ? std::string() : "; did you mean '" + c + "'?"));
      return err();
    }
    return Type::scalar();
  }

  /// A time index: constant (over T) or window variable plus offset.
  bool timeOf(const Expr &e, const WindowExpr *&win, int64_t &value) {
    if (auto *n = dynCast<NumberExpr>(&e)) {
      if (!n->isInteger && n->value != double(int64_t(n->value)))
        return false;
      value = int64_t(n->value);
      return true;
    }
    if (auto *n = dynCast<NameExpr>(&e)) {
      if (n->ref == NameRef::LastTime) {
        value = int64_t(n->constValue);
        return true;
      }
      if (n->ref == NameRef::WindowVar) {
        win = n->window;
        value = 0;
        return true;
      }
      return false;
    }
    if (auto *b = dynCast<BinaryExpr>(&e)) {
      if (b->op != BinaryOp::Add && b->op != BinaryOp::Sub)
        return false;
      const WindowExpr *wl = nullptr, *wr = nullptr;
      int64_t l = 0, r = 0;
      if (!timeOf(*b->lhs, wl, l) || !timeOf(*b->rhs, wr, r))
        return false;
      if (wr && (wl || b->op == BinaryOp::Sub))
        return false;
      win = wl ? wl : wr;
      value = b->op == BinaryOp::Add ? l + r : l - r;
      return true;
    }
    return false;
  }

  Type index(IndexExpr &ix) {
    if (cx.ctx != Ctx::Loss) {
      diags.error(ix.range, "states at a time (x[t]) are only available in losses");
      return err();
    }
    cx.timed = true;
    Type base = check(*ix.base);
    cx.timed = false;
    Type it = check(*ix.index);
    if (base.isError() || it.isError())
      return err();
    auto *m = dynCast<MemberExpr>(ix.base.get());
    if (!m || m->ref != MemberRef::SetField || m->field->kind != FieldKind::State) {
      diags.error(ix.range, "only a state field over a set can take a time, e.g. point.x[T]");
      return err();
    }
    const WindowExpr *win = nullptr;
    int64_t v = 0;
    if (!timeOf(*ix.index, win, v)) {
      diags.error(ix.index->range, "a time must be a whole number, T, or a window variable "
                                   "plus or minus a whole number (x[0], x[T - 1], x[t])");
      return err();
    }
    int64_t T = C.out.world.steps - 1;
    if (win) {
      ix.timeWindow = win;
      ix.timeOffset = v;
      if (win->loValue + v < 0 || win->hiValue + v > T)
        diags.error(ix.index->range, "time t" + std::string(v == 0 ? "" : v < 0 ? " - " : " + ") +
                                         (v == 0 ? "" : std::to_string(v < 0 ? -v : v)) + " leaves 0..T (T = " +
                                         std::to_string(T) + ") for t in " +
                                         std::to_string(win->loValue) + ".." +
                                         std::to_string(win->hiValue));
    } else {
      ix.timeIsConstant = true;
      ix.timeValue = v;
      if (v < 0 || v > T)
        diags.error(ix.index->range, "time " + std::to_string(v) + " is outside 0..T (T = steps - 1 = " +
                                         std::to_string(T) + ")");
    }
    return base;
  }

  Type window(WindowExpr &w) {
    if (cx.ctx != Ctx::Loss) {
      diags.error(w.range, "time windows (" + w.op_name.name + "(t in a..b: ...)) are only "
                           "available in losses");
      return err();
    }
    Type lo = check(*w.lo), hi = check(*w.hi);
    if (lo.isError() || hi.isError())
      return err();
    const WindowExpr *wl = nullptr, *wh = nullptr;
    int64_t l = 0, h = 0;
    if (!timeOf(*w.lo, wl, l) || !timeOf(*w.hi, wh, h) || wl || wh) {
      diags.error(SourceRange::join(w.lo->range, w.hi->range),
                  "window bounds must be whole numbers or T plus or minus a whole number");
      return err();
    }
    int64_t T = C.out.world.steps - 1;
    if (l < 0 || h > T || l > h) {
      diags.error(SourceRange::join(w.lo->range, w.hi->range),
                  "window " + std::to_string(l) + ".." + std::to_string(h) +
                      " must lie within 0..T (T = " + std::to_string(T) + ") with its start first");
      l = 0; // no follow-up errors about times inside the window
      h = T;
    }
    w.loValue = l;
    w.hiValue = h;
    Scope s;
    s.window = &w;
    cx.scopes.push_back(std::move(s));
    Type body = check(*w.body);
    cx.scopes.pop_back();
    if (body.isError())
      return err();
    if (!body.isNumeric()) {
      diags.error(w.body->range, "a window reduces numbers, not " + typeToString(body));
      return err();
    }
    if (body.kind == TypeKind::Int)
      body.kind = TypeKind::Scalar;
    return body;
  }

  Type unary(UnaryExpr &u) {
    Type t = check(*u.operand);
    if (t.isError())
      return err();
    if (u.op == UnaryOp::Not) {
      if (t.kind != TypeKind::Bool) {
        diags.error(u.range, "'!' needs a bool, not " + typeToString(t));
        return err();
      }
      return t;
    }
    if (!t.isNumeric()) {
      diags.error(u.range, std::string("'") + unaryOpSpelling(u.op) + "' needs a number, not " +
                               typeToString(t));
      return err();
    }
    return t;
  }

  Type binary(BinaryExpr &b) {
    Type l = check(*b.lhs), r = check(*b.rhs);
    if (l.isError() || r.isError())
      return err();
    std::string op = binaryOpSpelling(b.op);
    auto bad = [&](const std::string &hint) {
      diags.error(b.opRange, "cannot apply '" + op + "' to " + typeToString(l) + " and " +
                                 typeToString(r) + hint);
      return err();
    };
    const SetDecl *set = nullptr;
    if (b.op == BinaryOp::And || b.op == BinaryOp::Or) {
      if (l.kind != TypeKind::Bool || r.kind != TypeKind::Bool)
        return bad("; both sides must be bool");
      if (!combine(l, r, b.range, set))
        return err();
      return {TypeKind::Bool, 1, set};
    }
    if (!l.isNumeric() && l.kind != TypeKind::Bool)
      return bad("");
    if (!r.isNumeric() && r.kind != TypeKind::Bool)
      return bad("");
    if (!combine(l, r, b.range, set))
      return err();
    bool ls = isScalarLike(l), rs = isScalarLike(r);
    switch (b.op) {
    case BinaryOp::Lt: case BinaryOp::Le: case BinaryOp::Gt: case BinaryOp::Ge:
      if (!ls || !rs)
        return bad(l.kind == TypeKind::Vec || r.kind == TypeKind::Vec
                       ? "; compare components (.x, .y) or norms" : "");
      return {TypeKind::Bool, 1, set};
    case BinaryOp::Eq: case BinaryOp::Ne:
      if (!((ls && rs) || (l.kind == TypeKind::Bool && r.kind == TypeKind::Bool)))
        return bad("");
      return {TypeKind::Bool, 1, set};
    case BinaryOp::Add: case BinaryOp::Sub:
      if (ls && rs)
        return {l.kind == TypeKind::Int && r.kind == TypeKind::Int ? TypeKind::Int
                                                                   : TypeKind::Scalar, 1, set};
      if (l.kind == TypeKind::Vec && r.kind == TypeKind::Vec && l.width == r.width)
        return {TypeKind::Vec, l.width, set};
      return bad(l.kind == TypeKind::Vec && r.kind == TypeKind::Vec ? "; vector sizes differ" : "");
    case BinaryOp::Mul:
      if (ls && rs)
        return {l.kind == TypeKind::Int && r.kind == TypeKind::Int ? TypeKind::Int
                                                                   : TypeKind::Scalar, 1, set};
      if (ls && r.kind == TypeKind::Vec)
        return {TypeKind::Vec, r.width, set};
      if (l.kind == TypeKind::Vec && rs)
        return {TypeKind::Vec, l.width, set};
      return bad(l.kind == TypeKind::Vec && r.kind == TypeKind::Vec
                     ? "; use dot(a, b) for a dot product" : "");
    case BinaryOp::Div:
      if (ls && rs)
        return {TypeKind::Scalar, 1, set};
      if (l.kind == TypeKind::Vec && rs)
        return {TypeKind::Vec, l.width, set};
      return bad("; only a number or a vector divided by a number is defined");
    default:
      return bad("");
    }
  }

  Type ifExpr(IfExpr &f) {
    Type c = check(*f.cond), a = check(*f.thenExpr), b = check(*f.elseExpr);
    if (c.isError() || a.isError() || b.isError())
      return err();
    if (c.kind != TypeKind::Bool) {
      diags.error(f.cond->range, "the condition of 'if' must be bool, not " + typeToString(c));
      return err();
    }
    const SetDecl *set = nullptr;
    if (!combine(c, a, f.range, set) || !combine(a, b, f.range, set))
      return err();
    set = c.set ? c.set : a.set ? a.set : b.set;
    if (isScalarLike(a) && isScalarLike(b))
      return {a.kind == TypeKind::Int && b.kind == TypeKind::Int ? TypeKind::Int
                                                                 : TypeKind::Scalar, 1, set};
    if (a.kind == b.kind && a.width == b.width && (a.kind == TypeKind::Vec || a.kind == TypeKind::Bool))
      return {a.kind, a.width, set};
    diags.error(f.range, "the branches of 'if' differ: " + typeToString(a) + " and " +
                             typeToString(b));
    return err();
  }

  Type call(CallExpr &c) {
    const std::string &fname = c.callee.name;
    const BuiltinInfo *bi = nullptr;
    for (const auto &b : kBuiltins)
      if (fname == b.name)
        bi = &b;
    if (!bi) {
      auto d = C.names.find(fname);
      if (d != C.names.end() && d->second->kind == DeclKind::Fn)
        return fnCall(c, *cast<FnDecl>(d->second));
      if (d != C.names.end()) {
        diags.error(c.callee.range, q(fname) + " is not a function")
            .note(d->second->name.range, q(fname) + " is declared here");
        return err();
      }
      std::vector<std::string> cands;
      for (const auto &b : kBuiltins)
        cands.push_back(b.name);
      for (auto *f : C.fns)
        cands.push_back(f->name.name);
      C.undefined(c.callee.range, "function", fname, cands);
      return err();
    }
    c.ref = CallRef::Builtin;
    c.builtin = bi->id;
    int n = int(c.args.size());
    if (bi->id == Builtin::SinWaves)
      return sinWaves(c);
    if (!c.namedArgs.empty()) {
      diags.error(c.namedArgs[0].name.range, q(fname) + " takes no named arguments");
      return err();
    }
    if (n < bi->minArgs || n > bi->maxArgs) {
      std::string want = bi->minArgs == bi->maxArgs ? std::to_string(bi->minArgs)
                                                    : std::to_string(bi->minArgs) + " or " +
                                                          std::to_string(bi->maxArgs);
      diags.error(c.range, q(fname) + " takes " + want + " argument" +
                               (bi->maxArgs == 1 ? "" : "s") + ", not " + std::to_string(n));
      for (auto &a : c.args)
        check(*a);
      return err();
    }
    std::vector<Type> ts;
    for (auto &a : c.args)
      ts.push_back(check(*a));
    for (auto &t : ts)
      if (t.isError())
        return err();
    // Reductions over a set.
    if (bi->id == Builtin::Sum || bi->id == Builtin::Mean ||
        ((bi->id == Builtin::Min || bi->id == Builtin::Max) && n == 1)) {
      if (bi->id == Builtin::Min)
        c.builtin = Builtin::ReduceMin;
      if (bi->id == Builtin::Max)
        c.builtin = Builtin::ReduceMax;
      if (!ts[0].isField() || !ts[0].isNumeric()) {
        diags.error(c.args[0]->range, fname + "(x) reduces a field over its set, and this is " +
                                          typeToString(ts[0]) +
                                          (n == 1 && (fname == "min" || fname == "max")
                                               ? "; for two values write " + fname + "(a, b)"
                                               : ""));
        return err();
      }
      if (cx.ctx == Ctx::Fn) {
        diags.error(c.range, "a fn cannot reduce over a set");
        return err();
      }
      Type r = ts[0];
      r.set = nullptr;
      if (r.kind == TypeKind::Int)
        r.kind = TypeKind::Scalar;
      return r;
    }
    const SetDecl *set = nullptr;
    for (size_t i = 0; i < ts.size(); ++i) {
      if (!ts[i].isNumeric()) {
        diags.error(c.args[i]->range, q(fname) + " needs numbers, not " + typeToString(ts[i]));
        return err();
      }
      if (!combine(Type{ts[i].kind, 1, set}, ts[i], c.range, set))
        return err();
    }
    auto argScalar = [&](size_t i) {
      if (!isScalarLike(ts[i])) {
        diags.error(c.args[i]->range, "argument " + std::to_string(i + 1) + " of " + q(fname) +
                                          " must be a scalar, not " + typeToString(ts[i]));
        return false;
      }
      return true;
    };
    switch (bi->id) {
    case Builtin::Norm:
      if (ts[0].kind != TypeKind::Vec) {
        diags.error(c.args[0]->range, "norm() takes a vector, not " + typeToString(ts[0]) +
                                          "; use abs() for a scalar");
        return err();
      }
      return {TypeKind::Scalar, 1, set};
    case Builtin::Dot:
      if (ts[0].kind != TypeKind::Vec || ts[1].kind != TypeKind::Vec || ts[0].width != ts[1].width) {
        diags.error(c.range, "dot() takes two vectors of the same size, not " +
                                 typeToString(ts[0]) + " and " + typeToString(ts[1]));
        return err();
      }
      return {TypeKind::Scalar, 1, set};
    case Builtin::Vec2:
    case Builtin::Vec3:
      for (size_t i = 0; i < ts.size(); ++i)
        if (!argScalar(i))
          return err();
      if (bi->id == Builtin::Vec3 && C.out.world.dim == 2 && C.haveWorld)
        diags.error(c.range, "vec3 in a dim = 2 world; use vec2");
      if (bi->id == Builtin::Vec2 && C.out.world.dim == 3 && C.haveWorld)
        diags.error(c.range, "vec2 in a dim = 3 world; use vec3");
      return {TypeKind::Vec, bi->id == Builtin::Vec2 ? 2 : 3, set};
    case Builtin::Clamp:
      if (!argScalar(1) || !argScalar(2))
        return err();
      [[fallthrough]];
    default: {
      // Element-wise on scalars or vectors; two-argument forms need equal shapes
      // or a scalar second argument.
      Type r = ts[0];
      if (r.kind == TypeKind::Int)
        r.kind = TypeKind::Scalar;
      if ((bi->id == Builtin::Min || bi->id == Builtin::Max || bi->id == Builtin::Pow) &&
          !(isScalarLike(ts[1]) || (ts[1].kind == TypeKind::Vec && ts[1].width == ts[0].width &&
                                    ts[0].kind == TypeKind::Vec))) {
        diags.error(c.range, q(fname) + " of " + typeToString(ts[0]) + " and " +
                                 typeToString(ts[1]) + " is not defined");
        return err();
      }
      if (ts[0].kind != TypeKind::Vec && ts.size() > 1 && ts[1].kind == TypeKind::Vec) {
        diags.error(c.range, q(fname) + " of " + typeToString(ts[0]) + " and " +
                                 typeToString(ts[1]) + " is not defined");
        return err();
      }
      r.set = set;
      return r;
    }
    }
  }

  Type sinWaves(CallExpr &c) {
    if (!cx.allowSinWaves) {
      diags.error(c.range, "sin_waves(..) is a controller input; use it in 'inputs = ...'");
      return err();
    }
    cx.allowSinWaves = false;
    if (c.args.size() != 1) {
      diags.error(c.range, "sin_waves takes the number of waves and omega: "
                           "sin_waves(10, omega = 10)");
      return err();
    }
    auto n = C.evalInt(*c.args[0], "sin_waves count");
    if (n && *n < 1)
      diags.error(c.args[0]->range, "sin_waves needs at least one wave");
    c.args[0]->type = Type::scalar();
    bool haveOmega = false;
    for (auto &na : c.namedArgs) {
      if (na.name.name != "omega") {
        diags.error(na.name.range, "unknown argument " + q(na.name.name) +
                                       " of sin_waves; expected omega");
        continue;
      }
      haveOmega = true;
      C.evalNumber(*na.value, "omega");
      na.value->type = Type::scalar();
    }
    if (!haveOmega)
      diags.error(c.range, "sin_waves needs its angular frequency: sin_waves(N, omega = W)");
    return Type::scalar();
  }

  Type fnCall(CallExpr &c, const FnDecl &fn) {
    c.ref = CallRef::Fn;
    c.fn = &fn;
    if (!c.namedArgs.empty())
      diags.error(c.namedArgs[0].name.range, "fn arguments are positional");
    if (c.args.size() != fn.params.size()) {
      diags.error(c.range, q(fn.name.name) + " takes " + std::to_string(fn.params.size()) +
                               " argument" + (fn.params.size() == 1 ? "" : "s") + ", not " +
                               std::to_string(c.args.size()))
          .note(fn.name.range, q(fn.name.name) + " is declared here");
      for (auto &a : c.args)
        check(*a);
      return err();
    }
    bool ok = true;
    for (size_t i = 0; i < c.args.size(); ++i) {
      Type t = check(*c.args[i]);
      const Type &want = fn.params[i].type.resolved;
      if (t.isError() || want.isError()) {
        ok = false;
        continue;
      }
      if (t.isField()) {
        diags.error(c.args[i]->range, "fn arguments are single values; this is " +
                                          typeToString(t));
        ok = false;
        continue;
      }
      bool match = t == want || (t.kind == TypeKind::Int && want.kind == TypeKind::Scalar);
      if (!match) {
        diags.error(c.args[i]->range, "argument " + std::to_string(i + 1) + " of " +
                                          q(fn.name.name) + " must be " + typeToString(want) +
                                          ", not " + typeToString(t))
            .note(fn.params[i].range, "parameter " + q(fn.params[i].name.name) + " is declared here");
        ok = false;
      }
    }
    if (!ok)
      return err();
    return fn.result.resolved;
  }
};

} // namespace

Type Checker::check(Expr &e, ExprCtx &cx) {
  Typer t(*this, cx);
  return t.check(e);
}

} // namespace evoc::sema
