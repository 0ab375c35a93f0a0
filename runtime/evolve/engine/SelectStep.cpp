// The select step: (mu + lambda) survivors of parents plus valid children
// (or, with MAP-Elites, the archive after the children tried their cells),
// and the best design so far with its trained parameters.
#include "evolve/engine/Engine.h"

#include "evolve/engine/MapElites.h"

namespace evoc::evolve::engine {

namespace {

// MAP-Elites: the members keep their cells; each new, valid child is
// described and tries its cell (a reused child's original already did).
std::vector<size_t> mapElitesSurvivors(const SelectionSpec &spec, std::vector<Individual> &pool,
                                       const std::vector<int> &childOf,
                                       std::vector<Child> &children,
                                       const std::vector<Scored> &scored) {
  std::vector<int64_t> cells(pool.size(), -1);
  for (size_t i = 0; i < pool.size(); ++i) {
    if (childOf[i] >= 0) {
      Child &c = children[size_t(childOf[i])];
      if (c.reused)
        continue;
      const Described x{&c.pheno.robot, &c.ind.losses, &c.ind.gradNorms, &c.ind.terms};
      for (const Descriptor &d : spec.descriptors)
        c.ind.descriptors.push_back(descriptorValue(d, x));
      pool[i].descriptors = c.ind.descriptors;
    }
    cells[i] = cellIndex(spec.descriptors, pool[i].descriptors);
  }
  return eliteSurvivors(scored, cells);
}

} // namespace

void select(const EvolutionConfig &config, State &s, std::vector<Child> &children) {
  std::vector<Individual> pool = s.population;
  std::vector<int> childOf(pool.size(), -1); // pool index -> child index
  std::vector<Scored> scored;
  for (const auto &p : pool)
    scored.push_back({p.id, p.fitness});
  int bestChild = -1;
  for (size_t i = 0; i < children.size(); ++i) {
    const Child &c = children[i];
    if (!c.valid)
      continue;
    Scored sc{c.ind.id, c.ind.fitness};
    // A reused child's original (an older id, the same fitness) already
    // competed for best, so it can never rank before it; nor has it params.
    if (!c.reused &&
        (bestChild < 0 || ranksBefore(sc, Scored{children[size_t(bestChild)].ind.id,
                                                 children[size_t(bestChild)].ind.fitness})))
      bestChild = int(i);
    scored.push_back(sc);
    pool.push_back(c.ind);
    childOf.push_back(int(i));
  }
  std::vector<size_t> keep =
      config.selection.kind == SelectionSpec::Kind::MapElites
          ? mapElitesSurvivors(config.selection, pool, childOf, children, scored)
          : selectSurvivors(scored, size_t(config.population), config.selection, s.rng);
  s.population.clear();
  for (size_t k : keep) {
    s.population.push_back(pool[k]);
    // A surviving child keeps its weights for its own children (reused ones
    // were not trained: theirs stay null).
    const Child *c = childOf[k] >= 0 ? &children[size_t(childOf[k])] : nullptr;
    if (config.inheritWeights && c && c->trained) {
      const Evaluation &e = c->eval;
      s.population.back().params = !e.params.is_null() ? e.params
                                   : e.paramsFn        ? e.paramsFn()
                                                       : nlohmann::json();
    }
  }
  if (bestChild >= 0) {
    Child &c = children[size_t(bestChild)];
    if (!s.haveBest || ranksBefore({c.ind.id, c.ind.fitness}, {s.best.id, s.best.fitness})) {
      const Evaluation &e = c.eval;
      s.best = c.ind;
      s.best.params = nullptr; // kept once, as bestParams
      s.haveBest = true;
      s.bestParams = !e.params.is_null() ? e.params : e.paramsFn ? e.paramsFn() : nlohmann::json();
    }
  }
  for (Child &c : children) // trained weights are not needed past this point
    c.eval = Evaluation{};
}

} // namespace evoc::evolve::engine
