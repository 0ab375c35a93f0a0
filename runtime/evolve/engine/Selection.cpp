// Truncation, tournament and random (neutral) selection with deterministic
// tie-breaking.
#include "evolve/engine/Selection.h"

#include <algorithm>
#include <numeric>

namespace evoc::evolve {

std::vector<size_t> selectSurvivors(const std::vector<Scored> &pool, size_t count,
                                    const SelectionSpec &spec, EvoRng &rng) {
  std::vector<size_t> ranked(pool.size());
  std::iota(ranked.begin(), ranked.end(), size_t(0));
  std::sort(ranked.begin(), ranked.end(),
            [&](size_t a, size_t b) { return ranksBefore(pool[a], pool[b]); });
  count = std::min(count, pool.size());
  if (spec.kind == SelectionSpec::Kind::Truncation) {
    ranked.resize(count);
    return ranked;
  }
  if (spec.kind == SelectionSpec::Kind::Random) {
    for (size_t i = 0; i < count; ++i)
      std::swap(ranked[i], ranked[i + size_t(rng.below(ranked.size() - i))]);
    ranked.resize(count);
    std::sort(ranked.begin(), ranked.end(),
              [&](size_t a, size_t b) { return ranksBefore(pool[a], pool[b]); });
    return ranked;
  }
  // Tournament: positions in `ranked` compare by rank, so a tournament's
  // winner is the smallest position drawn.
  size_t elites = std::min(count, size_t(std::max(0, spec.elites)));
  std::vector<size_t> chosen(ranked.begin(), ranked.begin() + elites);
  std::vector<size_t> rest(ranked.begin() + elites, ranked.end()); // by rank
  size_t k = size_t(std::max(1, spec.tournamentSize));
  while (chosen.size() < count) {
    size_t best = rest.size();
    for (size_t i = 0; i < std::min(k, rest.size()); ++i) {
      size_t pos = size_t(rng.below(rest.size()));
      best = std::min(best, pos);
    }
    chosen.push_back(rest[best]);
    rest.erase(rest.begin() + long(best));
  }
  std::sort(chosen.begin(), chosen.end(),
            [&](size_t a, size_t b) { return ranksBefore(pool[a], pool[b]); });
  return chosen;
}

const char *selectionName(const SelectionSpec &spec) {
  switch (spec.kind) {
  case SelectionSpec::Kind::Truncation:
    return "truncation(mu_plus_lambda)";
  case SelectionSpec::Kind::Tournament:
    return "tournament";
  case SelectionSpec::Kind::MapElites:
    return "map_elites";
  case SelectionSpec::Kind::Random:
    return "random";
  }
  return "?";
}

} // namespace evoc::evolve
