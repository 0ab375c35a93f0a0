// Checks of grid sets, stencils and elements picked by a computed index
// (docs/language.md, "Grids and particles").
#include "sema/Limits.h"
#include "sema/Typer.h"

namespace evoc::sema {

using namespace ast;

namespace {

/// The innermost stencil loop in scope, if any.
const ForStmt *enclosingStencil(const ExprCtx &cx) {
  for (auto it = cx.scopes.rbegin(); it != cx.scopes.rend(); ++it)
    if (it->loop && it->loop->stencil)
      return it->loop;
  return nullptr;
}

} // namespace

void checkGridSet(Checker &C, const SetDecl &s) {
  if (!s.grid)
    return;
  // A library (no world of its own) is checked against the worlds it
  // requires; the program that imports it gives the grid.
  if (C.out.world.gridNodes.empty() && C.haveWorld)
    C.diags.error(s.kindWord.range,
                  "set " + q(s.name.name) +
                      " is a grid, but the world has no grid: add world { grid = grid(nodes = " +
                      (C.out.world.dim == 3 ? "(64, 64, 64)" : "(128, 128)") +
                      ", dx = H); } (docs/language.md, \"Grids and particles\")");
  if (!s.endpoints.empty())
    C.diags.error(s.endpoints.front().range,
                  "a grid set has no endpoints: its elements are the world's grid nodes");
  for (const auto &f : s.fields) {
    if (f->name.name == "index" || f->name.name == "offset")
      C.diags.error(f->name.range, q(f->name.name) +
                                       " is a grid node's own member (its grid coordinates or "
                                       "its place in a stencil); name the field otherwise");
    if (f->kind != FieldKind::Temp)
      C.diags.error(f->kindWord.range,
                    "a grid set holds temps only (zero at the start of every step, so an "
                    "episode keeps no grid): declare " +
                        q(s.name.name + "." + f->name.name) + " as 'temp'");
  }
}

bool checkStencil(Checker &C, ExprCtx &cx, ForStmt &loop) {
  StencilSpec &spec = *loop.stencil;
  if (cx.ctx != Ctx::Step) {
    C.diags.error(spec.range, "a stencil runs over a grid set's nodes, inside a loop of a "
                              "physics step");
    return false;
  }
  if (const ForStmt *outer = enclosingStencil(cx)) {
    C.diags.error(spec.range, "stencils do not nest")
        .note(outer->stencil->range, "the enclosing stencil is here");
    return false;
  }
  bool inLoop = false;
  for (const auto &s : cx.scopes)
    inLoop = inLoop || s.loop;
  if (!inLoop) {
    C.diags.error(spec.range, "a stencil is computed for one element: use it inside a loop "
                              "(for p in point { ... stencil(" +
                                  loop.setName.name + ", base, 3) ... })");
    return false;
  }
  loop.set = cx.physics ? cx.physics->findSet(loop.setName.name) : nullptr;
  bool ok = true;
  if (!loop.set) {
    std::vector<std::string> c;
    if (cx.physics)
      for (auto &o : cx.physics->sets)
        c.push_back(o->name.name);
    C.undefined(loop.setName.range, "set", loop.setName.name, c);
    ok = false;
  } else if (!loop.set->grid) {
    C.diags.error(loop.setName.range, "a stencil runs over a grid set, and " +
                                          q(loop.setName.name) + " is not one (declare it 'set " +
                                          loop.setName.name + ": grid { ... }')");
    ok = false;
  }
  const int dim = C.out.world.dim;
  Type base = C.check(*spec.base, cx);
  if (!base.isError() && (base.kind != TypeKind::Vec || base.width != dim || base.isField())) {
    C.diags.error(spec.base->range, "a stencil's base node is a vec" + std::to_string(dim) +
                                        " of whole numbers (its grid coordinates, e.g. floor(x "
                                        "/ world.grid.dx - 0.5)), not " +
                                        typeToString(base));
    ok = false;
  }
  if (auto size = C.evalInt(*spec.size, "the stencil's size")) {
    if (*size < 1 || *size > kMaxStencilSize) {
      C.diags.error(spec.size->range, "a stencil is 1 to " + std::to_string(kMaxStencilSize) +
                                          " nodes wide, not " + std::to_string(*size));
      ok = false;
    } else {
      spec.sizeValue = *size;
    }
  } else {
    ok = false;
  }
  spec.size->type = Type::scalar();
  return ok && !base.isError();
}

Type Typer::stencil(StencilExpr &s) {
  ForStmt &loop = *s.loop;
  if (!loop.stencil) // reported by the frontend
    return err();
  if (!checkStencil(C, cx, loop))
    return err();
  Scope sc;
  sc.loop = &loop;
  return reducedBody(std::move(sc), *s.body, "a stencil sums numbers of its nodes");
}

Type Typer::gridMember(MemberExpr &m, const SetDecl *s) {
  const std::string &f = m.member.name;
  if (f == "index") {
    m.ref = MemberRef::GridIndex;
    return Type::vec(C.out.world.dim);
  }
  auto *n = dynCast<NameExpr>(m.base.get());
  if (n && n->ref == NameRef::Element && n->loop && n->loop->stencil) {
    m.ref = MemberRef::GridOffset;
    return Type::vec(C.out.world.dim);
  }
  diags.error(m.member.range, "'offset' is a stencil node's place in its stencil; this element "
                              "of " +
                                  q(s->name.name) + " is not one");
  return err();
}

Type Typer::elementAt(IndexExpr &ix, const SetDecl *set) {
  if (cx.ctx != Ctx::Step) {
    diags.error(ix.range, "an element picked by index (" + set->name.name +
                              "[i]) is only available in a physics step");
    return err();
  }
  Type it = check(*ix.index);
  if (it.isError())
    return err();
  if (!isScalarLike(it) || it.isField()) {
    diags.error(ix.index->range,
                "an element's index is one whole number (a scalar), not " + typeToString(it));
    return err();
  }
  ix.elementAt = true;
  return {TypeKind::Element, 1, set};
}

} // namespace evoc::sema
