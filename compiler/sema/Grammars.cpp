// Checks of body-part grammars (parts, attach ports, bindings, tied pairs,
// limits, finishing, smallest derivations) and their evaluation into
// sema::BodyGrammar and body::GrammarSpec.
#include "sema/Checker.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace evoc::sema {

using namespace ast;

namespace {

std::string q(const std::string &s) { return "'" + s + "'"; }

double dist(const std::vector<double> &a, const std::vector<double> &b) {
  double s = 0;
  for (size_t k = 0; k < a.size() && k < b.size(); ++k)
    s += (a[k] - b[k]) * (a[k] - b[k]);
  return std::sqrt(s);
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

/// The AST behind one alternative and its bindings (BindingSpec order).
struct AltAst {
  const Alternative *alt = nullptr;
  std::vector<const PortBinding *> bindings;
};

/// Whether every symbol can finish expanding (following required bindings).
bool checkFinishes(Checker &c, const Checker::GrammarInfo &gi) {
  const auto &syms = gi.spec.symbols;
  std::vector<bool> finite(syms.size(), false);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t s = 0; s < syms.size(); ++s) {
      if (finite[s])
        continue;
      for (const auto &a : syms[s].alternatives) {
        bool ok = true;
        for (const auto &b : a.bindings)
          ok = ok && (b.optional || finite[size_t(b.symbol)]);
        if (ok) {
          finite[s] = changed = true;
          break;
        }
      }
    }
  }
  bool all = true;
  for (size_t s = 0; s < syms.size(); ++s) {
    if (finite[s])
      continue;
    all = false;
    for (const auto &p : gi.decl->productions)
      if (p.lhs.name == syms[s].name) {
        c.diags.error(p.lhs.range, "symbol " + q(p.lhs.name) +
                                       " never finishes expanding: every alternative needs "
                                       "another expansion; add one with empty or optional ports");
        break;
      }
  }
  return all;
}

/// The first param of `part` that changes the shape of `port` (a pairwise
/// distance of its points) between its low and high end, others at their
/// defaults; -1 when the port keeps its shape. Two nodes' params are
/// independent genes, so such a port would mate with its partner only at
/// the default: every other value makes the body invalid.
int paramBendingPort(const body::PartSpec &part, const body::PortSpec &port) {
  // The port's pairwise distances with the params at `vals`.
  auto shape = [&](const std::vector<double> &vals) {
    std::vector<std::vector<double>> at;
    for (int pt : port.points) {
      at.emplace_back();
      for (const auto &c : part.points[size_t(pt)])
        at.back().push_back(body::evalScalar(c, vals.data()));
    }
    std::vector<double> d;
    for (size_t i = 0; i < at.size(); ++i)
      for (size_t j = i + 1; j < at.size(); ++j)
        d.push_back(dist(at[i], at[j]));
    return d;
  };
  std::vector<double> defaults;
  for (const auto &pp : part.params)
    defaults.push_back(pp.init);
  const std::vector<double> ref = shape(defaults);
  for (size_t p = 0; p < part.params.size(); ++p)
    for (double v : {part.params[p].lo, part.params[p].hi}) {
      std::vector<double> vals = defaults;
      vals[p] = v;
      std::vector<double> d = shape(vals);
      for (size_t k = 0; k < d.size(); ++k)
        if (std::fabs(d[k] - ref[k]) > 1e-9 * std::max(1.0, ref[k]))
          return int(p);
    }
  return -1;
}

