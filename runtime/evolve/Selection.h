// Survivor selection: (mu + lambda) truncation as in the paper, and
// tournament selection with elitism as a second choice.
#pragma once

#include "evolve/EvoRng.h"

#include <cstdint>
#include <vector>

namespace evoc::evolve {

/// The `select` setting of a .evo file.
struct SelectionSpec {
  enum class Kind {
    Truncation, ///< the best `count` of parents + offspring (mu + lambda)
    Tournament, ///< elites, then winners of size-k tournaments without replacement
  };
  Kind kind = Kind::Truncation;
  int tournamentSize = 2; ///< k, for Tournament
  int elites = 1;         ///< kept unconditionally, for Tournament
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
/// ordered by rank. Truncation draws no random numbers.
std::vector<size_t> selectSurvivors(const std::vector<Scored> &pool, size_t count,
                                    const SelectionSpec &spec, EvoRng &rng);

/// The name of a selection as the run files spell it.
const char *selectionName(const SelectionSpec &spec);

} // namespace evoc::evolve
