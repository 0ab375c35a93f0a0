// Settings: constant evaluation of setting values, known-key checks, and the
// evaluated world (dim, dt, steps, ground, physics selection, ...).
#include "sema/Checker.h"
#include "sema/Limits.h"
#include "sema/Terrain.h"

#include "support/SourceManager.h"

#include <algorithm>

#include <cmath>
#include <filesystem>
#include <limits>
#include <string>

namespace evoc::sema {

using namespace ast;

std::optional<double> Checker::evalNumber(const Expr &e, const std::string &what,
                                          const std::map<std::string, double> *vars) {
  auto v = evalNumberRaw(e, what, vars);
  if (v && !std::isfinite(*v)) {
    diags.error(e.range, "'" + what + "' is not a finite number");
    return std::nullopt;
  }
  return v;
}

std::optional<double> Checker::evalNumberRaw(const Expr &e, const std::string &what,
                                             const std::map<std::string, double> *vars) {
  switch (e.kind) {
  case ExprKind::Number:
    return cast<NumberExpr>(&e)->value;
  case ExprKind::Name: {
    auto *n = cast<NameExpr>(&e);
    if (vars) {
      auto it = vars->find(n->name);
      if (it != vars->end())
        return it->second;
    }
    if (n->name == "pi")
      return M_PI;
    if (vars) {
      std::vector<std::string> known;
      for (const auto &[k, v] : *vars)
        known.push_back(k);
      std::string c = closest(n->name, known);
      std::string list;
      for (size_t i = 0; i < known.size(); ++i)
        list += (i ? ", " : "") + known[i];
      diags.error(e.range, "unknown name '" + n->name + "' in '" + what + "'" +
                               (c.empty() ? "; it may use numbers and " + list
                                          : "; did you mean '" + c + "'?"));
      return std::nullopt;
    }
    break;
  }
  case ExprKind::Unary: {
    auto *u = cast<UnaryExpr>(&e);
    if (u->op == UnaryOp::Not)
      break;
    auto v = evalNumberRaw(*u->operand, what, vars);
    if (!v)
      return std::nullopt;
    return u->op == UnaryOp::Neg ? -*v : *v;
  }
  case ExprKind::Binary: {
    auto *b = cast<BinaryExpr>(&e);
    if (b->op != BinaryOp::Add && b->op != BinaryOp::Sub && b->op != BinaryOp::Mul &&
        b->op != BinaryOp::Div)
      break;
    auto l = evalNumberRaw(*b->lhs, what, vars);
    if (!l)
      return std::nullopt;
    auto r = evalNumberRaw(*b->rhs, what, vars);
    if (!r)
      return std::nullopt;
    switch (b->op) {
    case BinaryOp::Add:
      return *l + *r;
    case BinaryOp::Sub:
      return *l - *r;
    case BinaryOp::Mul:
      return *l * *r;
    default:
      if (*r == 0) {
        diags.error(e.range, "division by zero in '" + what + "'");
        return std::nullopt;
      }
      return *l / *r;
    }
  }
  default:
    break;
  }
  diags.error(e.range, "'" + what + "' must be a number");
  return std::nullopt;
}

std::optional<int64_t> Checker::evalInt(const Expr &e, const std::string &what,
                                        const std::map<std::string, double> *vars) {
  auto v = evalNumber(e, what, vars);
  if (!v)
    return std::nullopt;
  if (std::floor(*v) != *v || std::fabs(*v) > 9.0e15) {
    diags.error(e.range, "'" + what + "' must be a whole number");
    return std::nullopt;
  }
  return int64_t(*v);
}

std::optional<std::string> Checker::evalName(const Expr &e, const std::string &what) {
  if (auto *n = dynCast<NameExpr>(&e))
    return n->name;
  diags.error(e.range, "'" + what + "' must be a name");
  return std::nullopt;
}

Expr *Checker::single(const Setting &s, const std::string &what) {
  if (s.values.size() != 1) {
    diags.error(s.range, "'" + what + "' takes one value, not " + std::to_string(s.values.size()));
    return nullptr;
  }
  if (!s.suffixes.empty() && !s.suffixes[0].name.empty()) {
    diags.error(s.suffixes[0].range, "unexpected '" + s.suffixes[0].name + "' after the value");
    return nullptr;
  }
  return s.values[0].get();
}

void Checker::checkKnownKeys(const SettingsBlock &b, const std::string &block,
                             const std::vector<std::string> &keys,
                             const std::vector<std::string> &blocks) {
  std::map<std::string, const Setting *> seen;
  for (const auto &s : b.settings) {
    if (std::find(keys.begin(), keys.end(), s.key.name) == keys.end()) {
      std::string c = closest(s.key.name, keys);
      std::string list;
      for (size_t i = 0; i < keys.size(); ++i)
        list += (i ? ", " : "") + keys[i];
      diags.error(s.key.range,
                  "unknown " + block + " setting '" + s.key.name + "'" +
                      (c.empty() ? "; known: " + list : "; did you mean '" + c + "'?"));
      continue;
    }
    auto [it, fresh] = seen.emplace(s.key.name, &s);
    if (!fresh)
      diags.error(s.key.range, "'" + s.key.name + "' is set twice in " + block)
          .note(it->second->key.range, "first set here");
  }
  for (const auto &nb : b.blocks)
    if (std::find(blocks.begin(), blocks.end(), nb.name.name) == blocks.end())
      diags.error(nb.name.range, "unknown block '" + nb.name.name + "' in " + block);
}

void Checker::checkWorld() {
  World &w = out.world;
  if (worlds.empty())
    return;
  const SettingsBlock &b = worlds.front()->body;
  Expr *ground = nullptr;
  Expr *scene = nullptr;
  Expr *objects = nullptr;
  Expr *grid = nullptr;
  checkKnownKeys(b, "world", worldKeys());
  for (const auto &s : b.settings) {
    const std::string &k = s.key.name;
    const std::string what = "world." + k;
    Expr *e = nullptr;
    const auto &keys = worldKeys();
    if (std::find(keys.begin(), keys.end(), k) != keys.end())
      e = single(s, what);
    if (!e)
      continue;
    if (k == "dim") {
      auto v = evalInt(*e, what);
      if (v && *v != 2 && *v != 3)
        diags.error(e->range, "world.dim must be 2 or 3, not " + std::to_string(*v));
      if (v && (*v == 2 || *v == 3))
        w.dim = int(*v);
      else // reported: sizes are not checked against a dim the world does not have
        dimKnown = false;
    } else if (k == "dt") {
      if (auto v = evalNumber(*e, what)) {
        if (!(*v > 0))
          diags.error(e->range, "world.dt must be positive");
        else
          w.dt = *v;
      }
    } else if (k == "steps") {
      if (auto v = evalInt(*e, what)) {
        if (*v < 1)
          diags.error(e->range, "world.steps must be at least 1 (it counts the states "
                                "x[0] .. x[steps - 1])");
        else if (*v > kMaxSteps)
          diags.error(e->range, "world.steps = " + std::to_string(*v) + " is above the limit of " +
                                    std::to_string(kMaxSteps) + "; lower it");
        else
          w.steps = *v;
      }
    } else if (k == "precision") {
      if (auto v = evalName(*e, what)) {
        if (*v == "f64")
          w.precision = Precision::F64;
        else if (*v == "f32")
          w.precision = Precision::F32;
        else
          diags.error(e->range, "world.precision must be f64 or f32, not '" + *v + "'");
      }
    } else if (k == "gravity") {
      if (auto v = evalNumber(*e, what))
        w.gravity = *v;
    } else if (k == "damping" || k == "dashpot") {
      if (auto v = evalNumber(*e, what)) {
        if (*v < 0)
          diags.error(e->range, what + " must not be negative");
        else
          (k == "damping" ? w.damping : w.dashpot) = *v;
      }
    } else if (k == "state_limit") {
      if (auto v = evalNumber(*e, what)) {
        if (!(*v > 0))
          diags.error(e->range, "world.state_limit must be positive (a rollout whose state "
                                "values exceed it in magnitude is invalid)");
        else
          w.stateLimit = *v;
      }
    } else if (k == "checkpoint") {
      if (auto v = evalInt(*e, what)) {
        if (*v < 1)
          diags.error(e->range, "world.checkpoint must be at least 1 (states kept every K steps)");
        else if (*v > kMaxSteps)
          diags.error(e->range, "world.checkpoint = " + std::to_string(*v) +
                                    " is above the limit of " + std::to_string(kMaxSteps) +
                                    " (the limit of world.steps); lower it");
        else
          w.checkpoint = *v;
      }
    } else if (k == "ground") {
      ground = e;
    } else if (k == "grid") {
      grid = e;
    } else if (k == "scene") {
      scene = e;
    } else if (k == "objects") {
      objects = e;
    }
    // `physics` is resolved in selectPhysics.
  }
  if (ground) // after world.dim, wherever it is written: 3D reads a height field
    checkGround(*ground);
  if (scene && dimKnown) // on the ground: a box resting on it has no bottom face
    checkScene(*scene);
  if (objects && dimKnown) // on the ground and outside the scene's boxes
    checkObjects(*objects);
  if (grid && dimKnown) // one count per axis
    checkGrid(*grid);
}

void Checker::checkGrid(Expr &e) {
  World &w = out.world;
  auto *call = dynCast<CallExpr>(&e);
  const std::string shape = w.dim == 3 ? "(NX, NY, NZ)" : "(NX, NY)";
  if (!call || call->callee.name != "grid" || !call->args.empty()) {
    diags.error(e.range, "world.grid must be grid(nodes = " + shape +
                             ", dx = H): the nodes per "
                             "axis and their spacing");
    return;
  }
  call->ref = CallRef::Setting;
  std::vector<int64_t> nodes;
  double dx = 0;
  bool haveNodes = false, haveDx = false, ok = true;
  for (const auto &na : call->namedArgs) {
    const std::string &an = na.name.name;
    if (an == "nodes") {
      haveNodes = true;
      auto *t = dynCast<TupleExpr>(na.value.get());
      if (!t || int(t->elems.size()) != w.dim) {
        diags.error(na.value->range, "grid nodes are " + std::to_string(w.dim) +
                                         " whole numbers in a dim = " + std::to_string(w.dim) +
                                         " world: nodes = " + shape);
        ok = false;
        continue;
      }
      for (const auto &x : t->elems) {
        auto v = evalInt(*x, "world.grid.nodes");
        if (!v) {
          ok = false;
          continue;
        }
        if (*v < kMinGridAxis || *v > kMaxGridNodes) {
          diags.error(x->range, "a grid axis has " + std::to_string(kMinGridAxis) + " to " +
                                    std::to_string(kMaxGridNodes) + " nodes, not " +
                                    std::to_string(*v));
          ok = false;
          continue;
        }
        nodes.push_back(*v);
      }
      t->type = Type::scalar();
    } else if (an == "dx") {
      haveDx = true;
      auto v = evalNumber(*na.value, "world.grid.dx");
      if (v && !(*v > 0 && std::isfinite(*v))) {
        diags.error(na.value->range, "world.grid.dx, the spacing of the grid's nodes, must be "
                                     "positive");
        ok = false;
      } else if (v) {
        dx = *v;
      } else {
        ok = false;
      }
    } else {
      diags.error(na.name.range, "unknown argument '" + an + "' of grid(); expected nodes, dx");
      ok = false;
    }
  }
  if (!haveNodes || !haveDx) {
    diags.error(e.range, std::string("grid() needs ") + (haveNodes ? "" : "nodes = " + shape) +
                             (!haveNodes && !haveDx ? " and " : "") + (haveDx ? "" : "dx = H"));
    return;
  }
  if (!ok || int(nodes.size()) != w.dim)
    return;
  int64_t total = 1;
  for (int64_t n : nodes) {
    if (total > kMaxGridNodes / n) {
      total = kMaxGridNodes + 1;
      break;
    }
    total *= n;
  }
  if (total > kMaxGridNodes) {
    diags.error(e.range, "a grid of more than " + std::to_string(kMaxGridNodes) +
                             " nodes (2^22) is above the limit: every field of a grid set holds "
                             "one value per node for every robot; use fewer nodes");
    return;
  }
  w.gridNodes = nodes;
  w.gridDx = dx;
}

void Checker::checkGround(Expr &e) {
  World &w = out.world;
  auto *call = dynCast<CallExpr>(&e);
  const std::string name = call ? call->callee.name : "";
  if (name != "flat" && name != "terrain" && name != "terrain_random") {
    diags.error(e.range, "world.ground must be flat(height = H, friction = MU), "
                         "terrain(\"file.csv\", friction = MU) or terrain_random(seed = S, "
                         "roughness = R, length = L, segments = N, height = H, friction = MU)");
    return;
  }
  call->ref = CallRef::Setting;
  w.ground.kind = name == "flat" ? "flat" : "terrain";
  if (name != "terrain" && !call->args.empty())
    diags.error(call->args[0]->range, name + "() takes named arguments");
  std::map<std::string, double> args;
  static const std::map<std::string, std::vector<std::string>> known = {
      {"flat", {"height", "friction"}},
      {"terrain", {"friction"}},
      {"terrain_random", {"seed", "roughness", "length", "segments", "height", "friction"}}};
  const auto &keys = known.at(name);
  for (const auto &na : call->namedArgs) {
    const std::string &an = na.name.name;
    if (std::find(keys.begin(), keys.end(), an) == keys.end()) {
      std::string list;
      for (const auto &k : keys)
        list += (list.empty() ? "" : ", ") + k;
      diags.error(na.name.range,
                  "unknown argument '" + an + "' of " + name + "(); expected " + list);
      continue;
    }
    auto v = evalNumber(*na.value, "world.ground." + an);
    if (!v)
      continue;
    bool bad = (an == "friction" || an == "roughness" || an == "seed") && *v < 0;
    bad |= (an == "length") && *v <= 0;
    bad |=
        (an == "segments") && (*v < 1 || *v > double(kMaxTerrainRows - 1) || *v != std::floor(*v));
    if (bad) {
      diags.error(na.value->range, an == "segments" ? "segments must be a whole number from 1 to " +
                                                          std::to_string(kMaxTerrainRows - 1)
                                   : an == "length" ? "length must be positive"
                                                    : an + " must not be negative");
      continue;
    }
    args[an] = *v;
  }
  auto arg = [&](const char *k, double d) { return args.count(k) ? args[k] : d; };
  w.ground.friction = arg("friction", w.ground.friction);
  if (name == "flat") {
    w.ground.height = arg("height", w.ground.height);
    return;
  }
  // A profile in 2D, a height field in 3D: the same file and generator
  // arguments, rows `x, height` or `x, y, height`.
  const bool field = w.dim == 3;
  if (name == "terrain") {
    auto *str = call->args.size() == 1 ? dynCast<StringExpr>(call->args[0].get()) : nullptr;
    if (!str) {
      diags.error(call->range, "terrain() takes the file name of its profile: "
                               "terrain(\"hills.csv\", friction = MU)");
      return;
    }
    std::filesystem::path base =
        std::filesystem::path(sources.path(call->range.begin.file)).parent_path();
    w.ground.file = (base / str->value).string();
    std::string why;
    bool ok = false;
    if (field) {
      auto f = readHeightFieldCsv(w.ground.file, why);
      if ((ok = bool(f)))
        w.ground.field = std::move(*f);
    } else {
      auto p = readTerrainCsv(w.ground.file, why);
      if ((ok = bool(p)))
        w.ground.profile = std::move(*p);
    }
    if (!ok) {
      diags.error(str->range, why);
      return;
    }
  } else if (field) {
    int segments = int(arg("segments", 16));
    if (size_t(segments + 1) * size_t(segments + 1) > kMaxFieldPoints) {
      diags.error(call->range, "a 3D terrain_random of " + std::to_string(segments) +
                                   " segments has more than " + std::to_string(kMaxFieldPoints) +
                                   " grid points; use segments = 63 or fewer");
      return;
    }
    w.ground.field = randomHeightField(uint64_t(arg("seed", 1)), arg("roughness", 0.01),
                                       arg("length", 4), segments, arg("height", 0.1));
  } else {
    w.ground.profile =
        randomTerrain(uint64_t(arg("seed", 1)), arg("roughness", 0.01), arg("length", 4),
                      int(arg("segments", 40)), arg("height", 0.1));
  }
  // The lowest height (what world.ground.height reports on a terrain).
  w.ground.height = std::numeric_limits<double>::infinity();
  for (double h : w.ground.field.h)
    w.ground.height = std::min(w.ground.height, h);
  for (const auto &[x, h] : w.ground.profile)
    w.ground.height = std::min(w.ground.height, h);
}

void Checker::selectPhysics() {
  const Setting *sel = worlds.empty() ? nullptr : worlds.front()->body.find("physics");
  if (sel && sel->values.size() == 1) {
    auto *n = dynCast<NameExpr>(sel->values[0].get());
    if (!n) {
      diags.error(sel->values[0]->range, "'world.physics' must be the name of a physics");
      return;
    }
    auto it = names.find(n->name);
    if (it == names.end() || it->second->kind != DeclKind::Physics) {
      std::vector<std::string> cands;
      for (auto *p : physicsDecls)
        cands.push_back(p->name.name);
      if (it != names.end())
        diags.error(n->range, "'" + n->name + "' is not a physics")
            .note(it->second->name.range, "'" + n->name + "' is declared here");
      else
        undefined(n->range, "physics", n->name, cands);
      return;
    }
    n->ref = NameRef::Decl;
    out.world.physics = cast<PhysicsDecl>(it->second);
    return;
  }
  if (physicsDecls.size() == 1) {
    out.world.physics = physicsDecls.front();
  } else if (physicsDecls.size() > 1 && haveWorld) {
    std::string list;
    for (size_t i = 0; i < physicsDecls.size(); ++i)
      list += (i ? ", " : "") + physicsDecls[i]->name.name;
    diags.error(worlds.front()->name.range,
                "several physics are declared (" + list +
                    "); choose one with 'physics = NAME;' in the world block");
  }
}

} // namespace evoc::sema