/// Each binding's port and every attach port of the bound symbol's
/// alternatives: as many points, congruent at the params' defaults (the
/// child's points in reversed order meet the parent's), and of a shape no
/// param changes.
void checkAttachPorts(Checker &c, const Checker::GrammarInfo &gi,
                      const std::vector<std::vector<AltAst>> &altAst) {
  const auto &syms = gi.spec.symbols;
  for (size_t s = 0; s < syms.size(); ++s)
    for (size_t a = 0; a < syms[s].alternatives.size(); ++a) {
      const auto &alt = syms[s].alternatives[a];
      int pp = gi.usedParts[size_t(alt.part)];
      const auto &parent = c.out.partSpecs[size_t(pp)];
      const auto &pdef = c.partExtras[size_t(pp)].defaults;
      // A port of `parent` that a param bends cannot mate (paramBendingPort).
      auto refuseBent = [&](SourceRange at, int port, bool attach) {
        int bend = paramBendingPort(parent, parent.ports[size_t(port)]);
        if (bend < 0)
          return;
        const auto &par = parent.params[size_t(bend)];
        c.diags.error(at, std::string(attach ? "attach port " : "port ") +
                              q(parent.ports[size_t(port)].name) + " of part " + q(parent.name) +
                              " changes shape with param " + q(par.name) + " (between " +
                              fmt(par.lo) + " and " + fmt(par.hi) + "): " +
                              (attach ? "it would fit its parent's port only at the default; "
                                        "attach at a port whose points keep their distances"
                                      : "a child would fit it only at the default; attach "
                                        "children at ports whose points keep their distances"));
      };
      if (alt.attach >= 0)
        refuseBent(altAst[s][a].alt->range, alt.attach, true);
      for (size_t b = 0; b < alt.bindings.size(); ++b) {
        const auto &bind = alt.bindings[b];
        const PortBinding *pb = altAst[s][a].bindings[b];
        const auto &port = parent.ports[size_t(bind.ports[0])];
        const auto &child = syms[size_t(bind.symbol)];
        for (int pi : bind.ports)
          refuseBent(pb->port.range, pi, false);
        for (size_t ca = 0; ca < child.alternatives.size(); ++ca) {
          const auto &calt = child.alternatives[ca];
          if (calt.attach < 0)
            continue;
          int cp = gi.usedParts[size_t(calt.part)];
          const auto &cpart = c.out.partSpecs[size_t(cp)];
          const auto &cdef = c.partExtras[size_t(cp)].defaults;
          const auto &att = cpart.ports[size_t(calt.attach)];
          const Alternative *castAst = altAst[size_t(bind.symbol)][ca].alt;
          std::string childName = q(cpart.name + "<" + att.name + ">") + " of " + q(child.name);
          if (port.levers.size() != att.levers.size()) {
            auto levers = [](size_t n) {
              return n == 0 ? std::string("no lever")
                            : std::to_string(n) + (n == 1 ? " lever" : " levers");
            };
            c.diags
                .error(pb->port.range,
                       "a hinge's motor joins a lever on each side (a ball joint's two motors, "
                       "two): port " +
                           q(port.name) + " of part " + q(parent.name) + " has " +
                           levers(port.levers.size()) + ", but alternative " + childName +
                           " attaches by a port with " + levers(att.levers.size()))
                .note(castAst->range, "that alternative is here");
          }
          if (att.points.size() != port.points.size()) {
            c.diags
                .error(pb->port.range, "port " + q(port.name) + " of part " + q(parent.name) +
                                           " has " + std::to_string(port.points.size()) +
                                           " points, but alternative " + childName +
                                           " attaches with " + std::to_string(att.points.size()))
                .note(castAst->range, "that alternative is here");
            continue;
          }
          size_t n = port.points.size();
          double size = 0;
          for (size_t i = 0; i < n; ++i)
            for (size_t j = 0; j < n; ++j)
              size =
                  std::max(size, dist(pdef[size_t(port.points[i])], pdef[size_t(port.points[j])]));
          for (size_t i = 0; i < n; ++i)
            for (size_t j = i + 1; j < n; ++j) {
              double dp = dist(pdef[size_t(port.points[i])], pdef[size_t(port.points[j])]);
              double dc =
                  dist(cdef[size_t(att.points[n - 1 - i])], cdef[size_t(att.points[n - 1 - j])]);
              if (std::fabs(dp - dc) > 1e-9 * std::max(size, dc)) {
                c.diags
                    .error(pb->port.range, "port " + q(port.name) + " of part " + q(parent.name) +
                                               " and the attach port of alternative " + childName +
                                               " are not congruent: points " + std::to_string(i) +
                                               " and " + std::to_string(j) + " of the port are " +
                                               fmt(dp) + " apart, their partners " + fmt(dc) +
                                               " (at the params' defaults)")
                    .note(castAst->range, "that alternative is here");
                i = j = n;
              }
            }
        }
      }
    }
}

