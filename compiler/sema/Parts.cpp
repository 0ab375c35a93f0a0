// Checks of parts (params, points, springs, actuators, groups, ports, mirror,
// cells) and their evaluation into sema::Part and body::PartSpec.
#include "sema/Checker.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace evoc::sema {

using namespace ast;

namespace {

std::string q(const std::string &s) { return "'" + s + "'"; }

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

double dist(const std::vector<double> &a, const std::vector<double> &b) {
  double s = 0;
  for (size_t k = 0; k < a.size() && k < b.size(); ++k)
    s += (a[k] - b[k]) * (a[k] - b[k]);
  return std::sqrt(s);
}

/// The signed volume (2D: area) spanned by the points `ix` relative to ix[0].
double orientedVolume(const std::vector<std::vector<double>> &p, const std::vector<int> &ix) {
  auto d = [&](int i, int k) { return p[ix[i]][k] - p[ix[0]][k]; };
  if (ix.size() == 3)
    return d(1, 0) * d(2, 1) - d(1, 1) * d(2, 0);
  return d(1, 0) * (d(2, 1) * d(3, 2) - d(2, 2) * d(3, 1)) -
         d(1, 1) * (d(2, 0) * d(3, 2) - d(2, 2) * d(3, 0)) +
         d(1, 2) * (d(2, 0) * d(3, 1) - d(2, 1) * d(3, 0));
}

/// Greedily picks the best-conditioned simplex (dim + 1 points) of `p`:
/// the one whose orientation tells a reflection from a rotation.
std::vector<int> spanningSimplex(const std::vector<std::vector<double>> &p, int dim) {
  int n = int(p.size());
  if (n < dim + 1)
    return {};
  std::vector<int> ix = {0};
  int far = 0;
  for (int i = 1; i < n; ++i)
    if (dist(p[i], p[0]) > dist(p[far], p[0]))
      far = i;
  ix.push_back(far);
  for (int k = 2; k <= dim; ++k) {
    int best = -1;
    double bestV = 0;
    for (int i = 0; i < n; ++i) {
      std::vector<int> t = ix;
      t.push_back(i);
      double v;
      if (k < dim) { // 3D, third point: the area of the triangle
        double ax = p[ix[1]][0] - p[0][0], ay = p[ix[1]][1] - p[0][1], az = p[ix[1]][2] - p[0][2];
        double bx = p[i][0] - p[0][0], by = p[i][1] - p[0][1], bz = p[i][2] - p[0][2];
        v = std::hypot(ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx);
      } else {
        v = std::fabs(orientedVolume(p, t));
      }
      if (v > bestV)
        bestV = v, best = i;
    }
    if (best < 0)
      return {};
    ix.push_back(best);
  }
  return ix;
}

} // namespace

int Checker::partIndex(const std::string &name) const {
  for (size_t i = 0; i < out.partSpecs.size(); ++i)
    if (out.partSpecs[i].name == name)
      return int(i);
  return -1;
}

