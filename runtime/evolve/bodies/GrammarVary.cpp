// Typed variation of grammar genomes: add, remove, swap, rearrange, combine
// (structural, once each per child with their probability), perturb and
// flip (per gene); every child re-checked and re-expressed, retried under
// `until changed`, and a copy of the parent (a logged fallback) if all fail.
#include "evolve/bodies/GrammarInternal.h"
#include "evolve/engine/CanonicalHash.h"

#include <algorithm>
#include <functional>
#include <map>

namespace evoc::evolve {

using namespace grammar;

/// The operators, with access to the model's cheapest completions.
struct GrammarOps {
  const GrammarBody &m;
  const body::GrammarBodySpec &s;
  EvoRng &rng;

  /// A child slot: the parent node, the binding index and the child's depth.
  struct Slot {
    GrammarNode *parent;
    int binding;
    int depth;
  };

  const body::BindingSpec &bindingOf(const Slot &sl) const {
    return altOf(s, *sl.parent).bindings[sl.binding];
  }
  int depthLimit() const { return s.maxDepth > 0 ? s.maxDepth : kUnlimited; }

  void slots(GrammarNode &n, int depth, std::vector<Slot> &out) {
    for (size_t b = 0; b < n.children.size(); ++b) {
      out.push_back({&n, int(b), depth + 1});
      if (n.children[b])
        slots(*n.children[b], depth + 1, out);
    }
  }
  void nodes(GrammarNode &n, std::vector<GrammarNode *> &out) {
    out.push_back(&n);
    for (auto &c : n.children)
      if (c)
        nodes(*c, out);
  }
  static bool contains(const GrammarNode &root, const GrammarNode *x) {
    if (&root == x)
      return true;
    for (const auto &c : root.children)
      if (c && contains(*c, x))
        return true;
    return false;
  }
  static void renumber(GrammarNode &n, uint64_t &next) {
    n.id = next++;
    for (auto &c : n.children)
      if (c)
        renumber(*c, next);
  }
  template <class T> T &pick(std::vector<T> &v) { return v[rng.below(v.size())]; }

  /// The budget a new subtree in `sl` may spend (one copy of a tied pair).
  GrammarCost slotBudget(GrammarGenome &g, const Slot &sl) {
    GrammarCost used = m.cost(g);
    if (auto &c = sl.parent->children[sl.binding])
      addCost(used, subtreeCost(s, *c), -int(bindingOf(sl).ports.size()));
    return divided(m.remaining(used), int(bindingOf(sl).ports.size()));
  }
  bool canFill(GrammarGenome &g, const Slot &sl) {
    int sym = bindingOf(sl).symbol;
    return depthLimit() - sl.depth >= m.minHeight_[sym] && fits(m.minCost_[sym], slotBudget(g, sl));
  }

  bool add(GrammarGenome &g) {
    std::vector<Slot> all, ok;
    slots(g.root, 0, all);
    for (const auto &sl : all)
      if (bindingOf(sl).optional && !sl.parent->children[sl.binding] && canFill(g, sl))
        ok.push_back(sl);
    if (ok.empty())
      return false;
    Slot sl = pick(ok);
    GrammarCost budget = slotBudget(g, sl);
    sl.parent->children[sl.binding] = std::make_unique<GrammarNode>(
        m.sampleSubtree(bindingOf(sl).symbol, budget, depthLimit() - sl.depth, g, rng, false));
    return true;
  }

  bool remove(GrammarGenome &g) {
    std::vector<Slot> all, ok;
    slots(g.root, 0, all);
    for (const auto &sl : all)
      if (bindingOf(sl).optional && sl.parent->children[sl.binding])
        ok.push_back(sl);
    if (ok.empty())
      return false;
    Slot sl = pick(ok);
    sl.parent->children[sl.binding].reset();
    return true;
  }