/// The smallest derivation of every symbol (fewest parts, then points,
/// following required bindings only), and the start symbol's totals; the
/// fewest nodes of each limited symbol any alternative needs.
void analyse(Checker &c, Checker::GrammarInfo &gi, const std::vector<std::vector<AltAst>> &altAst,
             const std::vector<const SymbolLimit *> &limitAst) {
  if (!checkFinishes(c, gi))
    return;
  checkAttachPorts(c, gi, altAst);
  const auto &syms = gi.spec.symbols;
  const size_t ns = syms.size();
  struct Cost {
    int parts = 0, points = 0, springs = 0, depth = 0;
    bool set = false;
  };
  std::vector<Cost> cost(ns);
  std::vector<int> best(ns, -1);
  auto altCost = [&](const body::AlternativeSpec &a, Cost &r) {
    const auto &part = c.out.partSpecs[size_t(gi.usedParts[size_t(a.part)])];
    r.parts = 1;
    r.points = int(part.points.size()) -
               (a.attach >= 0 ? int(part.ports[size_t(a.attach)].points.size()) : 0);
    r.springs = int(part.springs.size());
    r.depth = 0;
    for (const auto &b : a.bindings) {
      if (b.optional)
        continue;
      const Cost &cb = cost[size_t(b.symbol)];
      if (!cb.set)
        return false;
      int m = int(b.ports.size());
      r.parts += m * cb.parts;
      r.points += m * cb.points;
      r.springs += m * cb.springs;
      r.depth = std::max(r.depth, cb.depth + 1);
    }
    r.set = true;
    return true;
  };
  for (int round = 0, changed = 1; changed && round < 10000; ++round) {
    changed = 0;
    for (size_t s = 0; s < ns; ++s)
      for (size_t a = 0; a < syms[s].alternatives.size(); ++a) {
        Cost r;
        if (!altCost(syms[s].alternatives[a], r))
          continue;
        Cost &cs = cost[s];
        if (!cs.set || r.parts < cs.parts || (r.parts == cs.parts && r.points < cs.points)) {
          cs = r;
          best[s] = int(a);
          changed = 1;
        }
      }
  }
  const Cost &root = cost[size_t(gi.spec.start)];
  gi.minParts = root.parts;
  gi.minPoints = root.points;
  gi.minSprings = root.springs;
  gi.minDepth = root.depth;
  // Limits: per limited symbol T, the fewest T nodes each symbol's subtree needs.
  gi.minCount.assign(ns, 0);
  for (size_t t = 0; t < ns; ++t) {
    if (syms[t].limit < 0)
      continue;
    std::vector<long> need(ns, -1);
    auto altNeed = [&](size_t s, const body::AlternativeSpec &a) -> long {
      long n = s == t ? 1 : 0;
      for (const auto &b : a.bindings) {
        if (b.optional)
          continue;
        if (need[size_t(b.symbol)] < 0)
          return -1;
        n += long(b.ports.size()) * need[size_t(b.symbol)];
      }
      return n;
    };
    for (int round = 0, changed = 1; changed && round < 10000; ++round) {
      changed = 0;
      for (size_t s = 0; s < ns; ++s)
        for (const auto &a : syms[s].alternatives) {
          long n = altNeed(s, a);
          if (n >= 0 && (need[s] < 0 || n < need[s]))
            need[s] = std::min(n, 1L << 40), changed = 1;
        }
    }
    gi.minCount[t] = int(std::min(need[size_t(gi.spec.start)], long(1) << 30));
    const int lim = syms[t].limit;
    for (size_t s = 0; s < ns; ++s)
      for (size_t a = 0; a < syms[s].alternatives.size(); ++a) {
        long n = altNeed(s, syms[s].alternatives[a]);
        if (n <= lim)
          continue;
        const AltAst &aa = altAst[s][a];
        // Point at the binding that brings the excess, else the alternative.
        SourceRange at = aa.alt->range;
        const auto &bs = syms[s].alternatives[a].bindings;
        for (size_t b = 0; b < bs.size(); ++b)
          if (!bs[b].optional && need[size_t(bs[b].symbol)] > 0) {
            at = aa.bindings[b]->range;
            break;
          }
        c.diags
            .error(at, "this alternative of " + q(syms[s].name) + " can never be used: it needs " +
                           std::to_string(n) + " nodes of " + q(syms[t].name) +
                           ", more than its limit " + std::to_string(lim) +
                           " (make the binding optional or raise the limit)")
            .note(limitAst[t]->range, "the limit is here");
      }
  }
}