bool Checker::compileScalar(const Expr &e, const std::map<std::string, int> &params,
                            body::Scalar &s, const std::string &what,
                            const std::string &namesWhat) {
  using Op = body::Scalar::Op;
  auto bad = [&](const std::string &msg) {
    diags.error(e.range, msg + " in " + what + "; it may use numbers, " + namesWhat +
                             ", + - * /, sqrt, sin and cos");
    return false;
  };
  switch (e.kind) {
  case ExprKind::Number:
    s.code.push_back({Op::Const, cast<NumberExpr>(&e)->value, -1});
    return true;
  case ExprKind::Name: {
    const auto &n = cast<NameExpr>(&e)->name;
    auto it = params.find(n);
    if (it != params.end()) {
      s.code.push_back({Op::Param, 0, it->second});
      return true;
    }
    if (n == "pi") {
      s.code.push_back({Op::Const, M_PI, -1});
      return true;
    }
    std::vector<std::string> names;
    for (const auto &[k, v] : params)
      names.push_back(k);
    std::string c = closest(n, names);
    if (!c.empty()) {
      diags.error(e.range, "unknown name " + q(n) + " in " + what + "; did you mean " + q(c) + "?");
      return false;
    }
    return bad("unknown name " + q(n));
  }
  case ExprKind::Unary: {
    auto *u = cast<UnaryExpr>(&e);
    if (u->op == UnaryOp::Not)
      return bad("'!'");
    if (!compileScalar(*u->operand, params, s, what, namesWhat))
      return false;
    if (u->op == UnaryOp::Neg)
      s.code.push_back({Op::Neg, 0, -1});
    return true;
  }
  case ExprKind::Binary: {
    auto *b = cast<BinaryExpr>(&e);
    Op op = b->op == BinaryOp::Add   ? Op::Add
            : b->op == BinaryOp::Sub ? Op::Sub
            : b->op == BinaryOp::Mul ? Op::Mul
            : b->op == BinaryOp::Div ? Op::Div
                                     : Op::Const;
    if (op == Op::Const) {
      diags.error(b->opRange, std::string("operator '") + binaryOpSpelling(b->op) + "' in " + what +
                                  "; it may use + - * /, sqrt, sin and cos");
      return false;
    }
    if (!compileScalar(*b->lhs, params, s, what, namesWhat) ||
        !compileScalar(*b->rhs, params, s, what, namesWhat))
      return false;
    s.code.push_back({op, 0, -1});
    return true;
  }
  case ExprKind::Call: {
    auto *c = cast<CallExpr>(&e);
    const std::string &f = c->callee.name;
    Op op = f == "sqrt" ? Op::Sqrt : f == "sin" ? Op::Sin : f == "cos" ? Op::Cos : Op::Const;
    if (op == Op::Const)
      return bad("function " + q(f));
    if (c->args.size() != 1 || !c->namedArgs.empty())
      return bad(q(f) + " takes one argument");
    if (!compileScalar(*c->args[0], params, s, what, namesWhat))
      return false;
    s.code.push_back({op, 0, -1});
    return true;
  }
  default:
    return bad("this expression");
  }
}

namespace {

/// One part being checked: the checker, its declaration and what the steps
/// have gathered so far.
struct PartDraft {
  Checker &C;
  PartDecl &pd;
  Part part;
  body::PartSpec spec;
  Checker::PartExtra ex;
  std::map<std::string, int> paramIdx; ///< param name -> index in spec.params
  std::vector<double> defaults;        ///< each param's default

