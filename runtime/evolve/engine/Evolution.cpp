// The generation loop: breed, evaluate, select (Engine.h), and the run files
// the Recorder writes after each generation, state.json last as the commit
// point.
#include "evolve/engine/Evolution.h"

#include "evolve/engine/Engine.h"
#include "evolve/engine/MapElites.h"
#include "evolve/record/Progress.h"
#include "evolve/record/Recorder.h"

#include "support/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <set>

namespace evoc::evolve {

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

void noteResume(Progress &progress, const RunOptions &options, const EvolutionConfig &config,
                const engine::State &s) {
  if (!options.resume)
    return;
  if (s.generation + 1 >= config.generations)
    progress.note(fmt::format("'{}' has already completed generations 0 to {}; to go on, "
                              "ask for more generations",
                              options.dir.string(), s.generation));
  else if (s.generation < 0)
    progress.note(fmt::format("resuming '{}': no generation had completed; starting from "
                              "generation 0",
                              options.dir.string()));
  else
    progress.note(
        fmt::format("resuming '{}' after generation {}", options.dir.string(), s.generation));
}

// A rate expression that is not a probability is clamped (GrammarVary.cpp);
// say so once per operator and run, on stderr (the log records it in every
// generation: "rates_clamped").
void warnClampedRates(Progress &progress, const engine::BreedStats &breed,
                      std::set<std::string> &warned) {
  for (const auto &[op, value] : breed.clampedRates)
    if (warned.insert(op).second)
      progress.note(fmt::format(
          "warning: the mutation rate of '{}' came to {:.4g} for a parent; a rate is a "
          "probability, so it was clamped to {} (each generation's log line records such "
          "rates under \"rates_clamped\"; docs/grammars.md, \"Mutation rates\")",
          op, value, value > 1 ? "1" : "0"));
}

} // namespace

json configFingerprint(const EvolutionConfig &c) {
  json invalid = json::array();
  for (const auto &r : c.fitness.invalid)
    invalid.push_back({{"kind", invalidRuleName(r.kind)}, {"threshold", r.threshold}});
  json j = {{"population", c.population},
            {"seed", c.seed},
            {"body", c.body ? c.body->fingerprint() : json()},
            {"max_duplicate_retries", c.maxDuplicateRetries},
            {"fitness", {{"kind", fitnessName(c.fitness.kind)}, {"invalid", invalid}}},
            {"selection",
             {{"kind", selectionName(c.selection)},
              {"tournament_size", c.selection.tournamentSize},
              {"elites", c.selection.elites}}}};
  // Only when on, so that the state.json of a run without inheritance reads
  // as before; either way a resume cannot switch it.
  if (c.inheritWeights)
    j["inherit"] = "weights";
  // Likewise lambda only when it is not one child per parent, so that the
  // state.json of a run with the default reads as before.
  if (offspringCount(c) != c.population)
    j["offspring"] = offspringCount(c);
  // The grid only for MAP-Elites, so that other runs' state.json reads as before.
  if (c.selection.kind == SelectionSpec::Kind::MapElites) {
    json axes = json::array();
    for (const Descriptor &d : c.selection.descriptors)
      axes.push_back(
          {{"descriptor", descriptorName(d)}, {"lo", d.lo}, {"hi", d.hi}, {"bins", d.bins}});
    j["selection"]["descriptors"] = axes;
    j["selection"]["qd_offset"] = c.selection.qdOffset;
  }
  if (!c.experiment.is_null())
    j["experiment"] = c.experiment;
  return j;
}

RunSummary runEvolution(const EvolutionConfig &config, const EvaluateFn &evaluate,
                        const RunOptions &options) {
  const auto start = Clock::now();
  if (config.population < 1)
    throw Error(fmt::format("evolve.population must be at least 1; got {}", config.population));
  if (config.offspring < 0)
    throw Error(fmt::format("evolve.offspring must be at least 1 (0: one per parent); got {}",
                            config.offspring));
  if (!evaluate)
    throw Error("the evolution engine needs an evaluate function");
  if (!config.body)
    throw Error("the evolution engine needs a body model (EvolutionConfig::body)");
  if (config.selection.kind == SelectionSpec::Kind::MapElites) {
    const auto &axes = config.selection.descriptors;
    if (axes.empty() || axes.size() > kMaxDescriptors)
      throw Error(fmt::format("map_elites needs one or two descriptors; got {}", axes.size()));
    for (const Descriptor &d : axes)
      if (d.bins < 1 || !(d.lo < d.hi))
        throw Error(fmt::format("map_elites: the descriptor {} needs bins >= 1 and lo < hi",
                                descriptorName(d)));
    if (cellCount(axes) > kMaxCells)
      throw Error(
          fmt::format("map_elites: {} cells is above the limit of {}", cellCount(axes), kMaxCells));
  }

  engine::Recorder recorder(config, options);
  engine::State s;
  s.rng = EvoRng(config.seed);
  recorder.load(s);

  Progress progress(options.progress, options.forceTty);
  noteResume(progress, options, config, s);
  double genSecondsSum = 0;
  int gensThisRun = 0;
  std::set<std::string> warned; // operators whose clamped rate was reported
  for (int g = s.generation + 1; g < config.generations; ++g) {
    const auto t0 = Clock::now();
    std::vector<engine::Child> children;
    engine::GenerationRecord rec;
    rec.generation = g;
    int valid = 0;
    for (int attempt = 0; valid == 0; ++attempt) {
      if (g == 0 && attempt >= std::max(1, config.maxInitialAttempts)) {
        std::string last = "none";
        for (const auto &c : children)
          if (!c.valid)
            last = c.reason;
        throw Error(fmt::format("every robot of {} random initial populations was invalid "
                                "(last reason: {}); check the loss, the learning settings "
                                "and the invalid rules",
                                attempt, last));
      }
      rec.breed = {}; // a re-drawn generation 0 counts its last draw only
      children = engine::breed(config, s, g, rec.breed);
      warnClampedRates(progress, rec.breed, warned);
      valid = engine::evaluate(config, evaluate, s, g, children, rec.eval);
      if (g > 0)
        break; // a generation with no valid offspring keeps its parents
    }
    engine::select(config, s, children);

    rec.offspring = children.size();
    rec.offspringValid = size_t(valid);
    rec.seconds = seconds(t0, Clock::now());
    s.elapsed += rec.seconds;
    s.generation = g;
    recorder.writeGeneration(s, children, rec, options.gait);
    if (options.afterGeneration)
      options.afterGeneration();

    genSecondsSum += seconds(t0, Clock::now());
    ++gensThisRun;
    ProgressInfo info;
    info.generation = g;
    info.generations = config.generations;
    info.bestFitness = s.best.fitness;
    info.designsPerSecond = double(rec.eval.trained) / std::max(1e-9, rec.seconds);
    info.secondsLeft = genSecondsSum / gensThisRun * (config.generations - 1 - g);
    info.notTrained = int(rec.eval.notTrained);
    progress.update(info);
  }
  progress.finish();

  RunSummary out;
  out.lastGeneration = s.generation;
  out.bestId = s.best.id;
  out.bestFitness = s.best.fitness;
  out.designsEvaluated = s.designs;
  out.seconds = seconds(start, Clock::now());
  return out;
}

} // namespace evoc::evolve
