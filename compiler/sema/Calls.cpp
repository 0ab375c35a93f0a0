// Typing calls: builtins (element-wise math, reductions over a set,
// sin_waves) and user fns, with arity and argument types.
#include "sema/Typer.h"

#include <algorithm>

namespace evoc::sema {

using namespace ast;

namespace {

struct BuiltinInfo {
  const char *name;
  Builtin id;
  int minArgs, maxArgs;
};

const BuiltinInfo kBuiltins[] = {
    {"norm", Builtin::Norm, 1, 1},
    {"dot", Builtin::Dot, 2, 2},
    {"clamp", Builtin::Clamp, 3, 3},
    {"abs", Builtin::Abs, 1, 1},
    {"min", Builtin::Min, 1, 2},
    {"max", Builtin::Max, 1, 2},
    {"exp", Builtin::Exp, 1, 1},
    {"log", Builtin::Log, 1, 1},
    {"sin", Builtin::Sin, 1, 1},
    {"cos", Builtin::Cos, 1, 1},
    {"tanh", Builtin::Tanh, 1, 1},
    {"sqrt", Builtin::Sqrt, 1, 1},
    {"pow", Builtin::Pow, 2, 2},
    {"floor", Builtin::Floor, 1, 1},
    {"vec2", Builtin::Vec2, 2, 2},
    {"vec3", Builtin::Vec3, 3, 3},
    {"mat2", Builtin::Mat2, 2, 4},
    {"mat3", Builtin::Mat3, 3, 9},
    {"transpose", Builtin::Transpose, 1, 1},
    {"det", Builtin::Det, 1, 1},
    {"trace", Builtin::Trace, 1, 1},
    {"outer", Builtin::Outer, 2, 2},
    {"polar_rotation", Builtin::PolarRotation, 1, 1},
    {"sum", Builtin::Sum, 1, 1},
    {"mean", Builtin::Mean, 1, 1},
    {"sin_waves", Builtin::SinWaves, 1, 1},
    {"repeat", Builtin::Repeat, 2, 2},
    {"ground_height", Builtin::GroundHeight, 1, 1},
    {"ground_normal", Builtin::GroundNormal, 1, 1},
    {"ground_gap", Builtin::GroundGap, 2, 2},
    {"ground_speed", Builtin::GroundSpeed, 2, 2},
    {"in_contact", Builtin::InContact, 1, 1},
    {"contact_normal", Builtin::ContactNormal, 1, 1},
    {"contact_gap", Builtin::ContactGap, 2, 2},
    {"contact_speed", Builtin::ContactSpeed, 2, 2},
    {"push_out", Builtin::PushOut, 2, 2},
    {"part_mean", Builtin::PartMean, 2, 2},
};

} // namespace

Type Typer::call(CallExpr &c) {
  const std::string &fname = c.callee.name;
  const BuiltinInfo *bi = nullptr;
  for (const auto &b : kBuiltins)
    if (fname == b.name)
      bi = &b;
  if (!bi)
    return userCall(c);
  c.ref = CallRef::Builtin;
  c.builtin = bi->id;
  int n = int(c.args.size());
  if (bi->id == Builtin::SinWaves)
    return sinWaves(c);
  if (bi->id == Builtin::Repeat)
    return repeat(c);
  if (bi->id == Builtin::PartMean)
    return partMean(c);
  if (!c.namedArgs.empty()) {
    diags.error(c.namedArgs[0].name.range, q(fname) + " takes no named arguments");
    return err();
  }
  if (n < bi->minArgs || n > bi->maxArgs) {
    std::string want = bi->minArgs == bi->maxArgs
                           ? std::to_string(bi->minArgs)
                           : std::to_string(bi->minArgs) + " or " + std::to_string(bi->maxArgs);
    diags.error(c.range, q(fname) + " takes " + want + " argument" + (bi->maxArgs == 1 ? "" : "s") +
                             ", not " + std::to_string(n));
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
  if (bi->id == Builtin::Sum || bi->id == Builtin::Mean ||
      ((bi->id == Builtin::Min || bi->id == Builtin::Max) && n == 1))
    return reduction(c, ts[0]);
  return elementwise(c, ts);
}

Type Typer::userCall(CallExpr &c) {
  const std::string &fname = c.callee.name;
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

/// The type of a reduction (sum, mean, part_mean, ...) of a field of type t:
/// t's element type without its set, an int's sum a scalar.
static Type reducedOver(Type t) {
  t.set = nullptr;
  if (t.kind == TypeKind::Int)
    t.kind = TypeKind::Scalar;
  return t;
}

Type Typer::reduction(CallExpr &c, const Type &arg) {
  const std::string &fname = c.callee.name;
  const int n = int(c.args.size());
  if (c.builtin == Builtin::Min)
    c.builtin = Builtin::ReduceMin;
  if (c.builtin == Builtin::Max)
    c.builtin = Builtin::ReduceMax;
  if (!arg.isField() || !arg.isNumeric()) {
    diags.error(c.args[0]->range, fname + "(x) reduces a field over its set, and this is " +
                                      typeToString(arg) +
                                      (n == 1 && (fname == "min" || fname == "max")
                                           ? "; for two values write " + fname + "(a, b)"
                                           : ""));
    return err();
  }
  if (cx.ctx == Ctx::Fn) {
    diags.error(c.range, "a fn cannot reduce over a set");
    return err();
  }
  return reducedOver(arg);
}

/// The names part_mean may use: the chosen body's parts (a grammar body) or
/// materials (a voxel body); nullopt when there is no body to check against
/// (a library), empty when the body has none.
static std::optional<std::vector<std::string>> partNames(const Checker &C) {
  const auto &p = C.out;
  if (!p.hasBody)
    return std::nullopt;
  std::vector<std::string> names;
  if (p.grammarBody)
    for (const auto &part : p.grammarBody->grammar.parts)
      names.push_back(part.name);
  if (p.voxelBody)
    for (const auto &m : p.voxelBody->materials)
      names.push_back(m.name);
  return names;
}

Type Typer::partMean(CallExpr &c) {
  if (!c.namedArgs.empty() || c.args.size() != 2) {
    diags.error(c.range, "part_mean takes a part's name and a point field: "
                         "part_mean(torso, point.x[T])");
    for (auto &a : c.args)
      check(*a);
    return err();
  }
  auto *name = dynCast<NameExpr>(c.args[0].get());
  Type f = check(*c.args[1]);
  if (!name) {
    diags.error(c.args[0]->range, "part_mean's first argument is the name of a part (a grammar "
                                  "body's) or a material (a voxel body's)");
    return err();
  }
  name->type = Type::scalar(); // a name, not a value: irgen reads it off the call
  if (f.isError())
    return err();
  if (cx.ctx != Ctx::Loss) {
    diags.error(c.range, "part_mean(...) is a loss's: it reduces a point field over a part");
    return err();
  }
  if (!f.isField() || !f.isNumeric() || f.set->name.name != "point") {
    diags.error(c.args[1]->range, "part_mean averages a field over points (e.g. point.x[T]), "
                                  "not " +
                                      typeToString(f));
    return err();
  }
  if (auto names = partNames(C)) {
    if (names->empty()) {
      diags.error(name->range, "body " + q(C.out.body.name) +
                                   " has no named parts: part_mean names the parts of a grammar "
                                   "body or the materials of a voxel body");
      return err();
    }
    if (std::find(names->begin(), names->end(), name->name) == names->end()) {
      std::string list;
      for (size_t i = 0; i < names->size(); ++i)
        list += (i ? ", " : "") + (*names)[i];
      // A material or part that exists but that this body does not use is
      // not a typo: say so rather than suggest a neighbouring name.
      auto d = C.names.find(name->name);
      const bool voxel = C.out.voxelBody.has_value();
      if (d != C.names.end() &&
          (d->second->kind == DeclKind::Material || d->second->kind == DeclKind::Part)) {
        diags.error(name->range,
                    "body " + q(C.out.body.name) + " has no " + (voxel ? "voxels of " : "") +
                        (d->second->kind == DeclKind::Material ? "material " : "part ") +
                        q(name->name) + ", so part_mean would average no points; its " +
                        (voxel ? "materials: " : "parts: ") + list);
        return err();
      }
      std::string close = closest(name->name, *names);
      diags.error(name->range,
                  "body " + q(C.out.body.name) + " has no part " + q(name->name) +
                      (close.empty() ? "; its parts: " + list : "; did you mean '" + close + "'?"));
      return err();
    }
  }
  return reducedOver(f);
}

bool Typer::scalarArg(const CallExpr &c, const std::vector<Type> &ts, size_t i) {
  if (!isScalarLike(ts[i])) {
    diags.error(c.args[i]->range, "argument " + std::to_string(i + 1) + " of " + q(c.callee.name) +
                                      " must be a scalar, not " + typeToString(ts[i]));
    return false;
  }
  return true;
}

Type Typer::elementwise(CallExpr &c, const std::vector<Type> &ts) {
  const std::string &fname = c.callee.name;
  const Builtin id = c.builtin;
  const SetDecl *set = nullptr;
  for (size_t i = 0; i < ts.size(); ++i) {
    if (!ts[i].isNumeric()) {
      diags.error(c.args[i]->range, q(fname) + " needs numbers, not " + typeToString(ts[i]));
      return err();
    }
    if (!combine(Type{ts[i].kind, 1, set}, ts[i], c.range, set))
      return err();
  }
  switch (id) {
  case Builtin::Norm:
    if (ts[0].kind != TypeKind::Vec) {
      diags.error(c.args[0]->range,
                  "norm() takes a vector, not " + typeToString(ts[0]) + "; use abs() for a scalar");
      return err();
    }
    return {TypeKind::Scalar, 1, set};
  case Builtin::Dot:
    if (ts[0].kind != TypeKind::Vec || ts[1].kind != TypeKind::Vec || ts[0].width != ts[1].width) {
      diags.error(c.range, "dot() takes two vectors of the same size, not " + typeToString(ts[0]) +
                               " and " + typeToString(ts[1]));
      return err();
    }
    return {TypeKind::Scalar, 1, set};
  case Builtin::Vec2:
  case Builtin::Vec3:
    for (size_t i = 0; i < ts.size(); ++i)
      if (!scalarArg(c, ts, i))
        return err();
    if (id == Builtin::Vec3 && C.out.world.dim == 2 && C.dimKnown)
      diags.error(c.range, "vec3 in a dim = 2 world; use vec2");
    // vec2(..) stays allowed in 3D: a horizontal position (x, y), as the
    // ground_* built-ins read it; declared vec2 fields and parameters are
    // refused (resolveType).
    return {TypeKind::Vec, id == Builtin::Vec2 ? 2 : 3, set};
  case Builtin::Mat2:
  case Builtin::Mat3:
  case Builtin::Transpose:
  case Builtin::Det:
  case Builtin::Trace:
  case Builtin::Outer:
  case Builtin::PolarRotation:
    return matrixCall(c, ts, set);
  case Builtin::GroundHeight:
  case Builtin::GroundNormal:
  case Builtin::GroundGap:
  case Builtin::GroundSpeed:
    return groundCall(c, ts, set);
  case Builtin::InContact:
  case Builtin::ContactNormal:
  case Builtin::ContactGap:
  case Builtin::ContactSpeed:
  case Builtin::PushOut:
    return contactCall(c, ts, set);
  case Builtin::Clamp:
    if (!scalarArg(c, ts, 1) || !scalarArg(c, ts, 2))
      return err();
    [[fallthrough]];
  default: {
    // Element-wise on scalars or vectors; two-argument forms need equal shapes
    // or a scalar second argument.
    Type r = ts[0];
    if (r.kind == TypeKind::Int)
      r.kind = TypeKind::Scalar;
    if ((id == Builtin::Min || id == Builtin::Max || id == Builtin::Pow) &&
        !(isScalarLike(ts[1]) || (ts[1].kind == ts[0].kind && ts[1].width == ts[0].width))) {
      diags.error(c.range, q(fname) + " of " + typeToString(ts[0]) + " and " + typeToString(ts[1]) +
                               " is not defined");
      return err();
    }
    if (ts.size() > 1 && !isScalarLike(ts[1]) &&
        ts[1] != Type{ts[0].kind, ts[0].width, ts[1].set}) {
      diags.error(c.range, q(fname) + " of " + typeToString(ts[0]) + " and " + typeToString(ts[1]) +
                               " is not defined");
      return err();
    }
    r.set = set;
    return r;
  }
  }
}

Type Typer::groundCall(CallExpr &c, const std::vector<Type> &ts, const SetDecl *set) {
  const std::string &fname = c.callee.name;
  const Builtin id = c.builtin;
  // The horizontal position is x in 2D and (x, y) in 3D; points and
  // velocities are vectors of the world's dimension.
  const int dim = C.out.world.dim;
  const bool point = id == Builtin::GroundGap || id == Builtin::GroundSpeed;
  const std::string horiz = dim == 2 ? "a scalar x" : "a vec2 (x, y)";
  if (point && !(ts[0].kind == TypeKind::Vec && ts[0].width == dim)) {
    diags.error(c.args[0]->range, q(fname) + " takes a vec" + std::to_string(dim) + " and " +
                                      horiz + ": " + fname + "(p, at)");
    return err();
  }
  const World &w = C.out.world;
  if (!w.ground.scene.empty() && cx.physics && cx.physics == w.physics) {
    diags.error(c.range, q(fname) +
                             " reads the ground alone, and this world has a scene: physics " +
                             q(cx.physics->name.name) +
                             " must read the contact surface with in_contact, contact_normal, "
                             "contact_gap, contact_speed and push_out (docs/language.md, "
                             "\"Scenes\"), or the world have no scene");
    return err();
  }
  const Type &at = ts[point ? 1 : 0];
  if (dim == 2 ? !scalarArg(c, ts, point ? 1 : 0) : !(at.kind == TypeKind::Vec && at.width == 2)) {
    if (dim == 3)
      diags.error(c.args[point ? 1 : 0]->range, q(fname) + " in 3D reads the ground under " +
                                                    horiz + ", not " + typeToString(at));
    return err();
  }
  if (id == Builtin::GroundNormal)
    return {TypeKind::Vec, dim, set};
  return {TypeKind::Scalar, 1, set};
}

Type Typer::contactCall(CallExpr &c, const std::vector<Type> &ts, const SetDecl *set) {
  // Every argument is a position (or velocity) of the world's dimension.
  const int dim = C.out.world.dim;
  for (size_t i = 0; i < ts.size(); ++i)
    if (!(ts[i].kind == TypeKind::Vec && ts[i].width == dim)) {
      diags.error(c.args[i]->range, q(c.callee.name) + " takes " +
                                        (ts.size() == 1 ? "a position" : "two") + " vec" +
                                        std::to_string(dim) + ", not " + typeToString(ts[i]));
      return err();
    }
  switch (c.builtin) {
  case Builtin::InContact:
    return {TypeKind::Bool, 1, set};
  case Builtin::ContactNormal:
  case Builtin::PushOut:
    return {TypeKind::Vec, dim, set};
  default:
    return {TypeKind::Scalar, 1, set};
  }
}

Type Typer::sinWaves(CallExpr &c) {
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
      diags.error(na.name.range,
                  "unknown argument " + q(na.name.name) + " of sin_waves; expected omega");
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

// repeat(N, value): N copies of a robot-level value, as controller inputs
// (the copies weigh a command N times at initialisation).
Type Typer::repeat(CallExpr &c) {
  if (!cx.allowSinWaves) {
    diags.error(c.range, "repeat(N, value) is a controller input; use it in 'inputs = ...'");
    return err();
  }
  cx.allowSinWaves = false;
  if (c.args.size() != 2 || !c.namedArgs.empty()) {
    diags.error(c.range, "repeat takes a count and a value: repeat(30, v / 0.08)");
    return err();
  }
  auto *n = dynCast<NumberExpr>(c.args[0].get());
  if (!n || !n->isInteger || n->value < 1 || n->value > 65536) {
    diags.error(c.args[0]->range, "repeat's count must be a whole number from 1 to 65536");
    return err();
  }
  c.args[0]->type = Type::scalar();
  Type t = check(*c.args[1]);
  if (t.isError())
    return err();
  if (t.isField() || !t.isNumeric()) {
    diags.error(c.args[1]->range, "repeat copies a robot-level number or vector (a command, "
                                  "a reduction), not " +
                                      typeToString(t));
    return err();
  }
  return t;
}

Type Typer::fnCall(CallExpr &c, const FnDecl &fn) {
  c.ref = CallRef::Fn;
  c.fn = &fn;
  if (!c.namedArgs.empty())
    diags.error(c.namedArgs[0].name.range, "fn arguments are positional");
  if (c.args.size() != fn.params.size()) {
    diags
        .error(c.range, q(fn.name.name) + " takes " + std::to_string(fn.params.size()) +
                            " argument" + (fn.params.size() == 1 ? "" : "s") + ", not " +
                            std::to_string(c.args.size()))
        .note(fn.name.range, q(fn.name.name) + " is declared here");
    for (auto &a : c.args)
      check(*a);
    return err();
  }
  bool ok = true;
  // A field argument applies the fn element by element: the result is a
  // field over the same set (docs/language.md, Functions).
  const SetDecl *set = nullptr;
  for (size_t i = 0; i < c.args.size(); ++i) {
    Type t = check(*c.args[i]);
    const Type &want = fn.params[i].type.resolved;
    if (t.isError() || want.isError()) {
      ok = false;
      continue;
    }
    if (t.isField() && !combine(Type{t.kind, t.width, set}, t, c.range, set)) {
      ok = false;
      continue;
    }
    const Type value{t.kind, t.width, nullptr}; // one element's value
    bool match = value == want || (t.kind == TypeKind::Int && want.kind == TypeKind::Scalar);
    if (!match) {
      diags
          .error(c.args[i]->range, "argument " + std::to_string(i + 1) + " of " + q(fn.name.name) +
                                       " must be " + typeToString(want) + ", not " +
                                       typeToString(value))
          .note(fn.params[i].range, "parameter " + q(fn.params[i].name.name) + " is declared here");
      ok = false;
    }
  }
  if (!ok)
    return err();
  Type r = fn.result.resolved;
  r.set = set;
  return r;
}

} // namespace evoc::sema
