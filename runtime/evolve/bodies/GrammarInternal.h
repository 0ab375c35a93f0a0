// What the grammar body's source files share and nothing else uses: spec
// look-ups, the assembly record (placed part instances) and small draws.
#pragma once

#include "evolve/bodies/Geometry.h"
#include "evolve/bodies/GrammarBody.h"

#include <cmath>
#include <string>
#include <vector>

namespace evoc::evolve::grammar {

/// The alternative a node expands by.
inline const body::AlternativeSpec &altOf(const body::GrammarBodySpec &s, const GrammarNode &n) {
  return s.grammar.symbols[n.symbol].alternatives[n.alt];
}
/// The part a node places.
inline const body::PartSpec &partOf(const body::GrammarBodySpec &s, const GrammarNode &n) {
  return s.grammar.parts[altOf(s, n).part];
}
/// How many values the turn gene of alternative `a` takes (1: no turn gene).
inline int numTurns(const body::GrammarBodySpec &s, const body::AlternativeSpec &a) {
  if (a.attach < 0 || a.fixedTurn >= 0)
    return 1;
  int n = int(s.grammar.parts[a.part].ports[a.attach].points.size());
  return n >= 3 ? n : 1;
}
/// A large count that stands for "no limit".
constexpr int kUnlimited = 1 << 28;

/// One placed part: a node placed once (or twice, for a tied pair, each copy
/// its own instance). Its final map is w o a0, where a0 is the placement in
/// the unmirrored frame and w the product of the mirror reflections above.
struct Instance {
  const GrammarNode *node = nullptr;
  int parent = -1;       ///< instance index, -1 for the root
  int copy = 0;          ///< which mirror copy (bit per tied level), provenance
  std::vector<int> path; ///< binding indices from the root to this node
  double scale = 1;      ///< the product of the level scales on its path
  geom::Affine a0, w;
  std::vector<double> local; ///< the part's points (scaled), part coordinates
  std::vector<double> world; ///< final coordinates
  std::vector<int> gid;      ///< phenotype point of each local point
};

/// The result of placing a genome: the phenotype (already lifted) and the
/// instances in placement order; overlapLater is the first instance whose
/// cells penetrate an earlier one (-1: none).
struct Assembly {
  Phenotype ph;
  std::vector<Instance> inst;
  int overlapLater = -1, overlapEarlier = -1;
};

/// Places g (GrammarAssemble.cpp). With stopAtOverlap the placement stops at
/// the first overlap (what prune needs); the phenotype is then incomplete.
Assembly assemble(const GrammarBody &body, const GrammarGenome &g, bool stopAtOverlap);

/// The placed-before-merge cost of one node alone.
GrammarCost ownCost(const body::GrammarBodySpec &s, const GrammarNode &n);
/// Adds `b` times `mult` to `a`.
void addCost(GrammarCost &a, const GrammarCost &b, int mult);
/// True when every count of `c` is within `budget`.
bool fits(const GrammarCost &c, const GrammarCost &budget);
/// Every count of c divided by d (the budget of one copy of a tied pair).
GrammarCost divided(const GrammarCost &c, int d);
/// The placed cost of a whole subtree.
GrammarCost subtreeCost(const body::GrammarBodySpec &s, const GrammarNode &n);

/// x reflected back into [lo, hi] at its ends.
inline double reflectInto(double x, double lo, double hi) {
  double w = hi - lo;
  if (w <= 0)
    return lo;
  double y = std::fmod(x - lo, 2 * w);
  if (y < 0)
    y += 2 * w;
  if (y > w)
    y = 2 * w - y;
  return lo + y;
}
/// Evaluates the part's point coordinates at the node's parameters, times
/// the body's scale and the node's level scale (the product of `scale Sym`
/// along its path, docs/grammars.md).
std::vector<double> localPoints(const body::GrammarBodySpec &s, const GrammarNode &n,
                                double levelScale = 1);
/// Number of actuation genes in the tree, and how many are on.
void countGenes(const GrammarNode &n, int &total, int &on);
/// Switches one uniformly chosen gene on when the tree has genes but none on
/// (a body never ends up with no actuated spring: docs/grammars.md, "What
/// every variation keeps").
void ensureActuated(GrammarNode &root, EvoRng &rng);

} // namespace evoc::evolve::grammar