/// One grammar being checked: its symbols and limits, and what the steps
/// have gathered so far.
struct GrammarDraft {
  Checker &C;
  const GrammarDecl &g;
  Checker::GrammarInfo gi;
  BodyGrammar bg;
  std::map<std::string, int> symIdx;     ///< symbol -> index in gi.spec.symbols
  std::vector<const Production *> prods; ///< parallel to gi.spec.symbols
  std::vector<std::string> symNames;
  std::vector<const SymbolLimit *> limitAst;
  std::vector<const SymbolLimit *> scaleAst; ///< each `scale Sym = F;`
  std::vector<std::vector<AltAst>> altAst;
  /// An alternative uses a part with an error (reported at the part).
  bool usesFailedPart = false;

  /// The index of a symbol used by name; reports an undefined one (-1).
  int symbolRef(const Ident &id) {
    auto it = symIdx.find(id.name);
    if (it == symIdx.end()) {
      C.undefined(id.range, "symbol", id.name, symNames);
      return -1;
    }
    return it->second;
  }
};

/// One alternative being checked: its part and what it binds.
struct AltDraft {
  const Alternative &alt;
  const body::PartSpec &ps;
  body::AlternativeSpec as;
  AltAst aa;
  GrammarAlternative ga;
  std::map<int, SourceRange> bound; ///< port index -> where it is bound

  /// The index of a port of the part; reports an unknown one (-1).
  int portRef(Checker &C, const Ident &id) const {
    for (size_t k = 0; k < ps.ports.size(); ++k)
      if (ps.ports[k].name == id.name)
        return int(k);
    std::vector<std::string> portNames;
    for (auto &po : ps.ports)
      portNames.push_back(po.name);
    std::string c = closest(id.name, portNames);
    C.diags.error(id.range, "part " + q(ps.name) + " has no port " + q(id.name) +
                                (c.empty() ? "" : "; did you mean '" + c + "'?"));
    return -1;
  }
};

/// The productions: one symbol each (a second production of one is reported).
void collectGrammarSymbols(GrammarDraft &d) {
  for (auto &p : d.g.productions) {
    auto [it, fresh] = d.symIdx.emplace(p.lhs.name, int(d.prods.size()));
    if (!fresh) {
      d.C.diags
          .error(p.lhs.range, "symbol " + q(p.lhs.name) +
                                  " has two productions; join them "
                                  "with '|'")
          .note(d.prods[size_t(it->second)]->lhs.range, "the first one is here");
      continue;
    }
    d.prods.push_back(&p);
    d.symNames.push_back(p.lhs.name);
    d.gi.spec.symbols.push_back({p.lhs.name, {}, -1, -1, 1});
  }
}

/// `start = SYMBOL;`
void checkGrammarStart(GrammarDraft &d) {
  const Setting *st = d.g.body.find("start");
  if (!st) {
    d.C.diags.error(d.g.name.range, "grammar " + q(d.bg.name) + " needs 'start = SYMBOL;'");
  } else if (Expr *e = d.C.single(*st, "start")) {
    if (auto n = d.C.evalName(*e, "start")) {
      d.bg.start = *n;
      if (!d.symIdx.count(*n))
        d.C.undefined(e->range, "symbol", *n, d.symNames);
      else
        d.gi.spec.start = d.symIdx[*n];
    }
  }
}

