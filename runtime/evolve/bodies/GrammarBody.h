// Grammar bodies (docs/grammars.md, "From genome to robot"): a derivation
// tree of body parts as the genome, its expression to a mass-spring robot
// (placement, merge, overlap, lift), budget-aware sampling and typed
// variation operators.
#pragma once

#include "evolve/bodies/BodyModel.h"

#include "support/BodySpec.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace evoc::evolve {

/// One node of a derivation tree: a symbol expanded by one of its
/// alternatives, with that part's genes and one child slot per binding.
struct GrammarNode {
  uint64_t id = 0;            ///< unique within the genome (provenance keys)
  int symbol = -1;            ///< index into GrammarSpec::symbols
  int alt = 0;                ///< index into the symbol's alternatives
  std::vector<double> params; ///< one per PartSpec::params, within range
  std::vector<uint8_t> genes; ///< actuation bits, one per PartSpec::genes
  int turn = 0;               ///< cyclic shift of the parent port (ports of >= 3 points)
  double angle = 0;           ///< degrees, where AlternativeSpec::hasAngle
  /// One slot per binding of the alternative; null = empty. A tied pair has
  /// one subtree (placed twice, the second time mirrored).
  std::vector<std::unique_ptr<GrammarNode>> children;

  GrammarNode() = default;
  GrammarNode(const GrammarNode &o);
  GrammarNode &operator=(const GrammarNode &o);
  GrammarNode(GrammarNode &&) = default;
  GrammarNode &operator=(GrammarNode &&) = default;
};

/// A grammar body's genotype: the derivation tree and the id counter.
struct GrammarGenome : Genome {
  GrammarNode root;
  uint64_t nextId = 1; ///< the next fresh node id (larger than every id in the tree)
};

/// Structural counts of a (sub)tree as placed, before merging: the upper
/// bounds sampling keeps within the limits (merging only lowers them).
struct GrammarCost {
  int parts = 0, points = 0, springs = 0;
  std::vector<int> perSymbol; ///< placed parts per symbol
};

/// The grammar body model (`body grammar`), behind the engine's BodyModel.
class GrammarBody : public BodyModel {
public:
  /// Throws evoc::Error if the spec cannot be used (no start symbol, a symbol
  /// that cannot finish, a minimal completion over the limits).
  GrammarBody(body::GrammarBodySpec spec, body::GrammarMutationSpec mutation);

  std::string kind() const override { return "grammar"; }
  /// express() expresses prune(g) under the Prune policy; otherwise g as it is.
  EVOC_BODY_MODEL_METHODS;
  double groundY() const override { return spec_.groundY; }

  const body::GrammarBodySpec &spec() const { return spec_; }
  const body::GrammarMutationSpec &mutation() const { return mutation_; }

  /// A random genome (sample() without the pointer).
  GrammarGenome sampleGenome(EvoRng &rng) const;
  /// The genome with every later-placed optional subtree whose part
  /// penetrates an earlier part removed (the Prune policy), repeated until
  /// no overlap is left or one cannot be pruned. Unchanged under Reject.
  GrammarGenome prune(const GrammarGenome &g) const;
  /// The phenotype of g exactly as it is (no pruning): overlap is invalid.
  Phenotype expressExact(const GrammarGenome &g) const;
  /// Empty when g is a grammatical derivation of this grammar within the
  /// structural limits (parts, depth, per-symbol); else why not.
  std::string check(const GrammarGenome &g) const;
  /// The placed-before-merge counts of g (what sampling keeps in budget).
  GrammarCost cost(const GrammarGenome &g) const;
  /// A subtree of `symbol` sampled within `budget` (remaining counts) and
  /// `depthLeft` levels below it; fresh ids from g.nextId.
  /// `onPath` (when known): the nodes of each symbol on the path above the
  /// subtree, so that an optional slot is not filled past a `depth` limit.
  GrammarNode sampleSubtree(int symbol, const GrammarCost &budget, int depthLeft, GrammarGenome &g,
                            EvoRng &rng, bool minimal, std::vector<int> *onPath = nullptr) const;
  /// Whether a child of symbol `child` under a node of `parent` (with
  /// `onPath` above that node) would pass the child's `depth` limit.
  bool atDepthLimit(const std::vector<int> &onPath, int parent, int child) const;
  /// The remaining budget: the limits minus `used` (unlimited counts huge).
  GrammarCost remaining(const GrammarCost &used) const;

private:
  friend struct GrammarOps;
  /// The cheapest completion of alternative `alt` of `symbol` (the part and
  /// every required child at its own cheapest) and the levels it needs below
  /// it; false while a required child's symbol has no known completion.
  bool altCompletion(int symbol, int alt, GrammarCost &cost, int &height) const;
  body::GrammarBodySpec spec_;
  body::GrammarMutationSpec mutation_;
  std::vector<GrammarCost> minCost_; ///< per symbol: its cheapest completion
  std::vector<int> minAlt_;          ///< per symbol: the alternative achieving it
  std::vector<int> minHeight_;       ///< per symbol: fewest levels below it to finish
};

} // namespace evoc::evolve
