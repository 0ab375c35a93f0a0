// Checks of parts, body-part grammars, the body and the mutation rules, and
// their evaluation into the CheckedProgram.
#include "sema/Checker.h"

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

void Checker::checkParts() {
  for (auto *pd : parts) {
    Part part;
    part.name = pd->name.name;
    part.decl = pd;
    checkKnownKeys(pd->body, "part", {"points", "springs", "ports"});
    const Setting *pts = pd->body.find("points");
    if (!pts) {
      diags.error(pd->name.range, "part " + q(part.name) +
                                      " has no points; add "
                                      "'points = [(0, 0), (1, 0), ...];'");
      continue;
    }
    const int dim = haveWorld ? out.world.dim : 0;
    int firstDim = 0;
    auto *list = pts->values.size() == 1 ? dynCast<ListExpr>(pts->values[0].get()) : nullptr;
    if (!list) {
      diags.error(pts->range, "points must be a list of coordinates: [(0, 0), (1, 0), ...]");
      continue;
    }
    for (auto &pe : list->elems) {
      auto *t = dynCast<TupleExpr>(pe.get());
      if (!t) {
        diags.error(pe->range, "a point is a tuple of coordinates, e.g. (0.5, 1)");
        continue;
      }
      int n = int(t->elems.size());
      if (firstDim == 0)
        firstDim = n;
      if ((dim && n != dim) || n != firstDim || n < 2 || n > 3) {
        diags.error(pe->range, "a point has " + std::to_string(dim ? dim : firstDim) +
                                   " coordinates here, not " + std::to_string(n));
        continue;
      }
      std::vector<double> xs;
      for (auto &c : t->elems)
        if (auto v = evalNumber(*c, "a point coordinate"))
          xs.push_back(*v);
      part.points.push_back(xs);
    }
    int np = int(part.points.size());
    auto pointIndex = [&](const Expr &e, const std::string &what) -> std::optional<int> {
      auto v = evalInt(e, what);
      if (!v)
        return std::nullopt;
      if (*v < 0 || *v >= np) {
        diags.error(e.range, "point index " + std::to_string(*v) + " is out of range; part " +
                                 q(part.name) + " has points 0.." + std::to_string(np - 1));
        return std::nullopt;
      }
      return int(*v);
    };
    if (const Setting *sp = pd->body.find("springs")) {
      auto *sl = sp->values.size() == 1 ? dynCast<ListExpr>(sp->values[0].get()) : nullptr;
      if (!sl)
        diags.error(sp->range, "springs must be a list of point index pairs: [(0, 1), (1, 2)]");
      else
        for (auto &se : sl->elems) {
          auto *t = dynCast<TupleExpr>(se.get());
          if (!t || t->elems.size() != 2) {
            diags.error(se->range, "a spring is a pair of point indices, e.g. (0, 1)");
            continue;
          }
          auto a = pointIndex(*t->elems[0], "a spring endpoint");
          auto b = pointIndex(*t->elems[1], "a spring endpoint");
          if (!a || !b)
            continue;
          if (*a == *b) {
            diags.error(se->range, "a spring joins two different points");
            continue;
          }
          for (auto &[x, y] : part.springs)
            if ((x == *a && y == *b) || (x == *b && y == *a))
              diags.warning(se->range, "spring (" + std::to_string(*a) + ", " + std::to_string(*b) +
                                           ") is listed twice");
          part.springs.push_back({*a, *b});
        }
    }
    if (const Setting *po = pd->body.find("ports")) {
      std::map<std::string, SourceRange> seen;
      for (auto &v : po->values) {
        auto *call = dynCast<CallExpr>(v.get());
        if (!call || call->args.empty() || !call->namedArgs.empty()) {
          diags.error(v->range, "a port is a name and its points, e.g. left(2, 0)");
          continue;
        }
        call->ref = CallRef::Setting;
        auto [it, fresh] = seen.emplace(call->callee.name, call->callee.range);
        if (!fresh) {
          diags.error(call->callee.range, "port " + q(call->callee.name) + " is declared twice")
              .note(it->second, "the first one is here");
          continue;
        }
        Port port;
        port.name = call->callee.name;
        for (auto &a : call->args)
          if (auto i = pointIndex(*a, "a port point"))
            port.points.push_back(*i);
        part.ports.push_back(port);
      }
    }
    out.parts.push_back(std::move(part));
  }
}