/// `limit Sym = N;` (not negative), `depth Sym = N;` (at least 1) and
/// `scale Sym = F;` (positive): at most one of each per symbol.
void checkGrammarLimits(GrammarDraft &d) {
  auto &symbols = d.gi.spec.symbols;
  d.limitAst.assign(symbols.size(), nullptr);
  std::map<std::pair<std::string, int>, const SymbolLimit *> seen;
  for (const auto &l : d.g.limits) {
    const std::string &kind = l.kind.name;
    int s = d.symbolRef(l.symbol);
    auto v = kind == "scale" ? d.C.evalNumber(*l.value, "scale " + l.symbol.name)
                             : d.C.evalNumber(*l.value, kind + " " + l.symbol.name);
    if (s < 0 || !v)
      continue;
    auto [it, fresh] = seen.emplace(std::pair{kind, s}, &l);
    if (!fresh) {
      d.C.diags.error(l.symbol.range, "symbol " + q(l.symbol.name) + " has two '" + kind + "'s")
          .note(it->second->range, "the first one is here");
      continue;
    }
    if (kind == "scale") {
      if (!(*v > 0) || !std::isfinite(*v)) {
        d.C.diags.error(l.value->range, "a scale is a positive factor (e.g. 0.7: each level 70% "
                                        "of its parent's size)");
        continue;
      }
      d.scaleAst.push_back(&l);
      symbols[size_t(s)].levelScale = *v;
      continue;
    }
    if (std::floor(*v) != *v || std::abs(*v) > double(1 << 30)) {
      d.C.diags.error(l.value->range, "a " + kind + " counts nodes: a whole number");
      continue;
    }
    if (kind == "depth") {
      if (*v < 1) {
        d.C.diags.error(l.value->range, "a depth counts the nodes of " + q(l.symbol.name) +
                                            " on a path from the root: at least 1");
        continue;
      }
      symbols[size_t(s)].depthLimit = int(*v);
      continue;
    }
    if (*v < 0) {
      d.C.diags.error(l.value->range, "a limit counts nodes: it must not be negative");
      continue;
    }
    d.limitAst[size_t(s)] = &l;
    symbols[size_t(s)].limit = int(*v);
  }
}

/// `scale Sym = F;` sizes each node of Sym relative to its parent, so its
/// alternatives attach by one point: a port of several points no longer
/// fits a parent port of the parent's size.
void checkScaledAttach(GrammarDraft &d) {
  for (const SymbolLimit *l : d.scaleAst) {
    auto it = d.symIdx.find(l->symbol.name);
    if (it == d.symIdx.end())
      continue;
    const auto &sym = d.gi.spec.symbols[size_t(it->second)];
    if (sym.levelScale == 1)
      continue;
    for (size_t ai = 0; ai < sym.alternatives.size(); ++ai) {
      const auto &a = sym.alternatives[ai];
      if (a.attach < 0 || a.part < 0)
        continue;
      const auto &part = d.C.out.partSpecs[size_t(d.gi.usedParts[size_t(a.part)])];
      const auto &port = part.ports[size_t(a.attach)];
      if (port.points.size() != 1)
        d.C.diags.error(l->range, "'scale " + l->symbol.name +
                                      "' sizes its nodes relative to their parents, so they must "
                                      "attach by one point; but " +
                                      q(part.name + "<" + port.name + ">") + " attaches by " +
                                      std::to_string(port.points.size()) + " points");
    }
  }
}

/// Whether the part's mirror maps the tied pair's first port onto its second.
bool mirrorTies(const body::PartSpec &ps, const std::vector<int> &ports) {
  const auto &pa = ps.ports[size_t(ports[0])].points;
  const auto &pbp = ps.ports[size_t(ports[1])].points;
  bool ok = !ps.mirror.empty() && pa.size() == pbp.size() && ports[0] != ports[1];
  if (ok) {
    std::vector<int> img;
    for (int i : pa)
      img.push_back(ps.mirror[size_t(i)]);
    std::vector<int> rev(img.rbegin(), img.rend());
    ok = img == pbp || rev == pbp;
  }
  return ok;
}

