// Typing expressions: name resolution, members and element sets, times and
// windows, operators. Fills the AST's annotations (calls: Calls.cpp).
#include "frontend/Imports.h"
#include "sema/Typer.h"

namespace evoc::sema {

using namespace ast;

namespace {

const char *ctxWord(Ctx c) {
  switch (c) {
  case Ctx::Fn:
    return "a fn";
  case Ctx::Step:
    return "a physics step";
  case Ctx::Controller:
    return "a controller";
  case Ctx::Loss:
    return "a loss";
  case Ctx::Setting:
    return "a setting";
  }
  return "here";
}

} // namespace

void Checker::undefined(const SourceRange &r, const std::string &what, const std::string &name,
                        const std::vector<std::string> &candidates) {
  std::string c = closest(name, candidates);
  if (!c.empty()) {
    diags.error(r, "undefined " + what + " '" + name + "'; did you mean '" + c + "'?");
    return;
  }
  // A name the stdlib declares: say which file to import.
  static const std::map<std::string, std::string> keywords = {
      {"material", "material"}, {"function", "fn"}, {"physics", "physics"},      {"part", "part"},
      {"grammar", "grammar"},   {"body", "body"},   {"controller", "controller"}};
  auto k = keywords.find(what);
  const std::vector<std::string> files =
      k == keywords.end() ? std::vector<std::string>{} : frontend::stdlibDeclaring(k->second, name);
  std::string hint;
  if (!files.empty())
    hint = "; the stdlib declares it in \"" + files.front() + "\": add import \"" + files.front() +
           "\";" +
           (files.size() > 1 ? " (or one of " + std::to_string(files.size() - 1) + " other files)"
                             : "");
  diags.error(r, "undefined " + what + " '" + name + "'" + hint);
}

Type Typer::check(Expr &e) {
  Type t = dispatch(e);
  e.type = t;
  return t;
}

/// The common element set of two operands, or reports a mismatch.
bool Typer::combine(const Type &a, const Type &b, const SourceRange &r, const SetDecl *&out) {
  out = a.set ? a.set : b.set;
  if (a.set && b.set && a.set != b.set) {
    diags.error(r, "cannot combine a field over " + q(a.set->name.name) + " with a field over " +
                       q(b.set->name.name) + "; reduce one of them first (sum, mean, min, max)");
    return false;
  }
  return true;
}

Type Typer::dispatch(Expr &e) {
  switch (e.kind) {
  case ExprKind::Number:
    return Type::scalar();
  case ExprKind::Bool:
    return Type::boolean();
  case ExprKind::String:
    diags.error(e.range, "a string is not a value in " + std::string(ctxWord(cx.ctx)));
    return err();
  case ExprKind::Tuple:
  case ExprKind::List:
    diags.error(e.range, std::string(e.kind == ExprKind::Tuple ? "a tuple" : "a list") +
                             " is only allowed in settings; use vec2(..) or vec3(..) for vectors");
    return err();
  case ExprKind::Name:
    return name(*cast<NameExpr>(&e));
  case ExprKind::Member:
    return member(*cast<MemberExpr>(&e));
  case ExprKind::Index:
    return index(*cast<IndexExpr>(&e));
  case ExprKind::Call:
    return call(*cast<CallExpr>(&e));
  case ExprKind::Unary:
    return unary(*cast<UnaryExpr>(&e));
  case ExprKind::Binary:
    return binary(*cast<BinaryExpr>(&e));
  case ExprKind::If:
    return ifExpr(*cast<IfExpr>(&e));
  case ExprKind::Window:
    return window(*cast<WindowExpr>(&e));
  case ExprKind::Stencil:
    return stencil(*cast<StencilExpr>(&e));
  }
  return err();
}

std::vector<std::string> Typer::visibleNames() {
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

Type Typer::name(NameExpr &n) {
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
  if (cx.ctx == Ctx::Controller || cx.ctx == Ctx::Loss || cx.ctx == Ctx::Step) {
    if (int ci = C.commandIndex(n.name); ci >= 0) {
      n.ref = NameRef::Command;
      n.command = ci;
      if (cx.ctx == Ctx::Loss && !cx.timed) {
        diags.error(n.range, "a command in a loss needs a time: " + n.name + "[t], " + n.name +
                                 "[t - 100] in a window, " + n.name + "[0] or " + n.name + "[T]");
        return err();
      }
      int w = C.out.commands.width(size_t(ci));
      return w == 1 ? Type::scalar() : Type::vec(w);
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
    } else if (C.physicsDecls.empty() &&
               (n.name == "point" || n.name == "spring" || n.name == "object")) {
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
  else if (n.name == "dt" || n.name == "gravity" || n.name == "damping" || n.name == "dashpot" ||
           n.name == "dim" || n.name == "steps" || n.name == "ground")
    diags.error(n.range,
                "undefined name " + q(n.name) + "; world settings are read as world." + n.name);
  else
    C.undefined(n.range, "name", n.name, visibleNames());
  return err();
}

Type Typer::member(MemberExpr &m) {
  bool timed = cx.timed;
  cx.timed = false;
  Type base = check(*m.base);
  const std::string &f = m.member.name;
  switch (base.kind) {
  case TypeKind::Error:
    return err();
  case TypeKind::Element:
    return elementMember(m, base.set);
  case TypeKind::Set:
    return setMember(m, base.set, timed);
  case TypeKind::World:
    return worldMember(m);
  case TypeKind::Vec: {
    int c = f == "x" ? 0 : f == "y" ? 1 : f == "z" ? 2 : -1;
    if (c < 0 || c >= base.width) {
      diags.error(m.member.range, "vec" + std::to_string(base.width) + " has no component " + q(f) +
                                      (base.width == 2 ? "; use .x or .y" : "; use .x, .y or .z"));
      return err();
    }
    m.ref = MemberRef::Component;
    m.component = c;
    return {TypeKind::Scalar, 1, base.set};
  }
  case TypeKind::Mat:
    return matrixEntry(m, base);
  default:
    diags.error(m.member.range, "a value of type " + typeToString(base) + " has no member " + q(f));
    return err();
  }
}

/// Reports a field of another set used on this set's element or namespace.
void Typer::noSuchMember(MemberExpr &m, const SetDecl *s, const std::string &how) {
  const std::string &f = m.member.name;
  if (s->physics)
    for (const auto &other : s->physics->sets)
      if (other.get() != s && (other->findField(f) || other->findEndpoint(f))) {
        diags
            .error(m.member.range, q(f) + " is a field of " + q(other->name.name) + ", but " + how +
                                       " " + q(s->name.name))
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

Type Typer::elementMember(MemberExpr &m, const SetDecl *s) {
  const std::string &f = m.member.name;
  if (const FieldDecl *fd = s->findField(f)) {
    m.ref = MemberRef::Field;
    m.field = fd;
    if (fd->kind == FieldKind::Input && cx.inputsRead && !cx.inputsRead->count(fd))
      (*cx.inputsRead)[fd] = m.member.range;
    if (fd->kind == FieldKind::Temp && cx.accumulated && !cx.accumulated->count(fd))
      diags.warning(m.member.range, "temp " + q(f) +
                                        " is read before anything accumulates "
                                        "into it in this step, so it is zero here");
    return fd->type.resolved;
  }
  if (s->grid && (f == "index" || f == "offset"))
    return gridMember(m, s);
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

Type Typer::setMember(MemberExpr &m, const SetDecl *s, bool timed) {
  const std::string &f = m.member.name;
  const FieldDecl *fd = s->findField(f);
  if (!fd) {
    if (s->findEndpoint(f)) {
      diags.error(m.member.range, "endpoint " + q(f) +
                                      " is followed per element: write "
                                      "'for e in " +
                                      s->name.name + " { ... e." + f + " ... }'");
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
    diags.error(m.range, "input " + q(f) +
                             " is written by the controller's outputs; "
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

Type Typer::worldMember(MemberExpr &m) {
  const std::string &f = m.member.name;
  const World &w = C.out.world;
  auto *baseMember = dynCast<MemberExpr>(m.base.get());
  m.ref = MemberRef::WorldSetting;
  if (baseMember && baseMember->worldKey == "ground") {
    m.worldKey = "ground." + f;
    if (f == "height" && w.ground.kind == "terrain" && cx.physics && cx.physics == w.physics) {
      diags.error(m.range, "world.ground.height is a flat ground's height, and this world's "
                           "ground is a terrain: physics '" +
                               cx.physics->name.name +
                               "' must read it with ground_height(at) and the other ground_* "
                               "built-ins (docs/language.md), or the world use flat ground");
      return err();
    }
    if (f == "height" && !w.ground.scene.empty() && cx.physics && cx.physics == w.physics) {
      diags.error(m.range, "world.ground.height is the ground's height alone, and this world has "
                           "a scene: physics '" +
                               cx.physics->name.name +
                               "' cannot honour its boxes; use a physics that reads the contact "
                               "surface with in_contact and the other contact_* built-ins "
                               "(docs/language.md, \"Scenes\"), or no scene");
      return err();
    }
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
  if (baseMember && baseMember->worldKey == "grid") {
    m.worldKey = "grid." + f;
    const int axis = f == "nx" ? 0 : f == "ny" ? 1 : f == "nz" ? 2 : -1;
    if (f == "dx") {
      m.constValue = w.gridDx;
    } else if (axis >= 0 && axis < w.dim) {
      m.constValue = w.gridNodes.empty() ? 0 : double(w.gridNodes[size_t(axis)]);
    } else {
      diags.error(m.member.range,
                  "world.grid has no " + q(f) + "; use dx, nx, ny" + (w.dim == 3 ? ", nz" : ""));
      return err();
    }
    return Type::scalar();
  }
  m.worldKey = f;
  if (f == "ground")
    return {TypeKind::World};
  if (f == "grid") {
    if (w.gridNodes.empty() && C.haveWorld) {
      diags.error(m.range, "the world has no grid: add world { grid = grid(nodes = (128, 128), "
                           "dx = 1 / 128); } (docs/language.md, \"Grids and particles\")");
      return err();
    }
    return {TypeKind::World};
  }
  if (f == "dt")
    m.constValue = w.dt;
  else if (f == "gravity")
    m.constValue = w.gravity;
  else if (f == "damping")
    m.constValue = w.damping;
  else if (f == "dashpot")
    m.constValue = w.dashpot;
  else if (f == "dim")
    m.constValue = w.dim;
  else if (f == "steps")
    m.constValue = double(w.steps);
  else {
    std::string c =
        closest(f, {"dt", "gravity", "damping", "dashpot", "dim", "steps", "ground", "grid"});
    diags.error(m.member.range, "unknown world setting " + q(f) +
                                    (c.empty() ? std::string() : "; did you mean '" + c + "'?"));
    return err();
  }
  return Type::scalar();
}

/// A time index: constant (over T) or window variable plus offset.
bool Typer::timeOf(const Expr &e, const WindowExpr *&win, int64_t &value) {
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

Type Typer::index(IndexExpr &ix) {
  if (auto *n = dynCast<NameExpr>(ix.base.get()); n && cx.ctx != Ctx::Loss) {
    Type base = check(*ix.base);
    if (base.isError())
      return err();
    if (base.kind == TypeKind::Set)
      return elementAt(ix, base.set);
  }
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
  auto *cmd = dynCast<NameExpr>(ix.base.get());
  if (cmd && cmd->ref != NameRef::Command)
    cmd = nullptr;
  if (!cmd && (!m || m->ref != MemberRef::SetField || m->field->kind != FieldKind::State)) {
    diags.error(ix.range, "only a state field over a set or a command can take a time, e.g. "
                          "point.x[T] or v[t]");
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
    if (v > 0)
      diags.error(ix.index->range, "a window reads its time and earlier ones (t, t - 1, ...), "
                                   "not later ones: the state at t + " +
                                       std::to_string(v) +
                                       " does not exist yet when the term at t is computed; "
                                       "shift the window instead");
    if (win->loValue + v < 0 || win->hiValue + v > T)
      diags.error(ix.index->range, "time t" +
                                       std::string(v == 0  ? ""
                                                   : v < 0 ? " - "
                                                           : " + ") +
                                       (v == 0 ? "" : std::to_string(v < 0 ? -v : v)) +
                                       " leaves 0..T (T = " + std::to_string(T) + ") for t in " +
                                       std::to_string(win->loValue) + ".." +
                                       std::to_string(win->hiValue));
  } else {
    ix.timeIsConstant = true;
    ix.timeValue = v;
    if (v < 0 || v > T)
      diags.error(ix.index->range, "time " + std::to_string(v) +
                                       " is outside 0..T (T = steps - 1 = " + std::to_string(T) +
                                       ")");
  }
  return base;
}

Type Typer::window(WindowExpr &w) {
  if (cx.ctx != Ctx::Loss) {
    diags.error(w.range, "time windows (" + w.op_name.name +
                             "(t in a..b: ...)) are only "
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
  return reducedBody(std::move(s), *w.body, "a window reduces numbers");
}

Type Typer::reducedBody(Scope s, Expr &e, const std::string &what) {
  const bool stencil = s.loop != nullptr; // a stencil sums plain values, not fields
  cx.scopes.push_back(std::move(s));
  Type body = check(e);
  cx.scopes.pop_back();
  if (body.isError())
    return err();
  if (!body.isNumeric() || (body.isField() && stencil)) {
    diags.error(e.range, what + ", not " + typeToString(body));
    return err();
  }
  if (body.kind == TypeKind::Int)
    body.kind = TypeKind::Scalar;
  return body;
}

Type Typer::unary(UnaryExpr &u) {
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

Type Typer::binary(BinaryExpr &b) {
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
  if (l.kind == TypeKind::Mat || r.kind == TypeKind::Mat)
    return matrixBinary(b, l, r, set);
  bool ls = isScalarLike(l), rs = isScalarLike(r);
  switch (b.op) {
  case BinaryOp::Lt:
  case BinaryOp::Le:
  case BinaryOp::Gt:
  case BinaryOp::Ge:
    if (!ls || !rs)
      return bad(l.kind == TypeKind::Vec || r.kind == TypeKind::Vec
                     ? "; compare components (.x, .y) or norms"
                     : "");
    return {TypeKind::Bool, 1, set};
  case BinaryOp::Eq:
  case BinaryOp::Ne:
    if (!((ls && rs) || (l.kind == TypeKind::Bool && r.kind == TypeKind::Bool)))
      return bad("");
    return {TypeKind::Bool, 1, set};
  case BinaryOp::Add:
  case BinaryOp::Sub:
    if (ls && rs)
      return {l.kind == TypeKind::Int && r.kind == TypeKind::Int ? TypeKind::Int : TypeKind::Scalar,
              1, set};
    if (l.kind == TypeKind::Vec && r.kind == TypeKind::Vec && l.width == r.width)
      return {TypeKind::Vec, l.width, set};
    return bad(l.kind == TypeKind::Vec && r.kind == TypeKind::Vec ? "; vector sizes differ" : "");
  case BinaryOp::Mul:
    if (ls && rs)
      return {l.kind == TypeKind::Int && r.kind == TypeKind::Int ? TypeKind::Int : TypeKind::Scalar,
              1, set};
    if (ls && r.kind == TypeKind::Vec)
      return {TypeKind::Vec, r.width, set};
    if (l.kind == TypeKind::Vec && rs)
      return {TypeKind::Vec, l.width, set};
    return bad(l.kind == TypeKind::Vec && r.kind == TypeKind::Vec
                   ? "; use dot(a, b) for a dot product"
                   : "");
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

Type Typer::ifExpr(IfExpr &f) {
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
    return {a.kind == TypeKind::Int && b.kind == TypeKind::Int ? TypeKind::Int : TypeKind::Scalar,
            1, set};
  if (a.kind == b.kind && a.width == b.width &&
      (a.kind == TypeKind::Vec || a.kind == TypeKind::Mat || a.kind == TypeKind::Bool))
    return {a.kind, a.width, set};
  diags.error(f.range,
              "the branches of 'if' differ: " + typeToString(a) + " and " + typeToString(b));
  return err();
}

Type Checker::check(Expr &e, ExprCtx &cx) {
  Typer t(*this, cx);
  return t.check(e);
}

} // namespace evoc::sema
