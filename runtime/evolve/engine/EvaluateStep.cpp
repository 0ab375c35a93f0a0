// The evaluate step: one trainer batch of the new, expressible robots; the
// verdicts; the archive that lets duplicates reuse an evaluation.
#include "evolve/engine/Engine.h"

#include "evolve/engine/Fitness.h"

#include "support/Error.h"

#include <fmt/format.h>

#include <chrono>
#include <map>

namespace evoc::evolve::engine {

namespace {

// What child `c` may inherit: its parent's weights and both sets of keys.
// The parent's keys come from expressing its genome again (deterministic,
// so they are the keys of the robot its weights were trained on).
Inheritance inheritance(const EvolutionConfig &config, const State &s, const Child &c,
                        std::map<uint64_t, Phenotype> &parents) {
  Inheritance in;
  in.pointKeys = c.pheno.pointKeys;
  in.springKeys = c.pheno.springKeys;
  // A body model that gives no keys (or not one per element) shares nothing.
  if (c.ind.parent < 0 || int64_t(in.pointKeys.size()) != c.pheno.robot.numPoints() ||
      int64_t(in.springKeys.size()) != c.pheno.robot.numSprings())
    return in;
  for (const Individual &p : s.population) {
    if (p.id != uint64_t(c.ind.parent))
      continue;
    if (p.params.is_null())
      return in; // a reused member was never trained: nothing to inherit
    auto it = parents.find(p.id);
    if (it == parents.end())
      it = parents.emplace(p.id, config.body->express(*p.genome)).first;
    in.parentParams = p.params;
    if (int64_t(it->second.pointKeys.size()) != it->second.robot.numPoints() ||
        int64_t(it->second.springKeys.size()) != it->second.robot.numSprings())
      return in;
    in.parentPointKeys = it->second.pointKeys;
    in.parentSpringKeys = it->second.springKeys;
    break;
  }
  return in;
}

} // namespace

int evaluate(const EvolutionConfig &config, const EvaluateFn &fn, State &s, int generation,
             std::vector<Child> &children, EvalStats &stats) {
  EvalBatch batch;
  batch.generation = generation;
  std::vector<size_t> sent;
  std::map<uint64_t, Phenotype> parents; // expressed once per parent
  for (size_t i = 0; i < children.size(); ++i) {
    Child &c = children[i];
    if (c.reused)
      continue;
    if (!c.pheno.valid) { // never trained: the body model rejects it itself
      c.valid = false;
      c.reason = c.pheno.reason.empty() ? "the body is not valid" : c.pheno.reason;
      continue;
    }
    c.trained = true;
    sent.push_back(i);
    batch.ids.push_back(c.ind.id);
    batch.seeds.push_back(designSeed(config.seed, c.ind.id));
    batch.robots.push_back(c.pheno.robot);
    if (config.inheritWeights)
      batch.inherit.push_back(inheritance(config, s, c, parents));
  }
  if (!batch.robots.empty()) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<Evaluation> evals = fn(batch);
    stats.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (evals.size() != sent.size())
      throw Error(fmt::format("the evaluate function returned {} results for {} robots",
                              evals.size(), sent.size()));
    stats.trained += sent.size();
    s.designs += sent.size();
    for (size_t k = 0; k < sent.size(); ++k) {
      Child &c = children[sent[k]];
      c.eval = std::move(evals[k]);
      c.inherited = c.eval.inherited;
      Verdict v = judge(c.eval.losses, config.fitness);
      if (!c.eval.valid) {
        v.valid = false;
        v.reason = c.eval.reason.empty() ? "rejected by the trainer" : c.eval.reason;
      }
      c.valid = v.valid;
      c.reason = v.reason;
      c.ind.fitness = v.fitness;
      c.ind.losses = c.eval.losses;
      c.ind.gradNorms = c.eval.gradNorms;
      c.ind.terms = c.eval.terms;
      c.notTrained = c.eval.notTrained;
      stats.notTrained += !c.notTrained.empty();
      stats.robotSteps +=
          c.eval.robotSteps > 0 ? double(c.eval.robotSteps) : config.robotStepsPerDesign;
    }
  }
  // New robots join the archive (invalid bodies too: a copy is as invalid).
  for (Child &c : children) {
    if (c.reused)
      continue;
    ArchiveEntry e;
    e.id = c.ind.id;
    e.valid = c.valid;
    if (c.valid) {
      e.fitness = c.ind.fitness;
      e.losses = c.ind.losses;
    } else {
      e.reason = c.reason;
    }
    s.archive.emplace(c.key.hex(), std::move(e));
  }
  int valid = 0;
  for (Child &c : children) {
    if (c.reused) { // the archive now holds it (an earlier run's, or a sibling's)
      const ArchiveEntry &e = s.archive.at(c.key.hex());
      c.valid = e.valid;
      c.reason = e.valid ? "" : e.reason;
      c.ind.fitness = e.fitness;
      c.ind.losses = e.losses;
    }
    valid += c.valid;
  }
  return valid;
}

} // namespace evoc::evolve::engine