/// One port binding `port: Sym` (or a tied pair `[p, q]: Sym`) of an alternative.
void checkBinding(GrammarDraft &d, AltDraft &a, const PortBinding &pb) {
  std::vector<int> ps2 = {a.portRef(d.C, pb.port)};
  if (pb.tied)
    ps2.push_back(a.portRef(d.C, pb.port2));
  if (std::count(ps2.begin(), ps2.end(), -1))
    return;
  bool twice = false;
  for (size_t k = 0; k < ps2.size(); ++k) {
    const Ident &id = k ? pb.port2 : pb.port;
    auto [it, fresh] = a.bound.emplace(ps2[k], id.range);
    if (!fresh) {
      d.C.diags.error(id.range, "port " + q(id.name) + " is bound twice")
          .note(it->second, "it is first bound here");
      twice = true;
    }
  }
  if (twice)
    return;
  if (pb.symbol.name == "_") {
    if (pb.optional)
      d.C.diags.error(pb.symbol.range, "'_' leaves a port empty; '_?' means nothing more");
    for (size_t k = 0; k < ps2.size(); ++k)
      a.ga.ports.push_back({k ? pb.port2.name : pb.port.name, ""});
    return;
  }
  int sym = d.symbolRef(pb.symbol);
  if (sym < 0)
    return;
  if (sym == d.gi.spec.start) {
    d.C.diags.error(pb.symbol.range,
                    "the start symbol " + q(pb.symbol.name) +
                        " is the root and has no attach port, so it cannot be bound at a "
                        "port; give the root a symbol of its own");
    return;
  }
  if (pb.tied && !mirrorTies(a.ps, ps2)) {
    d.C.diags.error(pb.range, "the tied pair [" + pb.port.name + ", " + pb.port2.name +
                                  "] needs a mirror of part " + q(a.ps.name) + " that maps port " +
                                  q(pb.port.name) + " onto port " + q(pb.port2.name) +
                                  (a.ps.mirror.empty() ? "; the part declares no 'mirror'" : ""));
    return;
  }
  a.as.bindings.push_back({ps2, sym, pb.optional});
  a.aa.bindings.push_back(&pb);
  for (size_t k = 0; k < ps2.size(); ++k)
    a.ga.ports.push_back({k ? pb.port2.name : pb.port.name, pb.symbol.name});
}

/// The attach port: written, or implied by the one port left unbound (the
/// start symbol's alternatives have none).
void checkAttachPort(Checker &C, AltDraft &a, bool isStart) {
  const Alternative &alt = a.alt;
  const body::PartSpec &ps = a.ps;
  if (isStart) {
    if (!alt.attach.name.empty())
      C.diags.error(alt.attach.range, "the start symbol's alternatives have no attach port: "
                                      "the root is not attached to anything");
    if (alt.hasAngle)
      C.diags.error(alt.angleRange, "the root has no attach port, so no angle");
    if (alt.hasTurn)
      C.diags.error(alt.turnRange, "the root has no attach port, so no turn");
  } else if (!alt.attach.name.empty()) {
    a.as.attach = a.portRef(C, alt.attach);
    if (a.as.attach >= 0 && a.bound.count(a.as.attach))
      C.diags
          .error(alt.attach.range,
                 "port " + q(alt.attach.name) + " is both the attach port and bound")
          .note(a.bound[a.as.attach], "it is bound here");
  } else {
    std::vector<int> free;
    for (int k = 0; k < int(ps.ports.size()); ++k)
      if (!a.bound.count(k))
        free.push_back(k);
    if (free.size() == 1) {
      a.as.attach = free[0];
    } else {
      std::string list;
      for (int k : free)
        list += std::string(list.empty() ? "" : ", ") + ps.ports[size_t(k)].name;
      C.diags.error(alt.part.range,
                    "which port of part " + q(ps.name) + " attaches to the parent? write " +
                        q(ps.name + "<PORT>") +
                        (free.empty() ? "; every port is bound" : " with one of " + list));
    }
  }
}

/// The port the part attaches by (null for the root, which attaches by none).
const body::PortSpec *attachPort(const AltDraft &a) {
  return a.as.attach < 0 ? nullptr : &a.ps.ports[size_t(a.as.attach)];
}

/// `angle = LO .. HI` at the attach port: only where the port leaves the
/// placement free.
void checkAttachAngle(Checker &C, AltDraft &a) {
  const Alternative &alt = a.alt;
  const body::PortSpec *port = attachPort(a);
  if (!alt.hasAngle || !port)
    return;
  size_t n = port->points.size();
  bool free = a.ps.dim == 2 ? n == 1 : n <= 2;
  // lo == hi fixes the angle (the lattice grammar's 180-degree turn).
  if (!(alt.angleLo <= alt.angleHi))
    C.diags.error(alt.angleRange, "the angle range " + fmt(alt.angleLo) + " .. " +
                                      fmt(alt.angleHi) + " is empty; the low end comes first");
  else if (!free)
    C.diags.error(alt.angleRange, "port " + q(port->name) + " has " + std::to_string(n) +
                                      " points, which fix the placement; an angle " +
                                      "applies only to a port of one point" +
                                      (a.ps.dim == 3 ? " or two" : ""));
  else {
    a.as.hasAngle = true;
    a.as.angleLo = alt.angleLo;
    a.as.angleHi = alt.angleHi;
  }
}

