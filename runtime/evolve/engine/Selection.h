// Survivor selection: (mu + lambda) truncation as in the paper, tournament
// selection with elitism as a second choice, and MAP-Elites (MapElites.h),
// whose population is an archive of one elite per cell of a descriptor grid.
#pragma once

#include "evolve/engine/EvoRng.h"
#include "support/Descriptors.h"

#include <cstdint>
#include <string>
#include <vector>

namespace evoc::evolve {

/// One axis of a MAP-Elites grid (docs/evolution.md, "MAP-Elites"): a
/// quantity of the body or of its training, cut into `bins` equal cells
/// over [lo, hi]; values outside go to the edge cells.
struct Descriptor {
  using Kind = DescriptorKind; ///< the one list (support/Descriptors.h)
  Kind kind = Kind::Actuators;
  std::string term; ///< the loss term's name, for Term
  double lo = 0, hi = 1;
  int bins = 10;
};

/// The `select` setting of a .evo file.
struct SelectionSpec {
  enum class Kind {
    Truncation, ///< the best `count` of parents + offspring (mu + lambda)
    Tournament, ///< elites, then winners of size-k tournaments without replacement
    MapElites,  ///< one elite per descriptor cell; parents drawn uniformly from it
    Random,     ///< survivors drawn uniformly from parents + offspring: no fitness used
  };
  Kind kind = Kind::Truncation;
  int tournamentSize = 2; ///< k, for Tournament
  int elites = 1;         ///< kept unconditionally, for Tournament
  /// The grid's axes, for MapElites (one or two).
  std::vector<Descriptor> descriptors;
  /// QD-score = sum over the elites of max(0, fitness - qdOffset), for MapElites.
  double qdOffset = 0;
};

/// A valid candidate for survival.
struct Scored {
  uint64_t id = 0;
  double fitness = 0;
};

/// True when a ranks before b: higher fitness, ties broken by the lower
/// (older) design id, so selection never depends on pool order.
inline bool ranksBefore(const Scored &a, const Scored &b) {
  if (a.fitness != b.fitness)
    return a.fitness > b.fitness;
  return a.id < b.id;
}

/// Picks min(count, pool.size()) survivors; returns indices into `pool`,
/// ordered by rank. Truncation draws no random numbers; Random draws the
/// survivors uniformly without replacement (a partial Fisher-Yates shuffle of
/// the pool in rank order, so the result does not depend on pool order).
std::vector<size_t> selectSurvivors(const std::vector<Scored> &pool, size_t count,
                                    const SelectionSpec &spec, EvoRng &rng);

/// The name of a selection as the run files spell it.
const char *selectionName(const SelectionSpec &spec);

} // namespace evoc::evolve
