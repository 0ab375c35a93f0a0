// Checks of parts, body-part grammars, the body and the mutation rules, and
// their evaluation into the CheckedProgram.
#include "sema/Checker.h"

#include <algorithm>
#include <cstdio>
#include <functional>

namespace evoc::sema {

using namespace ast;

static std::string q(const std::string &s) { return "'" + s + "'"; }

static std::string fmtNum(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

void Checker::checkBody() {
  const SettingsBlock *ev = evolves.empty() ? nullptr : &evolves.front()->body;
  const BodyDecl *chosen = nullptr;
  if (const Setting *s = ev ? ev->find("body") : nullptr) {
    if (Expr *e = single(*s, "evolve.body"))
      if (auto n = evalName(*e, "evolve.body")) {
        for (auto *b : bodies)
          if (b->name.name == *n)
            chosen = b;
        if (!chosen) {
          std::vector<std::string> c;
          for (auto *b : bodies)
            c.push_back(b->name.name);
          undefined(e->range, "body", *n, c);
        }
      }
  } else if (bodies.size() == 1) {
    chosen = bodies.front();
  } else if (bodies.size() > 1 && ev) {
    diags.error(evolves.front()->name.range,
                "several bodies are declared; choose one with 'body = NAME;' in evolve");
  }
  for (auto *bd : bodies) {
    Body body;
    body.name = bd->name.name;
    body.kind = bd->bodyKind;
    body.decl = bd;
    auto partRef = [&](const Setting &s, const std::string &what, bool grammar) {
      Expr *e = single(s, what);
      auto n = e ? evalName(*e, what) : std::nullopt;
      if (!n)
        return std::string();
      auto it = names.find(*n);
      DeclKind want = grammar ? DeclKind::Grammar : DeclKind::Part;
      if (it == names.end() || it->second->kind != want) {
        std::vector<std::string> c;
        if (grammar)
          for (auto *g : grammars)
            c.push_back(g->name.name);
        else
          for (auto *p : parts)
            c.push_back(p->name.name);
        undefined(e->range, grammar ? "grammar" : "part", *n, c);
        return std::string();
      }
      return *n;
    };
    if (bd->bodyKind == BodyKind::Lattice) {
      checkKnownKeys(bd->body, "body lattice",
                     {"cell", "rows", "cols", "edge", "stiffness", "actuation", "repair"});
      for (const auto &s : bd->body.settings) {
        const std::string &k = s.key.name;
        if (k == "cell") {
          body.cell = partRef(s, k, false);
          // The runtime's lattice is ELDiR's triangle lattice (docs/evolution.md);
          // other cells tile through a grammar (stdlib/grammars/voxels.evo).
          if (!body.cell.empty() && body.cell != "triangle")
            diags.error(s.values.front()->range,
                        "a lattice body is ELDiR's triangle lattice: 'cell' must be "
                        "'triangle', not " +
                            q(body.cell) +
                            "; grow other cells with a grammar body (see "
                            "stdlib/grammars/voxels.evo)");
        } else if (k == "rows" || k == "cols") {
          Expr *e = single(s, k);
          if (auto v = e ? evalInt(*e, k) : std::nullopt) {
            if (*v < 1)
              diags.error(e->range, q(k) + " must be at least 1");
            else
              (k == "rows" ? body.rows : body.cols) = *v;
          }
        } else if (k == "edge" || k == "stiffness" || k == "actuation") {
          Expr *e = single(s, k);
          if (auto v = e ? evalNumber(*e, k) : std::nullopt) {
            if (k == "actuation" ? *v < 0 : *v <= 0)
              diags.error(e->range, q(k) + (k == "actuation" ? " must not be negative"
                                                             : " must be positive"));
            else
              (k == "edge" ? body.edge : k == "stiffness" ? body.stiffness : body.actuation) = *v;
          }
        } else if (k == "repair") {
          for (auto &v : s.values) {
            auto n = evalName(*v, "repair");
            if (n && *n != "fill_holes" && *n != "largest_component")
              diags.error(v->range,
                          "unknown repair " + q(*n) + "; expected fill_holes or largest_component");
            else if (n)
              (*n == "fill_holes" ? body.fillHoles : body.largestComponent) = true;
          }
        }
      }
      if (!bd->body.find("cell"))
        diags.error(bd->name.range, "a lattice body needs 'cell = PART;'");
      if (!bd->body.find("rows") || !bd->body.find("cols"))
        diags.error(bd->name.range, "a lattice body needs 'rows' and 'cols'");
    } else if (bd->bodyKind == BodyKind::Cells && bd->kindWord.name == "particles") {
      checkParticleBody(*bd, body, bd == chosen);
    } else if (bd->bodyKind == BodyKind::Cells) {
      checkCellBody(*bd, body, bd == chosen);
    } else if (bd->bodyKind == BodyKind::Voxel) {
      checkVoxelBody(*bd, body, bd == chosen);
    } else {
      checkGrammarBody(*bd, body, bd == chosen);
    }
    if (bd == chosen) {
      out.body = std::move(body);
      out.hasBody = true;
    }
  }
}

namespace {

/// False, with an error, when rule r's operation is unknown or takes (or
/// lacks) a target; an operation of the other body kind is an error too, but
/// the rule's rate is still checked.
bool mutationOpFits(Checker &C, const ast::MutationRule &r, bool lattice, bool grammar) {
  static const std::vector<std::string> ops = {"flip",      "add",     "remove", "swap",
                                               "rearrange", "combine", "perturb"};
  const std::string &op = r.op.name;
  if (op == "flip") {
    if (r.target.name != "cell" && r.target.name != "actuator") {
      C.diags.error(r.target.name.empty() ? r.op.range : r.target.range,
                    "flip needs a target: 'flip cell p = ...' or 'flip actuator p = ...'");
      return false;
    }
    if (grammar && r.target.name == "cell")
      C.diags.error(r.target.range, "'flip cell' mutates lattice bodies; body " +
                                        q(C.out.body.name) +
                                        " is a grammar body (use add, remove, swap, rearrange, "
                                        "combine, perturb, flip actuator)");
  } else if (std::find(ops.begin(), ops.end(), op) != ops.end()) {
    if (!r.target.name.empty()) {
      C.diags.error(r.target.range, q(op) + " takes no target: '" + op + " p = 0.3;'");
      return false;
    }
    if (lattice)
      C.diags.error(r.op.range, q(op) + " mutates grammar bodies; body " + q(C.out.body.name) +
                                    " is a lattice (use flip cell, flip actuator)");
  } else {
    std::string c = closest(op, ops);
    C.diags.error(r.op.range, "unknown mutation " + q(op) +
                                  (c.empty() ? "; expected flip, add, remove, swap, rearrange, "
                                               "combine or perturb"
                                             : "; did you mean '" + c + "'?"));
    return false;
  }
  return true;
}

} // namespace

void Checker::checkMutations() {
  if (mutations.empty())
    return;
  // A fixed body does not evolve: any rule would be one of another body kind's.
  if (out.hasBody && out.body.kind == BodyKind::Cells) {
    if (!mutations.front()->rules.empty())
      diags.error(mutations.front()->rules.front().range,
                  "body " + q(out.body.name) +
                      " is a fixed body: it does not evolve, so it takes no mutation rules; "
                      "remove the 'mutation' block");
    return;
  }
  if (out.hasBody && out.body.kind == BodyKind::Voxel) {
    checkVoxelMutations();
    return;
  }
  const bool lattice = out.hasBody && out.body.kind == BodyKind::Lattice;
  const bool grammar = out.hasBody && out.body.kind == BodyKind::Grammar;
  static const std::vector<std::string> latticeVars = {"cells", "edges"};
  static const std::vector<std::string> grammarVars = {"parts", "springs", "actuators"};
  std::map<std::string, SourceRange> seen;
  for (auto &r : mutations.front()->rules) {
    const std::string &op = r.op.name;
    if (!mutationOpFits(*this, r, lattice, grammar))
      continue;
    std::string key = op + " " + r.target.name;
    auto [it, fresh] = seen.emplace(key, r.range);
    if (!fresh) {
      diags
          .error(r.range,
                 "mutation '" + key.substr(0, key.find_last_not_of(' ') + 1) + "' is given twice")
          .note(it->second, "the first one is here");
      continue;
    }
    // The rate: a constant in [0, 1], or an expression over the counts of
    // the body kind (lattice: cells, edges; grammar: parts, springs, actuators).
    std::vector<std::string> allowed;
    if (!grammar)
      allowed.insert(allowed.end(), latticeVars.begin(), latticeVars.end());
    if (!lattice)
      allowed.insert(allowed.end(), grammarVars.begin(), grammarVars.end());
    const std::vector<std::string> &other = grammar ? latticeVars : grammarVars;
    bool wrongKind = false, usesVars = false;
    std::function<void(const Expr &)> scan = [&](const Expr &e) {
      if (auto *n = dynCast<NameExpr>(&e)) {
        if (std::find(allowed.begin(), allowed.end(), n->name) != allowed.end())
          usesVars = true;
        else if (out.hasBody && std::find(other.begin(), other.end(), n->name) != other.end()) {
          diags.error(n->range, q(n->name) + " counts " + (grammar ? "lattice" : "grammar") +
                                    " bodies; body " + q(out.body.name) + " is a " +
                                    (grammar ? "grammar body: use parts, springs or actuators"
                                             : "lattice: use cells or edges"));
          wrongKind = true;
        }
      }
      forEachChild(e, scan);
    };
    scan(*r.rate);
    if (wrongKind)
      continue;
    bool constant = !usesVars;
    std::map<std::string, double> vars;
    for (const auto &v : allowed)
      vars[v] = 1;
    auto v = evalNumber(*r.rate, "p", &vars);
    if (!v)
      continue;
    r.rate->type = Type::scalar();
    // A lattice's counts are the lattice's, fixed by rows and cols
    // (ELDiR's 1 / #triangles, 1 / #edges), so its rate is a number.
    if (lattice && !constant && out.body.rows > 0 && out.body.cols > 0) {
      const int64_t R = out.body.rows, C = out.body.cols;
      // Distinct edges of R x C triangles: 3 per triangle, less one per
      // pair of row neighbours and per vertically glued pair (a downward
      // triangle below an upward one: the (x, y) with x + y even below the
      // top row).
      const int64_t edges = 3 * R * C - R * (C - 1) - (C * (R - 1) + (C % 2) * ((R - 1) % 2)) / 2;
      std::map<std::string, double> counts = {{"cells", double(R * C)}, {"edges", double(edges)}};
      v = evalNumber(*r.rate, "p", &counts);
      if (!v)
        continue;
      constant = true;
    }
    if (constant) {
      if (*v < 0 || *v > 1) {
        diags.error(r.rate->range,
                    "mutation rate " + r.rateName.name + " = " + fmtNum(*v) + " is outside [0, 1]");
        continue;
      }
    } else if (*v < 0) {
      diags.error(r.rate->range, "mutation rate is negative");
      continue;
    }
    if (grammar) {
      body::Scalar rate;
      std::map<std::string, int> ix = {
          {"parts", body::kParts}, {"springs", body::kSprings}, {"actuators", body::kActuators}};
      if (!compileScalar(*r.rate, ix, rate, "a mutation rate", "parts, springs, actuators"))
        continue;
      auto &gm = out.grammarMutation;
      body::Scalar *slot = op == "add"         ? &gm.add
                           : op == "remove"    ? &gm.remove
                           : op == "swap"      ? &gm.swap
                           : op == "rearrange" ? &gm.rearrange
                           : op == "combine"   ? &gm.combine
                           : op == "perturb"   ? &gm.perturb
                                               : &gm.flip;
      *slot = std::move(rate);
      gm.untilChanged = gm.untilChanged || r.untilChanged;
    } else if (lattice) { // every rule is a flip (mutationOpFits)
      auto &lm = out.latticeMutation;
      const double rate = constant ? *v : -1; // -1: the reference rate
      if (r.target.name == "cell") {
        lm.cellRate = rate;
        lm.untilChanged = r.untilChanged;
      } else {
        lm.actuatorRate = rate;
      }
    }
  }
}

void Checker::checkVoxelMutations() {
  std::map<std::string, SourceRange> seen;
  // With rules, a rate that is not given is 0 (docs/language.md, Mutation).
  if (!mutations.front()->rules.empty()) {
    out.voxelMutation.resample = body::Scalar::constant(0);
    out.voxelMutation.untilChanged = false;
  }
  for (auto &r : mutations.front()->rules) {
    const std::string key = r.op.name + (r.target.name.empty() ? "" : " " + r.target.name);
    static const std::vector<std::string> voxelOps = {"resample voxel", "add voxel", "remove voxel",
                                                      "swap voxel"};
    if (std::find(voxelOps.begin(), voxelOps.end(), key) == voxelOps.end()) {
      diags.error(r.op.range, "body " + q(out.body.name) +
                                  " is a voxel body: it mutates with 'resample voxel p = P;' "
                                  "(each cell of its box redrawn with probability P), 'add "
                                  "voxel', 'remove voxel' and 'swap voxel', not '" +
                                  key + "'");
      continue;
    }
    auto [it, fresh] = seen.emplace(key, r.range);
    if (!fresh) {
      diags.error(r.range, "mutation '" + key + "' is given twice")
          .note(it->second, "the first one is here");
      continue;
    }
    body::Scalar rate;
    std::map<std::string, int> ix = {{"voxels", body::kVoxels}, {"cells", body::kBoxCells}};
    if (!compileScalar(*r.rate, ix, rate, "a mutation rate", "voxels, cells"))
      continue;
    std::map<std::string, double> vars = {{"voxels", 1}, {"cells", 1}};
    auto v = evalNumber(*r.rate, "p", &vars);
    if (!v)
      continue;
    r.rate->type = Type::scalar();
    if (rate.isConstant() && (*v < 0 || *v > 1)) {
      diags.error(r.rate->range,
                  "mutation rate " + r.rateName.name + " = " + fmtNum(*v) + " is outside [0, 1]");
      continue;
    }
    auto &vm = out.voxelMutation;
    (r.op.name == "resample" ? vm.resample
     : r.op.name == "add"    ? vm.add
     : r.op.name == "remove" ? vm.remove
                             : vm.swap) = std::move(rate);
    vm.untilChanged = vm.untilChanged || r.untilChanged;
  }
}

void Checker::checkParticleFields(const PhysicsDecl &ph) {
  // A particle body gives points (particles) with their actuator ids, and
  // the set of actuators (docs/language.md, "Particle bodies").
  if (ph.findSet("spring")) {
    const SourceRange at = out.body.decl ? out.body.decl->name.range : ph.name.range;
    diags
        .error(at, "body " + q(out.body.name) + " is a particle body, and physics " +
                       q(ph.name.name) +
                       " needs springs (it declares 'set spring'): simulate particles with a "
                       "grid physics such as mls_mpm (import \"physics/mpm.evo\")")
        .note(ph.name.range, "the physics is declared here");
    return;
  }
  for (const auto &set : ph.sets) {
    const std::string &s = set->name.name;
    if (s == "actuator" && !set->endpoints.empty())
      diags.error(set->name.range, "set 'actuator' holds a particle body's actuators; it has "
                                   "no endpoints");
    for (const auto &f : set->fields) {
      if (f->kind != FieldKind::Body || s == "object")
        continue;
      if (!(s == "point" && f->name.name == "actuator_id" && f->type.resolved == Type::scalar()))
        diags.error(f->name.range, "a particle body provides only point.actuator_id (a "
                                   "scalar: the particle's actuator, -1 for none); it cannot "
                                   "fill body field " +
                                       q(s + "." + f->name.name));
    }
  }
}

void Checker::checkBodyFields() {
  const PhysicsDecl *ph = out.world.physics;
  if (!ph || !out.hasBody)
    return;
  // The runtime builds robots as points and springs (docs/architecture.md,
  // "Layers and principles") and fills these fields from them; anything else
  // it cannot provide.
  const SetDecl *point = ph->findSet("point");
  const FieldDecl *x = point ? point->findField("x") : nullptr;
  std::string vec = "vec" + std::to_string(out.world.dim);
  if (!x || x->kind != FieldKind::State || x->type.resolved != Type::vec(out.world.dim)) {
    diags.error(point ? point->name.range : ph->name.range,
                "bodies are made of points and springs: physics " + q(ph->name.name) +
                    " needs 'set point { state x: " + vec + "; ... }' to place them");
    return;
  }
  if (out.cellBody && out.cellBody->particles) {
    checkParticleFields(*ph);
    return;
  }
  const SetDecl *spring = ph->findSet("spring");
  const EndpointDecl *a = spring ? spring->findEndpoint("a") : nullptr;
  const EndpointDecl *b = spring ? spring->findEndpoint("b") : nullptr;
  if (!spring || !a || !b || a->target != point || b->target != point) {
    diags.error(spring ? spring->name.range : ph->name.range,
                "bodies are made of points and springs: physics " + q(ph->name.name) +
                    " needs 'set spring(a: point, b: point) { ... }'");
    return;
  }
  for (const auto &set : ph->sets)
    for (const auto &f : set->fields) {
      if (f->kind != FieldKind::Body)
        continue;
      const std::string &n = f->name.name;
      bool known = set.get() == spring && (n == "rest" || n == "stiffness" || n == "actuation") &&
                   f->type.resolved == Type::scalar();
      if (!known && set->name.name != "object") // the world's (checkObjectSets)
        diags.error(f->name.range, "a body provides only spring.rest, spring.stiffness and "
                                   "spring.actuation (scalars); it cannot fill body field " +
                                       q(set->name.name + "." + n) +
                                       " (make it a 'param' to learn it)");
    }
}

void Checker::checkObjectSets() {
  const PhysicsDecl *ph = out.world.physics;
  if (!ph)
    return;
  const SetDecl *object = ph->findSet("object");
  const std::string vec = "vec" + std::to_string(out.world.dim);
  if (!object) {
    const Setting *objs = worlds.empty() ? nullptr : worlds.front()->body.find("objects");
    if (objs && !out.world.ground.objects.empty())
      diags.error(objs->key.range, "this world has objects, but physics " + q(ph->name.name) +
                                       " has no 'set object { state x: " + vec +
                                       "; ... }' to move them (docs/language.md, \"Objects\"; "
                                       "the stdlib's is mass_spring_objects)");
    return;
  }
  // The world fills the object set (docs/language.md, "Objects").
  if (!object->endpoints.empty())
    diags.error(object->name.range, "set 'object' holds the world's objects; it has no "
                                    "endpoints (pair it with points in a set like "
                                    "'set touch(p: point, o: object)')");
  const FieldDecl *x = object->findField("x");
  if (!x || x->kind != FieldKind::State || x->type.resolved != Type::vec(out.world.dim))
    diags.error(object->name.range,
                "set 'object' needs 'state x: " + vec + ";' (each object's centre)");
  for (const auto &f : object->fields) {
    const std::string &n = f->name.name;
    if (f->kind == FieldKind::Param || f->kind == FieldKind::Input)
      diags.error(f->name.range, "an object's fields are state, temp or body (half, mass); "
                                 "nothing trains or drives 'object." +
                                     n + "'");
    else if (f->kind == FieldKind::Body &&
             !(n == "half" && f->type.resolved == Type::vec(out.world.dim)) &&
             !(n == "mass" && f->type.resolved == Type::scalar()))
      diags.error(f->name.range, "the world provides only object.half (" + vec +
                                     ", the half extents) and object.mass (scalar); it "
                                     "cannot fill body field 'object." +
                                     n + "'");
  }
  const SetDecl *point = ph->findSet("point");
  for (const auto &set : ph->sets) {
    bool pairs = false;
    for (const auto &e : set->endpoints)
      pairs = pairs || e.target == object;
    if (!pairs)
      continue;
    bool shape = set->endpoints.size() == 2 && point &&
                 ((set->endpoints[0].target == point) != (set->endpoints[1].target == point));
    if (!shape)
      diags.error(set->name.range, "a set with an endpoint in 'object' holds every (point, "
                                   "object) pair: it takes one endpoint in point and one in "
                                   "object, like 'set " +
                                       set->name.name + "(p: point, o: object)'");
    for (const auto &f : set->fields)
      if (f->kind != FieldKind::Temp)
        diags.error(f->name.range, "a set of (point, object) pairs holds only temps; '" +
                                       set->name.name + "." + f->name.name +
                                       "' cannot be state, body, param or input");
  }
}

} // namespace evoc::sema
