// Budget-aware sampling of grammar genomes: alternatives that fit the
// remaining budget drawn by their weights, optional slots filled with
// probability 1/2, genes drawn uniformly; invalid samples redrawn.
#include "evolve/bodies/GrammarInternal.h"

#include <algorithm>

namespace evoc::evolve {

using namespace grammar;

namespace {

/// P(an optional slot is filled) when sampling: 1/2, so a slot's subtree is
/// as likely present as absent and the expected size of a recursive
/// optional chain stays finite (1 + 1/2 + 1/4 ...).
constexpr double kOptionalP = 0.5;

} // namespace

bool GrammarBody::atDepthLimit(const std::vector<int> &onPath, int parent, int child) const {
  const int limit = spec_.grammar.symbols[size_t(child)].depthLimit;
  return limit > 0 && onPath[size_t(child)] + (parent == child ? 1 : 0) + 1 > limit;
}

GrammarNode GrammarBody::sampleSubtree(int symbol, const GrammarCost &budget, int depthLeft,
                                       GrammarGenome &g, EvoRng &rng, bool minimal,
                                       std::vector<int> *onPath) const {
  const auto &sym = spec_.grammar.symbols[symbol];
  // The alternatives whose cheapest completion fits what is left.
  std::vector<int> ok;
  std::vector<GrammarCost> altMin(sym.alternatives.size());
  for (int ai = 0; ai < int(sym.alternatives.size()); ++ai) {
    GrammarCost c;
    int height = 0;
    altCompletion(symbol, ai, c, height); // every symbol has a completion by now
    altMin[ai] = c;
    if (fits(c, budget) && height <= depthLeft)
      ok.push_back(ai);
  }
  int alt = minAlt_[symbol];
  if (!ok.empty()) {
    if (minimal) {
      alt = ok[0];
      for (int ai : ok)
        if (std::tuple(altMin[ai].parts, altMin[ai].points) <
            std::tuple(altMin[alt].parts, altMin[alt].points))
          alt = ai;
    } else {
      double total = 0;
      for (int ai : ok)
        total += std::max(0.0, sym.alternatives[ai].weight);
      alt = ok.back();
      if (total > 0) {
        double r = rng.uniform() * total;
        for (int ai : ok) {
          r -= std::max(0.0, sym.alternatives[ai].weight);
          if (r < 0) {
            alt = ai;
            break;
          }
        }
      } else {
        alt = ok[rng.below(ok.size())];
      }
    }
  }
  const auto &a = sym.alternatives[alt];
  const auto &part = spec_.grammar.parts[a.part];
  GrammarNode n;
  n.id = g.nextId++;
  n.symbol = symbol;
  n.alt = alt;
  for (const auto &p : part.params)
    n.params.push_back(minimal ? p.init : p.lo + (p.hi - p.lo) * rng.uniform());
  for (size_t i = 0; i < part.genes.size(); ++i)
    n.genes.push_back(minimal ? 1 : rng.bernoulli(spec_.actuatorP));
  int turns = numTurns(spec_, a);
  n.turn = minimal || turns == 1 ? 0 : int(rng.below(turns));
  if (a.hasAngle)
    n.angle = minimal ? std::clamp(0.0, a.angleLo, a.angleHi)
                      : a.angleLo + (a.angleHi - a.angleLo) * rng.uniform();
  n.children.resize(a.bindings.size());

  // What is left once this node and the cheapest completion of every
  // required slot are reserved; each slot then spends from it in turn.
  GrammarCost left = budget;
  addCost(left, ownCost(spec_, n), -1);
  for (const auto &b : a.bindings)
    if (!b.optional)
      addCost(left, minCost_[b.symbol], -int(b.ports.size()));
  for (size_t bi = 0; bi < a.bindings.size(); ++bi) {
    const auto &b = a.bindings[bi];
    int mult = int(b.ports.size());
    if (!b.optional) {
      addCost(left, minCost_[b.symbol], mult);
    } else if (minimal || depthLeft < 1 + minHeight_[b.symbol] ||
               !fits(divided(minCost_[b.symbol], 1), divided(left, mult)) ||
               (onPath && atDepthLimit(*onPath, symbol, b.symbol)) || !rng.bernoulli(kOptionalP)) {
      continue;
    }
    if (onPath)
      ++(*onPath)[size_t(symbol)];
    auto child = std::make_unique<GrammarNode>(
        sampleSubtree(b.symbol, divided(left, mult), depthLeft - 1, g, rng, minimal, onPath));
    if (onPath)
      --(*onPath)[size_t(symbol)];
    addCost(left, subtreeCost(spec_, *child), -mult);
    n.children[bi] = std::move(child);
  }
  return n;
}

GrammarGenome GrammarBody::sampleGenome(EvoRng &rng) const {
  int depth = spec_.maxDepth > 0 ? spec_.maxDepth : kUnlimited;
  // Bounded redraws: a sample can still be invalid (overlap under reject, a
  // required part that overlaps, a residual); then the minimal completion.
  for (int attempt = 0; attempt <= 20; ++attempt) {
    bool minimal = attempt == 20;
    GrammarGenome g;
    std::vector<int> onPath(spec_.grammar.symbols.size(), 0);
    g.root = sampleSubtree(spec_.grammar.start, remaining(GrammarCost{}), depth, g, rng, minimal,
                           &onPath);
    g = prune(g);
    ensureActuated(g.root, rng);
    if (minimal || (check(g).empty() && expressExact(g).valid))
      return g;
  }
  return {}; // unreachable: the last attempt returns
}

GenomePtr GrammarBody::sample(EvoRng &rng) const {
  return std::make_shared<GrammarGenome>(sampleGenome(rng));
}

} // namespace evoc::evolve