  bool swap(GrammarGenome &g) {
    std::vector<GrammarNode *> all, ok;
    nodes(g.root, all);
    for (auto *n : all)
      if (s.grammar.symbols[n->symbol].alternatives.size() >= 2)
        ok.push_back(n);
    if (ok.empty())
      return false;
    GrammarNode *n = pick(ok);
    const auto &sym = s.grammar.symbols[n->symbol];
    int alt = int(rng.below(sym.alternatives.size() - 1));
    if (alt >= n->alt)
      ++alt;
    const auto &oa = altOf(s, *n);
    const auto &op = s.grammar.parts[oa.part];
    const auto &na = sym.alternatives[alt];
    const auto &np = s.grammar.parts[na.part];
    GrammarNode nn;
    nn.id = g.nextId++; // a different part: its elements are new (provenance)
    nn.symbol = n->symbol;
    nn.alt = alt;
    for (const auto &p : np.params) {
      double v = p.lo + (p.hi - p.lo) * rng.uniform();
      for (size_t i = 0; i < op.params.size(); ++i)
        if (op.params[i].name == p.name && n->params[i] >= p.lo && n->params[i] <= p.hi)
          v = n->params[i];
      nn.params.push_back(v);
    }
    if (na.part == oa.part)
      nn.genes = n->genes;
    else
      for (size_t i = 0; i < np.genes.size(); ++i)
        nn.genes.push_back(rng.bernoulli(s.actuatorP));
    int turns = numTurns(s, na);
    nn.turn = n->turn < turns ? n->turn : int(rng.below(turns));
    if (na.hasAngle)
      nn.angle = n->angle >= na.angleLo && n->angle <= na.angleHi && oa.hasAngle
                     ? n->angle
                     : na.angleLo + (na.angleHi - na.angleLo) * rng.uniform();
    // Children whose ports (by name, same symbol and arity) still exist stay.
    auto portNames = [](const body::PartSpec &p, const body::BindingSpec &b) {
      std::vector<std::string> v;
      for (int x : b.ports)
        v.push_back(p.ports[x].name);
      return v;
    };
    nn.children.resize(na.bindings.size());
    for (size_t b = 0; b < na.bindings.size(); ++b)
      for (size_t ob = 0; ob < oa.bindings.size(); ++ob)
        if (n->children[ob] && oa.bindings[ob].symbol == na.bindings[b].symbol &&
            portNames(op, oa.bindings[ob]) == portNames(np, na.bindings[b]))
          nn.children[b] = std::move(n->children[ob]);
    *n = std::move(nn);
    // New required slots are sampled within what is left.
    int depth = 0;
    std::vector<Slot> slotList;
    slots(g.root, 0, slotList);
    for (const auto &sl : slotList)
      if (sl.parent == n)
        depth = sl.depth - 1;
    for (size_t b = 0; b < na.bindings.size(); ++b)
      if (!na.bindings[b].optional && !n->children[b]) {
        Slot sl{n, int(b), depth + 1};
        n->children[b] = std::make_unique<GrammarNode>(m.sampleSubtree(
            na.bindings[b].symbol, slotBudget(g, sl), depthLimit() - sl.depth, g, rng, false));
      }
    return true;
  }

  bool rearrange(GrammarGenome &g) {
    std::vector<Slot> all, filled;
    slots(g.root, 0, all);
    for (const auto &sl : all)
      if (sl.parent->children[sl.binding])
        filled.push_back(sl);
    if (filled.empty())
      return false;
    Slot a = pick(filled);
    const GrammarNode *sub = a.parent->children[a.binding].get();
    int sym = bindingOf(a).symbol;
    std::vector<Slot> targets;
    for (const auto &sl : all) {
      if (bindingOf(sl).symbol != sym || (sl.parent == a.parent && sl.binding == a.binding))
        continue;
      if (contains(*sub, sl.parent))
        continue; // inside the moved subtree
      const GrammarNode *other = sl.parent->children[sl.binding].get();
      if (other ? contains(*other, a.parent) : !bindingOf(a).optional)
        continue; // not disjoint, or the source cannot become empty
      targets.push_back(sl);
    }
    if (targets.empty())
      return false;
    Slot b = pick(targets);
    std::swap(a.parent->children[a.binding], b.parent->children[b.binding]);
    return true;
  }

  bool combine(GrammarGenome &g, const std::vector<const GrammarGenome *> &donors) {
    if (donors.empty())
      return false;
    const GrammarGenome *d = donors[rng.below(donors.size())];
    std::vector<Slot> all;
    slots(g.root, 0, all);
    if (all.empty())
      return false;
    Slot sl = pick(all);
    int sym = bindingOf(sl).symbol;
    std::vector<GrammarNode *> dn, ok;
    nodes(const_cast<GrammarNode &>(d->root), dn);
    for (auto *n : dn)
      if (n->symbol == sym)
        ok.push_back(n);
    if (ok.empty())
      return false;
    auto graft = std::make_unique<GrammarNode>(*pick(ok));
    renumber(*graft, g.nextId);
    sl.parent->children[sl.binding] = std::move(graft);
    return true;
  }

  /// Perturbs each continuous gene with probability p; true if any moved.
  bool perturb(GrammarNode &n, double p) {
    bool any = false;
    const auto &a = altOf(s, n);
    const auto &part = s.grammar.parts[a.part];
    for (size_t i = 0; i < part.params.size(); ++i)
      if (part.params[i].hi > part.params[i].lo && rng.bernoulli(p)) {
        double lo = part.params[i].lo, hi = part.params[i].hi;
        n.params[i] = reflectInto(n.params[i] + 0.1 * (hi - lo) * rng.normal(), lo, hi);
        any = true;
      }
    if (a.hasAngle && a.angleHi > a.angleLo && rng.bernoulli(p)) {
      n.angle =
          reflectInto(n.angle + 0.1 * (a.angleHi - a.angleLo) * rng.normal(), a.angleLo, a.angleHi);
      any = true;
    }
    for (auto &c : n.children)
      if (c)
        any |= perturb(*c, p);
    return any;
  }