void Checker::checkGrammars() {
  for (auto *g : grammars) {
    int errorsBefore = diags.errorCount();
    BodyGrammar bg;
    bg.name = g->name.name;
    checkKnownKeys(g->body, "grammar", {"start"});
    std::map<std::string, const Production *> rules;
    for (auto &p : g->productions) {
      auto [it, fresh] = rules.emplace(p.lhs.name, &p);
      if (!fresh)
        diags
            .error(p.lhs.range, "symbol " + q(p.lhs.name) +
                                    " has two productions; join them "
                                    "with '|'")
            .note(it->second->lhs.range, "the first one is here");
    }
    const Setting *st = g->body.find("start");
    if (!st) {
      diags.error(g->name.range, "grammar " + q(bg.name) + " needs 'start = SYMBOL;'");
    } else if (Expr *e = single(*st, "start")) {
      if (auto n = evalName(*e, "start")) {
        if (!rules.count(*n)) {
          std::vector<std::string> c;
          for (auto &[k, v] : rules)
            c.push_back(k);
          undefined(e->range, "symbol", *n, c);
        }
        bg.start = *n;
      }
    }
    for (auto &p : g->productions) {
      GrammarRule rule;
      rule.symbol = p.lhs.name;
      for (auto &alt : p.alternatives) {
        GrammarAlternative ga;
        ga.part = alt.part.name;
        const Part *part = nullptr;
        for (auto &pp : out.parts)
          if (pp.name == alt.part.name)
            part = &pp;
        if (!part) {
          std::vector<std::string> c;
          for (auto &pp : out.parts)
            c.push_back(pp.name);
          undefined(alt.part.range, "part", alt.part.name, c);
          continue;
        }
        std::set<std::string> bound;
        for (auto &pb : alt.ports) {
          bool isPort = false;
          std::vector<std::string> ports;
          for (auto &po : part->ports) {
            ports.push_back(po.name);
            isPort = isPort || po.name == pb.port.name;
          }
          if (!isPort) {
            std::string c = closest(pb.port.name, ports);
            diags.error(pb.port.range, "part " + q(part->name) + " has no port " + q(pb.port.name) +
                                           (c.empty() ? "" : "; did you mean '" + c + "'?"));
            continue;
          }
          if (!bound.insert(pb.port.name).second) {
            diags.error(pb.port.range, "port " + q(pb.port.name) + " is bound twice");
            continue;
          }
          if (pb.symbol.name != "_" && !rules.count(pb.symbol.name)) {
            std::vector<std::string> c;
            for (auto &[k, v] : rules)
              c.push_back(k);
            undefined(pb.symbol.range, "symbol", pb.symbol.name, c);
            continue;
          }
          ga.ports.push_back({pb.port.name, pb.symbol.name == "_" ? "" : pb.symbol.name});
        }
        if (alt.weight) {
          if (auto w = evalNumber(*alt.weight, "weight")) {
            if (*w <= 0)
              diags.error(alt.weight->range, "a production weight must be positive");
            else
              ga.weight = *w;
          }
        }
        rule.alternatives.push_back(std::move(ga));
      }
      bg.rules.push_back(std::move(rule));
    }
    // A derivation must be able to finish: find the symbols that can.
    std::set<std::string> finite;
    for (bool changed = true; changed;) {
      changed = false;
      for (auto &r : bg.rules) {
        if (finite.count(r.symbol))
          continue;
        for (auto &a : r.alternatives) {
          bool ok = true;
          for (auto &[port, sym] : a.ports)
            ok = ok && (sym.empty() || finite.count(sym));
          if (ok) {
            finite.insert(r.symbol);
            changed = true;
            break;
          }
        }
      }
    }
    for (auto &p : g->productions)
      if (!finite.count(p.lhs.name) && diags.errorCount() == errorsBefore)
        diags.error(p.lhs.range, "symbol " + q(p.lhs.name) +
                                     " never finishes expanding: every "
                                     "alternative needs another expansion; add one with empty "
                                     "ports");
    out.grammars.push_back(std::move(bg));
  }
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
              body.repair.push_back(*n);
          }
        }
      }
      if (!bd->body.find("cell"))
        diags.error(bd->name.range, "a lattice body needs 'cell = PART;'");
      if (!bd->body.find("rows") || !bd->body.find("cols"))
        diags.error(bd->name.range, "a lattice body needs 'rows' and 'cols'");
    } else {
      checkKnownKeys(bd->body, "body grammar", {"grammar", "max_parts", "scale"});
      for (const auto &s : bd->body.settings) {
        const std::string &k = s.key.name;
        if (k == "grammar") {
          body.grammar = partRef(s, k, true);
        } else if (k == "max_parts") {
          Expr *e = single(s, k);
          if (auto v = e ? evalInt(*e, k) : std::nullopt) {
            if (*v < 1)
              diags.error(e->range, "'max_parts' must be at least 1");
            else
              body.maxParts = *v;
          }
        } else if (k == "scale") {
          Expr *e = single(s, k);
          if (auto v = e ? evalNumber(*e, k) : std::nullopt) {
            if (*v <= 0)
              diags.error(e->range, "'scale' must be positive");
            else
              body.scale = *v;
          }
        }
      }
      if (!bd->body.find("grammar"))
        diags.error(bd->name.range, "a grammar body needs 'grammar = NAME;'");
      if (!bd->body.find("max_parts"))
        diags.error(bd->name.range, "a grammar body needs 'max_parts = N;'");
    }
    if (bd == chosen) {
      out.body = std::move(body);
      out.hasBody = true;
    }
  }
}