  /// A point index of this part; reports one out of range.
  std::optional<int> pointIndex(const Expr &e, const std::string &what) const {
    const int np = int(part.points.size());
    auto v = C.evalInt(e, what);
    if (!v)
      return std::nullopt;
    if (*v < 0 || *v >= np) {
      C.diags.error(e.range, "point index " + std::to_string(*v) + " is out of range; part " +
                                 q(part.name) + " has points 0.." + std::to_string(np - 1));
      return std::nullopt;
    }
    return int(*v);
  }
  /// A spring index of this part (once its springs are checked).
  std::optional<int> springIndex(const Expr &e, const std::string &what) const {
    const int ns = int(spec.springs.size());
    auto v = C.evalInt(e, what);
    if (!v)
      return std::nullopt;
    if (*v < 0 || *v >= ns) {
      C.diags.error(e.range, "spring index " + std::to_string(*v) + " is out of range; part " +
                                 q(part.name) + " has springs 0.." + std::to_string(ns - 1));
      return std::nullopt;
    }
    return int(*v);
  }
  /// A positive number; reports zero or less.
  std::optional<double> positive(const Expr &e, const std::string &what) const {
    auto v = C.evalNumber(e, what);
    if (v && !(*v > 0)) {
      C.diags.error(e.range, (what == "stiffness" ? q(what) : what) + " must be positive");
      return std::nullopt;
    }
    return v;
  }
};

/// Params: `param len = 1 in 0.5 .. 2;`, into spec.params and the defaults.
void checkPartParams(PartDraft &d) {
  for (const auto &prm : d.pd.params) {
    if (d.paramIdx.count(prm.name.name)) {
      d.C.diags.error(prm.name.range, "param " + q(prm.name.name) + " is declared twice");
      continue;
    }
    auto init = d.C.evalNumber(*prm.init, "param " + prm.name.name);
    auto lo = d.C.evalNumber(*prm.lo, "param " + prm.name.name);
    auto hi = d.C.evalNumber(*prm.hi, "param " + prm.name.name);
    if (!init || !lo || !hi)
      continue;
    if (!(*lo < *hi)) {
      d.C.diags.error(prm.lo->range, "param " + q(prm.name.name) + " has an empty range " +
                                         fmt(*lo) + " .. " + fmt(*hi) +
                                         "; the low end comes first");
      continue;
    }
    if (*init < *lo || *init > *hi) {
      d.C.diags.error(prm.init->range, "the default " + fmt(*init) + " of param " +
                                           q(prm.name.name) + " is outside its range " + fmt(*lo) +
                                           " .. " + fmt(*hi));
      continue;
    }
    d.paramIdx[prm.name.name] = int(d.spec.params.size());
    d.spec.params.push_back({prm.name.name, *init, *lo, *hi});
    d.defaults.push_back(*init);
  }
}

/// One point's coordinates, compiled over the params and evaluated at their
/// defaults; false (reported) if any coordinate is not usable.
bool checkPartPoint(PartDraft &d, const TupleExpr &t) {
  std::vector<double> xs;
  std::vector<body::Scalar> coords;
  for (auto &c : t.elems) {
    body::Scalar sc;
    if (!d.C.compileScalar(*c, d.paramIdx, sc, "a point coordinate"))
      continue;
    double v = body::evalScalar(sc, d.defaults.data());
    if (!std::isfinite(v)) {
      d.C.diags.error(c->range, "this coordinate is not a finite number at the params' defaults");
      continue;
    }
    xs.push_back(v);
    coords.push_back(std::move(sc));
  }
  if (xs.size() != t.elems.size())
    return false;
  d.part.points.push_back(xs);
  d.spec.points.push_back(std::move(coords));
  return true;
}

/// Points: `points = [(0, 0), (1, 0), ...];`, and the part's dimension.
/// False (reported) when the part has no list of points, or points of the
/// wrong size: one error for the part, since every index into its points
/// would repeat it.
bool checkPartPoints(PartDraft &d) {
  const Setting *pts = d.pd.body.find("points");
  if (!pts) {
    d.C.diags.error(d.pd.name.range, "part " + q(d.part.name) +
                                         " has no points; add "
                                         "'points = [(0, 0), (1, 0), ...];'");
    return false;
  }
  const int dim = d.C.dimKnown ? d.C.out.world.dim : 0;
  auto *list = pts->values.size() == 1 ? dynCast<ListExpr>(pts->values[0].get()) : nullptr;
  if (!list) {
    d.C.diags.error(pts->range, "points must be a list of coordinates: [(0, 0), (1, 0), ...]");
    return false;
  }
  // The size every point must have: world.dim, else the first point's.
  int need = dim;
  for (size_t i = 0; i < list->elems.size() && !need; ++i)
    if (auto *t = dynCast<TupleExpr>(list->elems[i].get()))
      need = int(t->elems.size());
  bool ok = true;
  for (size_t i = 0; i < list->elems.size(); ++i) {
    const Expr &pe = *list->elems[i];
    auto *t = dynCast<TupleExpr>(&pe);
    if (!t) {
      d.C.diags.error(pe.range, "a point is a tuple of coordinates, e.g. (0.5, 1)");
      ok = false;
      continue;
    }
    const int n = int(t->elems.size());
    if (n == need && n >= 2 && n <= 3) {
      ok = checkPartPoint(d, *t) && ok;
      continue;
    }
    int wrong = 0; // this point and those after it of the wrong size
    for (size_t j = i; j < list->elems.size(); ++j)
      if (auto *u = dynCast<TupleExpr>(list->elems[j].get()); u && int(u->elems.size()) != need)
        ++wrong;
    std::string more = wrong > 1 ? " (as do " + std::to_string(wrong - 1) + " more)" : "";
    std::string msg = "point " + std::to_string(i) + " of part " + q(d.part.name) + " has " +
                      std::to_string(n) + " coordinate" + (n == 1 ? "" : "s") + more + ", ";
    if (dim)
      msg += "but world.dim = " + std::to_string(dim) + " needs " + std::to_string(dim) +
             (dim == 3 ? ": (x, y, z) with z up" : ": (x, y)");
    else if (need < 2 || need > 3)
      msg += "but a point has 2 or 3";
    else
      msg += "but the part's first point has " + std::to_string(need);
    d.C.diags.error(pe.range, msg);
    return false;
  }
  d.spec.dim = need >= 2 && need <= 3 ? need : 2;
  return ok;
}

/// The part's own `stiffness` and `actuation` (defaults of its springs),
/// else its material's (`material = NAME;`, which also gives its colour).
void checkPartMaterial(PartDraft &d) {
  if (const Setting *s = d.pd.body.find("material"))
    if (Expr *e = d.C.single(*s, "material"))
      if (const auto *m = d.C.materialRef(*e, "material")) {
        if (m->hasStiffness)
          d.ex.stiffness = m->spec.stiffness;
        if (m->hasActuation)
          d.ex.actuation = m->spec.actuation;
        d.spec.colour = m->spec.colour;
      }
  if (const Setting *s = d.pd.body.find("stiffness"))
    if (Expr *e = d.C.single(*s, "stiffness"))
      d.ex.stiffness = d.positive(*e, "stiffness");
  if (const Setting *s = d.pd.body.find("actuation"))
    if (Expr *e = d.C.single(*s, "actuation"))
      if (auto v = d.C.evalNumber(*e, "actuation")) {
        if (*v < 0)
          d.C.diags.error(e->range, "'actuation' must not be negative");
        else
          d.ex.actuation = v;
      }
}

/// Adds spring (a, b) with its own stiffness k, if any.
void addPartSpring(PartDraft &d, int a, int b, std::optional<double> k) {
  d.part.springs.push_back({a, b});
  d.ex.springStiffness.push_back(k);
  body::SpringSpec ss;
  ss.a = a;
  ss.b = b;
  ss.stiffness = k ? *k : d.ex.stiffness ? *d.ex.stiffness : 3e4;
  ss.actuation = d.ex.actuation ? *d.ex.actuation : 0.1;
  d.spec.springs.push_back(ss);
}

/// `within(D)`: every pair of points at most D apart at the params'
/// defaults, in index order, that no earlier value lists.
void addSpringsWithin(PartDraft &d, CallExpr &call) {
  call.ref = CallRef::Setting;
  if (call.args.size() != 1 || !call.namedArgs.empty()) {
    d.C.diags.error(call.range, "within(D) takes one distance: the springs join every pair of "
                                "points at most D apart");
    return;
  }
  auto D = d.positive(*call.args[0], "within's distance");
  if (!D)
    return;
  const auto &pts = d.part.points;
  const int np = int(pts.size());
  double closest = -1;
  int added = 0;
  for (int a = 0; a < np; ++a)
    for (int b = a + 1; b < np; ++b) {
      const double r = dist(pts[size_t(a)], pts[size_t(b)]);
      if (closest < 0 || r < closest)
        closest = r;
      if (r > *D * (1 + 1e-9))
        continue;
      bool listed = false;
      for (auto &[x, y] : d.part.springs)
        listed = listed || (x == a && y == b) || (x == b && y == a);
      if (!listed)
        addPartSpring(d, a, b, std::nullopt), ++added;
    }
  if (added == 0 && closest > *D * (1 + 1e-9))
    d.C.diags.error(call.range, "within(" + fmt(*D) + ") joins no points: the closest two are " +
                                    fmt(closest) + " apart");
}

/// A list of springs: (a, b) or (a, b, stiffness).
void checkSpringList(PartDraft &d, ListExpr &sl) {
  for (auto &se : sl.elems) {
    auto *t = dynCast<TupleExpr>(se.get());
    if (!t || t->elems.size() < 2 || t->elems.size() > 3) {
      d.C.diags.error(se->range, "a spring is a pair of point indices, e.g. (0, 1), or a "
                                 "triple with its stiffness, (0, 1, 1e4)");
      continue;
    }
    auto a = d.pointIndex(*t->elems[0], "a spring endpoint");
    auto b = d.pointIndex(*t->elems[1], "a spring endpoint");
    std::optional<double> k;
    if (t->elems.size() == 3 && !(k = d.positive(*t->elems[2], "a spring's stiffness")))
      continue;
    if (!a || !b)
      continue;
    if (*a == *b) {
      d.C.diags.error(se->range, "a spring joins two different points");
      continue;
    }
    for (auto &[x, y] : d.part.springs)
      if ((x == *a && y == *b) || (x == *b && y == *a))
        d.C.diags.warning(se->range, "spring (" + std::to_string(*a) + ", " + std::to_string(*b) +
                                         ") is listed twice");
    addPartSpring(d, *a, *b, k);
  }
}

/// Springs: lists of (a, b) or (a, b, stiffness), and `within(D)`.
void checkPartSprings(PartDraft &d) {
  const Setting *sp = d.pd.body.find("springs");
  if (!sp)
    return;
  for (auto &v : sp->values) {
    if (auto *call = dynCast<CallExpr>(v.get()); call && call->callee.name == "within") {
      addSpringsWithin(d, *call);
      continue;
    }
    auto *sl = dynCast<ListExpr>(v.get());
    if (!sl) {
      d.C.diags.error(v->range, "springs are lists of point index pairs, [(0, 1), (1, 2)], "
                                "and within(D) (every pair of points at most D apart)");
      continue;
    }
    checkSpringList(d, *sl);
  }
}

/// Actuators: all springs by default, `all`, `none` or a list of indices.
std::vector<bool> checkPartActuators(PartDraft &d) {
  std::vector<bool> actuatable(d.spec.springs.size(), true);
  const Setting *s = d.pd.body.find("actuators");
  if (!s)
    return actuatable;
  Expr *e = d.C.single(*s, "actuators");
  auto *l = e ? dynCast<ListExpr>(e) : nullptr;
  auto *n = e ? dynCast<NameExpr>(e) : nullptr;
  if (n) {
    // all, none, or a cell template by the axes a spring's points differ
    // along at the params' defaults (docs/language.md, Parts).
    auto t = cellTemplate(d.C, *n, d.spec.dim);
    if (!t)
      return actuatable;
    const auto &pts = d.part.points;
    for (size_t i = 0; i < actuatable.size(); ++i) {
      const auto &pa = pts[size_t(d.spec.springs[i].a)], &pb = pts[size_t(d.spec.springs[i].b)];
      bool differs[3] = {false, false, false};
      for (size_t c = 0; c < pa.size() && c < 3; ++c)
        differs[c] = std::abs(pa[c] - pb[c]) > 1e-9 * (1 + std::abs(pa[c]) + std::abs(pb[c]));
      actuatable[i] = body::templateActuates(*t, differs, d.spec.dim);
    }
  } else if (l) {
    std::fill(actuatable.begin(), actuatable.end(), false);
    for (auto &ie : l->elems)
      if (auto i = d.springIndex(*ie, "an actuator"))
        actuatable[size_t(*i)] = true;
  } else if (e) {
    d.C.diags.error(e->range, "actuators is all, none, a cell template (vertical, horizontal, "
                              "diagonal, leg, along_x, along_y) or a list of spring indices, "
                              "e.g. [0, 2]");
  }
  return actuatable;
}

/// Groups: `side(2, 3)`, one actuation gene each; `geneOf`: spring -> gene.
void checkPartGroups(PartDraft &d, const std::vector<bool> &actuatable, std::vector<int> &geneOf) {
  const Setting *g = d.pd.body.find("groups");
  if (!g)
    return;
  std::set<std::string> names;
  for (auto &v : g->values) {
    auto *call = dynCast<CallExpr>(v.get());
    if (!call || call->args.empty() || !call->namedArgs.empty()) {
      d.C.diags.error(v->range, "a group is a name and its springs, e.g. side(2, 3)");
      continue;
    }
    call->ref = CallRef::Setting;
    if (!names.insert(call->callee.name).second) {
      d.C.diags.error(call->callee.range, "group " + q(call->callee.name) + " is declared twice");
      continue;
    }
    body::GeneSpec gene;
    gene.name = call->callee.name;
    for (auto &a : call->args) {
      auto i = d.springIndex(*a, "a group's spring");
      if (!i)
        continue;
      if (!actuatable[size_t(*i)]) {
        d.C.diags.error(a->range, "spring " + std::to_string(*i) + " of group " + q(gene.name) +
                                      " is not an actuator (see 'actuators')");
        continue;
      }
      if (geneOf[size_t(*i)] >= 0) {
        d.C.diags.error(a->range, "spring " + std::to_string(*i) + " is in two groups");
        continue;
      }
      geneOf[size_t(*i)] = int(d.spec.genes.size());
      gene.springs.push_back(*i);
    }
    d.spec.genes.push_back(std::move(gene));
  }
}

/// Actuators and groups: one actuation gene per group and per actuated
/// spring outside the groups.
void checkPartGenes(PartDraft &d) {
  const int ns = int(d.spec.springs.size());
  std::vector<bool> actuatable = checkPartActuators(d);
  std::vector<int> geneOf(size_t(ns), -1);
  checkPartGroups(d, actuatable, geneOf);
  for (int i = 0; i < ns; ++i) {
    if (!actuatable[size_t(i)])
      continue;
    if (geneOf[size_t(i)] < 0) {
      geneOf[size_t(i)] = int(d.spec.genes.size());
      d.spec.genes.push_back({"s" + std::to_string(i), {i}});
    }
    d.spec.springs[size_t(i)].gene = geneOf[size_t(i)];
  }
}

/// Ports: `left(2, 0)`, a name and its points.
void checkPartPorts(PartDraft &d) {
  const Setting *po = d.pd.body.find("ports");
  if (!po)
    return;
  std::map<std::string, SourceRange> seen;
  for (auto &v : po->values) {
    auto *call = dynCast<CallExpr>(v.get());
    if (!call || call->args.empty()) {
      d.C.diags.error(v->range, "a port is a name and its points, e.g. left(2, 0)");
      continue;
    }
    call->ref = CallRef::Setting;
    auto [it, fresh] = seen.emplace(call->callee.name, call->callee.range);
    if (!fresh) {
      d.C.diags.error(call->callee.range, "port " + q(call->callee.name) + " is declared twice")
          .note(it->second, "the first one is here");
      continue;
    }
    Port port;
    port.name = call->callee.name;
    for (auto &a : call->args)
      if (auto i = d.pointIndex(*a, "a port point")) {
        if (std::count(port.points.begin(), port.points.end(), *i))
          d.C.diags.error(a->range,
                          "port " + q(port.name) + " lists point " + std::to_string(*i) + " twice");
        else
          port.points.push_back(*i);
      }
    body::PortSpec spec{port.name, port.points};
    for (auto &na : call->namedArgs) {
      if (na.name.name != "lever") {
        d.C.diags.error(na.name.range, "a port takes its points and, for a hinge, 'lever = "
                                       "POINT' (a ball joint in 3D: 'lever = [P, Q]'); not " +
                                           q(na.name.name));
        continue;
      }
      // One lever (a hinge) or, in 3D, a list of two (a ball joint).
      std::vector<Expr *> items;
      if (auto *list = dynCast<ListExpr>(na.value.get()))
        for (auto &e : list->elems)
          items.push_back(e.get());
      else
        items.push_back(na.value.get());
      const size_t most = d.spec.dim == 3 ? 2 : 1;
      if (items.empty() || items.size() > most) {
        d.C.diags.error(na.value->range,
                        d.spec.dim == 3
                            ? "a joint has one lever (a hinge) or two (a ball joint), not " +
                                  std::to_string(items.size())
                            : "a 2D joint has one lever (a hinge); two levers make a ball joint, "
                              "which turns in 3D");
        continue;
      }
      if (port.points.size() != 1) {
        d.C.diags.error(na.name.range,
                        "a lever makes a one-point port a hinge; port " + q(port.name) + " has " +
                            std::to_string(port.points.size()) + " points, so it cannot turn");
        continue;
      }
      for (Expr *item : items) {
        auto i = d.pointIndex(*item, "a lever");
        if (!i)
          continue;
        if (*i == port.points[0])
          d.C.diags.error(item->range, "a lever is a point off the pin, not the pin itself");
        else if (std::count(spec.levers.begin(), spec.levers.end(), *i))
          d.C.diags.error(item->range, "a ball joint's two levers are two different points");
        else
          spec.levers.push_back(*i);
      }
    }
    d.spec.ports.push_back(std::move(spec));
    d.part.ports.push_back(port);
  }
}

/// Why the point permutation `m` is not a reflection of the part (its points
/// at the params' defaults, its springs), or "" if it is one.
std::string whyNotReflection(const Part &part, const std::vector<int> &m, int dim) {
  const int np = int(part.points.size());
  std::string why;
  std::vector<int> seenAt(size_t(np), -1);
  for (int i = 0; i < np && why.empty(); ++i) {
    if (seenAt[size_t(m[i])] >= 0)
      why = "points " + std::to_string(seenAt[size_t(m[i])]) + " and " + std::to_string(i) +
            " both map to point " + std::to_string(m[i]) + ", so it is not a permutation";
    seenAt[size_t(m[i])] = i;
  }
  for (int i = 0; i < np && why.empty(); ++i)
    if (m[size_t(m[i])] != i)
      why = "point " + std::to_string(i) + " maps to " + std::to_string(m[i]) + ", which maps to " +
            std::to_string(m[size_t(m[i])]) + "; a reflection maps each point back";
  double size = 0;
  for (int i = 0; i < np; ++i)
    for (int j = 0; j < np; ++j)
      size = std::max(size, dist(part.points[i], part.points[j]));
  const double tol = 1e-9 * std::max(size, 1e-300);
  for (int i = 0; i < np && why.empty(); ++i)
    for (int j = i + 1; j < np && why.empty(); ++j) {
      double d0 = dist(part.points[i], part.points[j]);
      double d1 = dist(part.points[m[i]], part.points[m[j]]);
      if (std::fabs(d0 - d1) > tol)
        why = "points " + std::to_string(i) + " and " + std::to_string(j) + " are " + fmt(d0) +
              " apart, their images " + std::to_string(m[i]) + " and " + std::to_string(m[j]) +
              " " + fmt(d1) + " (at the params' defaults)";
    }
  if (why.empty()) {
    // Distances kept: an isometry; it must turn the part over.
    std::vector<int> simplex = spanningSimplex(part.points, dim);
    if (!simplex.empty()) {
      double v0 = orientedVolume(part.points, simplex);
      std::vector<int> image;
      for (int i : simplex)
        image.push_back(m[size_t(i)]);
      double v1 = orientedVolume(part.points, image);
      if (std::fabs(v0) > 1e-9 * std::pow(size, dim) && v0 * v1 > 0)
        why = "it keeps the part's orientation: a rotation, not a reflection";
    }
  }
  std::set<std::pair<int, int>> springSet;
  for (auto &[a, b] : part.springs)
    springSet.insert({std::min(a, b), std::max(a, b)});
  for (size_t k = 0; k < part.springs.size() && why.empty(); ++k) {
    auto [a, b] = part.springs[k];
    int ma = m[size_t(a)], mb = m[size_t(b)];
    if (!springSet.count({std::min(ma, mb), std::max(ma, mb)}))
      why = "it maps spring (" + std::to_string(a) + ", " + std::to_string(b) + ") to (" +
            std::to_string(ma) + ", " + std::to_string(mb) + "), which is not a spring";
  }
  return why;
}

/// Mirror: a permutation that is a reflection of the part.
void checkPartMirror(PartDraft &d) {
  const Setting *mi = d.pd.body.find("mirror");
  if (!mi)
    return;
  const int np = int(d.part.points.size());
  Expr *e = d.C.single(*mi, "mirror");
  auto *l = e ? dynCast<ListExpr>(e) : nullptr;
  std::vector<int> m;
  if (e && !l)
    d.C.diags.error(e->range, "mirror is a list giving each point's image, e.g. [1, 0, 3, 2]");
  else if (l && int(l->elems.size()) != np)
    d.C.diags.error(e->range, "mirror gives " + std::to_string(l->elems.size()) +
                                  " images, but part " + q(d.part.name) + " has " +
                                  std::to_string(np) + " points");
  else if (l) {
    for (auto &ie : l->elems)
      if (auto i = d.pointIndex(*ie, "a mirror image"))
        m.push_back(*i);
  }
  if (!(l && int(m.size()) == np && np > 0))
    return;
  std::string why = whyNotReflection(d.part, m, d.spec.dim);
  if (!why.empty())
    d.C.diags.error(e->range, "mirror of part " + q(d.part.name) + " is not a reflection: " + why);
  else
    d.spec.mirror = m;
}

/// Cells: convex solids for the overlap test (default: the convex hull).
void checkPartCells(PartDraft &d) {
  const Setting *ce = d.pd.body.find("cells");
  if (!ce)
    return;
  Expr *e = d.C.single(*ce, "cells");
  auto *l = e ? dynCast<ListExpr>(e) : nullptr;
  if (e && !l)
    d.C.diags.error(e->range, "cells is a list of point tuples, e.g. [(0, 1, 2)]");
  const int need = d.spec.dim == 2 ? 3 : 4;
  for (size_t c = 0; l && c < l->elems.size(); ++c) {
    auto *t = dynCast<TupleExpr>(l->elems[c].get());
    if (!t || int(t->elems.size()) < need) {
      d.C.diags.error(l->elems[c]->range, "a cell lists at least " + std::to_string(need) +
                                              " points in " + std::to_string(d.spec.dim) +
                                              "D, e.g. (0, 1, 2" + (need == 4 ? ", 3" : "") + ")");
      continue;
    }
    std::vector<int> cell;
    for (auto &ie : t->elems)
      if (auto i = d.pointIndex(*ie, "a cell point")) {
        if (std::count(cell.begin(), cell.end(), *i))
          d.C.diags.error(ie->range, "a cell lists point " + std::to_string(*i) + " twice");
        else
          cell.push_back(*i);
      }
    d.spec.cells.push_back(cell);
  }
}

} // namespace

void Checker::checkParts() {
  for (auto *pd : parts) {
    const int errorsBefore = diags.errorCount();
    PartDraft d{*this, *pd, {}, {}, {}, {}, {}};
    d.part.name = pd->name.name;
    d.part.decl = pd;
    d.spec.name = d.part.name;
    checkKnownKeys(pd->body, "part",
                   {"points", "springs", "stiffness", "actuation", "actuators", "groups", "ports",
                    "mirror", "cells", "material"});
    checkPartParams(d);
    if (!checkPartPoints(d)) {
      failedParts.insert(d.part.name);
      continue;
    }
    checkPartMaterial(d);
    checkPartSprings(d);
    checkPartGenes(d);
    checkPartPorts(d);
    checkPartMirror(d);
    checkPartCells(d);
    d.ex.defaults = d.part.points;
    d.ex.ok = diags.errorCount() == errorsBefore;
    if (!d.ex.ok)
      failedParts.insert(d.part.name);
    out.parts.push_back(std::move(d.part));
    out.partSpecs.push_back(std::move(d.spec));
    partExtras.push_back(std::move(d.ex));
  }
}

} // namespace evoc::sema