  bool flip(GrammarNode &n, double p) {
    bool any = false;
    for (auto &b : n.genes)
      if (rng.bernoulli(p))
        b ^= 1, any = true;
    for (auto &c : n.children)
      if (c)
        any |= flip(*c, p);
    return any;
  }
};

Variation GrammarBody::vary(const Genome &parentG, const std::vector<const Genome *> &donorsG,
                            EvoRng &rng) const {
  const auto &parent = dynamic_cast<const GrammarGenome &>(parentG);
  // Donors are population members: genomes this model made or fromJson
  // validated (and every child is checked below), so they are not
  // re-checked here, once per child for the whole population.
  std::vector<const GrammarGenome *> donors;
  for (const auto *d : donorsG)
    if (const auto *gd = dynamic_cast<const GrammarGenome *>(d))
      donors.push_back(gd);
  Phenotype pph = expressExact(parent);
  // `until changed` compares canonical forms (coordinates to 1e-7 x scale):
  // the parent's once, each child's as it comes.
  const double quantum = 1e-7 * spec_.scale;
  const std::string parentForm =
      mutation_.untilChanged && pph.valid ? canonicalKey(pph.robot, quantum).bytes : "";
  int genes = 0, on = 0;
  countGenes(parent.root, genes, on);
  double vars[3] = {double(cost(parent).parts), double(pph.robot.numSprings()), double(genes)};
  // A rate is a probability: clamped to [0, 1], and a value outside it is
  // reported (Variation::clampedRates) so that the run warns about it; the
  // growth of `until changed` (factor) is meant to reach 1 and is not.
  std::map<std::string, double> clamped;
  auto rate = [&](const char *name, const body::Scalar &sc, double factor) {
    const double raw = evalScalar(sc, vars);
    if (!(raw >= 0 && raw <= 1))
      clamped.emplace(name, raw);
    double r = raw * factor;
    return std::isfinite(r) ? std::clamp(r, 0.0, 1.0) : 0.0;
  };
  GrammarOps ops{*this, spec_, rng};
  std::string lastOp = "none";
  int attempts = std::max(1, mutation_.maxAttempts);
  double factor = 1;
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    auto child = std::make_shared<GrammarGenome>(parent);
    Variation v;
    v.attempts = attempt;
    struct Structural {
      const char *name;
      const body::Scalar &rate;
      std::function<bool()> run;
    };
    Structural structural[] = {
        {"add", mutation_.add, [&] { return ops.add(*child); }},
        {"remove", mutation_.remove, [&] { return ops.remove(*child); }},
        {"swap", mutation_.swap, [&] { return ops.swap(*child); }},
        {"rearrange", mutation_.rearrange, [&] { return ops.rearrange(*child); }},
        {"combine", mutation_.combine, [&] { return ops.combine(*child, donors); }},
    };
    for (auto &op : structural)
      if (rng.bernoulli(rate(op.name, op.rate, factor))) {
        lastOp = op.name;
        if (op.run())
          v.ops.push_back(op.name);
      }
    double pp = rate("perturb", mutation_.perturb, factor);
    if (pp > 0) {
      lastOp = "perturb";
      if (ops.perturb(child->root, pp))
        v.ops.push_back("perturb");
    }
    *child = prune(*child);
    double fp = rate("flip", mutation_.flip, factor);
    if (fp > 0) {
      lastOp = "flip";
      // A flip that leaves actuation genes but none on is redrawn.
      GrammarNode before = child->root;
      bool flipped = false;
      for (int redraw = 0; redraw < 32; ++redraw) {
        child->root = before;
        flipped = ops.flip(child->root, fp);
        int t = 0, o = 0;
        countGenes(child->root, t, o);
        if (t == 0 || o > 0)
          break;
      }
      if (flipped)
        v.ops.push_back("flip");
    }
    ensureActuated(child->root, rng);
    if (mutation_.untilChanged)
      factor = std::min(factor * 2, 1e9);
    if (!check(*child).empty())
      continue;
    Phenotype cph = expressExact(*child);
    if (!cph.valid)
      continue;
    if (mutation_.untilChanged && pph.valid && canonicalKey(cph.robot, quantum).bytes == parentForm)
      continue;
    v.genome = child;
    v.clampedRates = std::move(clamped);
    return v;
  }
  Variation v;
  v.genome = std::make_shared<GrammarGenome>(parent);
  v.attempts = attempts;
  v.fallback = true;
  v.fallbackOp = lastOp;
  v.clampedRates = std::move(clamped);
  return v;
}

} // namespace evoc::evolve