void Checker::checkMutations() {
  if (mutations.empty())
    return;
  const bool lattice = out.hasBody && out.body.kind == BodyKind::Lattice;
  const bool grammar = out.hasBody && out.body.kind == BodyKind::Grammar;
  std::map<std::string, SourceRange> seen;
  for (auto &r : mutations.front()->rules) {
    const std::string &op = r.op.name;
    MutationRule mr;
    mr.op = op;
    mr.target = r.target.name;
    mr.untilChanged = r.untilChanged;
    mr.rateExpr = r.rate.get();
    if (op == "flip") {
      if (r.target.name != "cell" && r.target.name != "actuator") {
        diags.error(r.target.name.empty() ? r.op.range : r.target.range,
                    "flip needs a target: 'flip cell p = ...' or 'flip actuator p = ...'");
        continue;
      }
      if (grammar)
        diags.error(r.op.range, "flip mutates lattice bodies; body " + q(out.body.name) +
                                    " is a grammar body (use add, remove, rearrange, combine)");
    } else if (op == "add" || op == "remove" || op == "rearrange" || op == "combine") {
      if (!r.target.name.empty()) {
        diags.error(r.target.range, q(op) + " takes no target: '" + op + " p = 0.3;'");
        continue;
      }
      if (lattice)
        diags.error(r.op.range, q(op) + " mutates grammar bodies; body " + q(out.body.name) +
                                    " is a lattice (use flip cell, flip actuator)");
    } else {
      std::string c = closest(op, {"flip", "add", "remove", "rearrange", "combine"});
      diags.error(r.op.range, "unknown mutation " + q(op) +
                                  (c.empty() ? "; expected flip, add, remove, rearrange or combine"
                                             : "; did you mean '" + c + "'?"));
      continue;
    }
    std::string key = op + " " + r.target.name;
    auto [it, fresh] = seen.emplace(key, r.range);
    if (!fresh) {
      diags
          .error(r.range,
                 "mutation '" + key.substr(0, key.find_last_not_of(' ') + 1) + "' is given twice")
          .note(it->second, "the first one is here");
      continue;
    }
    // The rate: a constant in [0, 1], or an expression over cells / edges.
    std::map<std::string, double> vars = {{"cells", 1}, {"edges", 1}};
    std::function<bool(const Expr &)> usesVars = [&](const Expr &e) {
      if (auto *n = dynCast<NameExpr>(&e))
        return n->name == "cells" || n->name == "edges";
      if (auto *u = dynCast<UnaryExpr>(&e))
        return usesVars(*u->operand);
      if (auto *b = dynCast<BinaryExpr>(&e))
        return usesVars(*b->lhs) || usesVars(*b->rhs);
      return false;
    };
    mr.constant = !usesVars(*r.rate);
    auto v = evalNumber(*r.rate, "p", &vars);
    if (!v)
      continue;
    r.rate->type = Type::scalar();
    if (mr.constant) {
      if (*v < 0 || *v > 1) {
        diags.error(r.rate->range,
                    "mutation rate " + r.rateName.name + " = " + fmtNum(*v) + " is outside [0, 1]");
        continue;
      }
      mr.rate = *v;
    } else if (*v < 0) {
      diags.error(r.rate->range, "mutation rate is negative");
      continue;
    }
    out.mutations.push_back(std::move(mr));
  }
}

void Checker::checkBodyFields() {
  const PhysicsDecl *ph = out.world.physics;
  if (!ph || !out.hasBody)
    return;
  // The runtime builds robots as points and springs (SCIENCE.md) and fills
  // these fields from them; anything else it cannot provide.
  const SetDecl *point = ph->findSet("point");
  const FieldDecl *x = point ? point->findField("x") : nullptr;
  std::string vec = "vec" + std::to_string(out.world.dim);
  if (!x || x->kind != FieldKind::State || x->type.resolved != Type::vec(out.world.dim)) {
    diags.error(point ? point->name.range : ph->name.range,
                "bodies are made of points and springs: physics " + q(ph->name.name) +
                    " needs 'set point { state x: " + vec + "; ... }' to place them");
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
      if (!known)
        diags.error(f->name.range, "a body provides only spring.rest, spring.stiffness and "
                                   "spring.actuation (scalars); it cannot fill body field " +
                                       q(set->name.name + "." + n) +
                                       " (make it a 'param' to learn it)");
    }
}

} // namespace evoc::sema
