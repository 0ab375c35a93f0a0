// The breed step: random bodies or varied parents, with duplicates of
// archived (or sibling) robots re-varied a few times (docs/evolution.md,
// "Never the same robot twice").
#include "evolve/engine/Engine.h"

#include <cmath>
#include <limits>
#include <set>

namespace evoc::evolve::engine {

namespace {

// A fresh genotype: a random body, or a variation of parent `pi` with the
// other population members as crossover donors.
Variation makeGenome(const EvolutionConfig &config, State &s, int generation, size_t pi) {
  const BodyModel &model = *config.body;
  if (generation == 0) {
    Variation v;
    v.genome = model.sample(s.rng);
    v.ops = {"sample"};
    return v;
  }
  std::vector<const Genome *> donors;
  donors.reserve(s.population.size());
  for (size_t k = 0; k < s.population.size(); ++k)
    if (k != pi)
      donors.push_back(s.population[k].genome.get());
  return model.vary(*s.population[pi].genome, donors, s.rng);
}

// How far a rate lies outside [0, 1] (not finite: furthest).
double outside(double rate) {
  if (!std::isfinite(rate))
    return std::numeric_limits<double>::infinity();
  return rate > 1 ? rate - 1 : rate < 0 ? -rate : 0;
}

} // namespace

std::vector<Child> breed(const EvolutionConfig &config, State &s, int generation,
                         BreedStats &stats) {
  const BodyModel &model = *config.body;
  std::vector<Child> children(size_t(generation == 0 ? config.population : offspringCount(config)));
  std::set<std::string> siblings; // keys of this generation's earlier children
  for (size_t i = 0; i < children.size(); ++i) {
    Child &c = children[i];
    c.ind.id = s.nextId++;
    c.ind.born = generation;
    // Parents take turns in rank order; MAP-Elites draws them uniformly
    // from the archive (one draw per child, before its variations).
    size_t pi = 0;
    if (generation > 0) {
      pi = config.selection.kind == SelectionSpec::Kind::MapElites
               ? size_t(s.rng.below(s.population.size()))
               : i % s.population.size();
      c.ind.parent = int64_t(s.population[pi].id);
    }
    bool wasDuplicate = false;
    for (int attempt = 0;; ++attempt) {
      c.variation = makeGenome(config, s, generation, pi);
      c.pheno = model.express(*c.variation.genome);
      c.key = canonicalKey(c.pheno.robot);
      const std::string hex = c.key.hex();
      bool duplicate = s.archive.count(hex) || siblings.count(hex);
      if (!duplicate) {
        stats.duplicatesAvoided += wasDuplicate;
        break;
      }
      wasDuplicate = true;
      if (attempt >= config.maxDuplicateRetries) {
        c.reused = true;
        ++stats.duplicatesReused;
        break;
      }
    }
    c.ind.genome = c.variation.genome;
    siblings.insert(c.key.hex());
    for (const auto &op : c.variation.ops)
      ++stats.ops[op];
    if (c.variation.fallback)
      ++stats.fallbacks[c.variation.fallbackOp.empty() ? "unknown" : c.variation.fallbackOp];
    for (const auto &[op, value] : c.variation.clampedRates) {
      auto [at, fresh] = stats.clampedRates.emplace(op, value);
      if (!fresh && outside(value) > outside(at->second))
        at->second = value;
    }
  }
  return children;
}

} // namespace evoc::evolve::engine