/// `turn = K` at the attach port: a fixed turn, the orientation a port of
/// n >= 3 points leaves to a gene (which of its points the child's first
/// attach point meets).
void checkAttachTurn(Checker &C, AltDraft &a) {
  const Alternative &alt = a.alt;
  const body::PortSpec *port = attachPort(a);
  if (!alt.hasTurn || !port)
    return;
  size_t n = port->points.size();
  if (n < 3)
    C.diags.error(alt.turnRange, "port " + q(port->name) + " has " + std::to_string(n) + " point" +
                                     (n == 1 ? "" : "s") +
                                     ", so it has no turns; a turn applies to a port of three or "
                                     "more points");
  else if (!(alt.turn >= 0 && alt.turn < double(n) && alt.turn == std::floor(alt.turn)))
    C.diags.error(alt.turnRange, "port " + q(port->name) + " has " + std::to_string(n) +
                                     " points, so a turn is 0 .. " + std::to_string(n - 1) +
                                     ", not " + fmt(alt.turn));
  else
    a.as.fixedTurn = int(alt.turn);
}

/// One alternative of symbol `si`: its part, bindings, attach port, angle,
/// turn and weight, into the spec, altAst and `rule`.
void checkAlternative(GrammarDraft &d, size_t si, const Alternative &alt, GrammarRule &rule) {
  Checker &C = d.C;
  if (C.failedParts.count(alt.part.name)) {
    d.usesFailedPart = true;
    return;
  }
  int pi = C.partIndex(alt.part.name);
  if (pi < 0) {
    std::vector<std::string> c;
    for (auto *pd : C.parts)
      c.push_back(pd->name.name);
    C.undefined(alt.part.range, "part", alt.part.name, c);
    return;
  }
  AltDraft a{alt, C.out.partSpecs[size_t(pi)], {}, {}, {}, {}};
  a.ga.part = alt.part.name;
  auto &usedParts = d.gi.usedParts;
  auto used = std::find(usedParts.begin(), usedParts.end(), pi);
  a.as.part = int(used - usedParts.begin());
  if (used == usedParts.end())
    usedParts.push_back(pi);
  a.aa.alt = &alt;
  for (auto &pb : alt.ports)
    checkBinding(d, a, pb);
  checkAttachPort(C, a, int(si) == d.gi.spec.start);
  checkAttachAngle(C, a);
  checkAttachTurn(C, a);
  if (alt.weight) {
    if (auto w = C.evalNumber(*alt.weight, "weight")) {
      if (*w <= 0)
        C.diags.error(alt.weight->range, "a production weight must be positive");
      else
        a.as.weight = a.ga.weight = *w;
    }
  }
  d.gi.spec.symbols[si].alternatives.push_back(std::move(a.as));
  d.altAst[si].push_back(std::move(a.aa));
  rule.alternatives.push_back(std::move(a.ga));
}

} // namespace

void Checker::checkGrammars() {
  for (auto *g : grammars) {
    const int errorsBefore = diags.errorCount();
    GrammarDraft d{*this, *g, {}, {}, {}, {}, {}, {}, {}, {}, false};
    d.gi.decl = g;
    d.gi.spec.name = g->name.name;
    d.bg.name = g->name.name;
    checkKnownKeys(g->body, "grammar", {"start"});
    collectGrammarSymbols(d);
    checkGrammarStart(d);
    checkGrammarLimits(d);
    d.altAst.resize(d.gi.spec.symbols.size());
    for (size_t si = 0; si < d.prods.size(); ++si) {
      GrammarRule rule;
      rule.symbol = d.prods[si]->lhs.name;
      for (auto &alt : d.prods[si]->alternatives)
        checkAlternative(d, si, alt, rule);
      d.bg.rules.push_back(std::move(rule));
    }
    checkScaledAttach(d);
    if (diags.errorCount() == errorsBefore && d.gi.spec.start >= 0 && !d.usesFailedPart)
      analyse(*this, d.gi, d.altAst, d.limitAst);
    d.gi.ok = diags.errorCount() == errorsBefore && !d.usesFailedPart;
    out.grammars.push_back(std::move(d.bg));
    grammarInfos.push_back(std::move(d.gi));
  }
}

} // namespace evoc::sema
