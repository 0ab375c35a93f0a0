// The generation loop: offspring, evaluation, selection, and the run files
// written after each generation, with state.json last as the commit point.
#include "evolve/Evolution.h"

#include "evolve/Metrics.h"
#include "evolve/Progress.h"
#include "evolve/RunDir.h"

#include "support/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace evoc::evolve {

namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

/// A member of the population.
struct Individual {
  uint64_t id = 0;
  int64_t parent = -1; // -1: drawn at random
  int born = 0;
  LatticeGenome genome;
  double fitness = 0;
  std::vector<double> losses;
  std::vector<double> gradNorms;
};

/// Everything a resume needs; serialised to state.json.
struct State {
  int generation = -1; // last completed
  uint64_t nextId = 0;
  uint64_t designs = 0;
  double elapsed = 0;
  EvoRng rng{0};
  std::vector<Individual> population; // in rank order
  bool haveBest = false;
  Individual best;
  json bestParams;
};

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

json numberOrNull(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json individualJson(const LatticeBody &body, const Individual &ind, bool phenotype) {
  json j = {{"id", ind.id},           {"parent", ind.parent}, {"born", ind.born},
            {"fitness", ind.fitness}, {"losses", ind.losses}, {"genome", body.toJson(ind.genome)}};
  if (!ind.gradNorms.empty())
    j["grad_norms"] = ind.gradNorms;
  j["metrics"] = metricsJson(learningMetrics(ind.losses, ind.gradNorms));
  if (phenotype)
    j["robot"] = robotToJson(body.express(ind.genome));
  return j;
}

Individual individualFromJson(const LatticeBody &body, const json &j) {
  Individual ind;
  ind.id = j.at("id").get<uint64_t>();
  ind.parent = j.at("parent").get<int64_t>();
  ind.born = j.at("born").get<int>();
  ind.fitness = j.at("fitness").get<double>();
  ind.losses = j.at("losses").get<std::vector<double>>();
  if (j.contains("grad_norms")) // NaN was written as null
    for (const auto &g : j["grad_norms"])
      ind.gradNorms.push_back(g.is_number() ? g.get<double>()
                                            : std::numeric_limits<double>::quiet_NaN());
  ind.genome = body.fromJson(j.at("genome"));
  return ind;
}

json stateJson(const LatticeBody &body, const State &s, const json &fingerprint) {
  json pop = json::array();
  for (const auto &ind : s.population)
    pop.push_back(individualJson(body, ind, false));
  json j = {{"format", "evoc-run-state"},
            {"version", 1},
            {"generation", s.generation},
            {"next_id", s.nextId},
            {"designs_evaluated", s.designs},
            {"elapsed_seconds", s.elapsed},
            {"rng", s.rng.save()},
            {"config", fingerprint},
            {"population", pop}};
  if (s.haveBest)
    j["best"] = {{"individual", individualJson(body, s.best, false)}, {"params", s.bestParams}};
  return j;
}

State stateFromJson(const LatticeBody &body, const json &j) {
  if (j.value("format", "") != "evoc-run-state" || j.value("version", 0) != 1)
    throw Error("its state.json is not an evoc run state of version 1 (written by a "
                "different evoc?); start a new run");
  State s;
  s.generation = j.at("generation").get<int>();
  s.nextId = j.at("next_id").get<uint64_t>();
  s.designs = j.at("designs_evaluated").get<uint64_t>();
  s.elapsed = j.at("elapsed_seconds").get<double>();
  s.rng.restore(j.at("rng").get<std::string>());
  for (const auto &p : j.at("population"))
    s.population.push_back(individualFromJson(body, p));
  if (j.contains("best")) {
    s.haveBest = true;
    s.best = individualFromJson(body, j["best"].at("individual"));
    s.bestParams = j["best"].at("params");
  }
  return s;
}

// The first setting that differs, as "key: was A, now B".
std::string firstDifference(const json &was, const json &now, const std::string &at) {
  if (was.is_object() && now.is_object()) {
    for (auto it = now.begin(); it != now.end(); ++it) {
      std::string key = at.empty() ? it.key() : at + "." + it.key();
      if (!was.contains(it.key()))
        return fmt::format("{} is new", key);
      std::string d = firstDifference(was[it.key()], it.value(), key);
      if (!d.empty())
        return d;
    }
    return "";
  }
  return was == now ? "" : fmt::format("{} was {}, now {}", at, was.dump(), now.dump());
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// The pictures of one generation: the best robot's gait and the fitness plot.
void writePictures(const RunDir &dir, int generation, const LatticeBody &body, const State &s,
                   const GaitFn &gait, const std::vector<json> &log) {
  runtime::Robot robot = body.express(s.best.genome);
  std::vector<GaitFrame> frames;
  if (gait)
    frames = gait(robot, s.bestParams);
  if (frames.empty())
    frames.push_back(GaitFrame{robot.points, {}, "rest pose"});
  GaitStyle style;
  style.groundY = body.spec().baseY;
  style.title = fmt::format("generation {}: best design {} (fitness {:.5g})", generation, s.best.id,
                            s.best.fitness);
  std::string svg = renderGait(robot, frames, style);
  writeFileAtomic(dir.generationDir(generation) / "best.svg", svg);
  dir.writeFile("best.svg", svg);
  std::vector<FitnessPoint> pts;
  for (const auto &r : log)
    pts.push_back({r.at("generation").get<int>(), r.at("fitness_min").get<double>(),
                   r.at("fitness_median").get<double>(), r.at("fitness_max").get<double>()});
  dir.writeFile("fitness.svg", renderFitnessPlot(pts, "fitness over generations"));
}

} // namespace

json configFingerprint(const EvolutionConfig &c) {
  json invalid = json::array();
  for (const auto &r : c.fitness.invalid)
    invalid.push_back(
        {{"kind", r.kind == InvalidRule::Kind::LossAbove ? "loss_above" : "loss_jump"},
         {"threshold", r.threshold}});
  const auto &b = c.body;
  return {{"population", c.population},
          {"seed", c.seed},
          {"body",
           {{"rows", b.rows},
            {"cols", b.cols},
            {"edge", b.edge},
            {"stiffness", b.stiffness},
            {"actuation", b.actuation},
            {"base_y", b.baseY},
            {"fill_holes", b.fillHoles},
            {"largest_component", b.largestComponent},
            {"sample_cell_p", b.sampleCellP},
            {"sample_actuator_p", b.sampleActuatorP}}},
          {"mutation",
           {{"cell_rate", c.mutation.cellRate},
            {"until_changed", c.mutation.untilChanged},
            {"growth", c.mutation.growth},
            {"actuator_rate", c.mutation.actuatorRate},
            {"max_attempts", c.mutation.maxAttempts}}},
          {"fitness", {{"kind", fitnessName(c.fitness.kind)}, {"invalid", invalid}}},
          {"selection",
           {{"kind", selectionName(c.selection)},
            {"tournament_size", c.selection.tournamentSize},
            {"elites", c.selection.elites}}}};
}

RunSummary runEvolution(const EvolutionConfig &config, const EvaluateFn &evaluate,
                        const RunOptions &options) {
  const auto start = Clock::now();
  if (config.population < 1)
    throw Error(fmt::format("evolve.population must be at least 1; got {}", config.population));
  if (!evaluate)
    throw Error("the evolution engine needs an evaluate function");
  LatticeBody body(config.body);
  LatticeMutation mutation = config.mutation;
  const LatticeMutation reference = defaultMutation(body.geometry());
  if (mutation.cellRate < 0)
    mutation.cellRate = reference.cellRate;
  if (mutation.actuatorRate < 0)
    mutation.actuatorRate = reference.actuatorRate;
  const json fingerprint = configFingerprint(config);

  RunDir dir = options.resume ? RunDir::open(options.dir)
                              : RunDir::create(options.dir, options.resolvedSource);
  dir.lock();
  State s;
  s.rng = EvoRng(config.seed);
  std::vector<json> log;
  if (options.resume && dir.hasState()) {
    json sj = dir.readState();
    std::string diff = firstDifference(sj.value("config", json::object()), fingerprint, "");
    if (!diff.empty())
      throw Error(fmt::format("cannot resume '{}': its settings differ from this "
                              "experiment's ({}); only evolve.generations may change "
                              "on resume",
                              options.dir.string(), diff));
    try {
      s = stateFromJson(body, sj);
    } catch (const json::exception &e) {
      throw Error(fmt::format("cannot resume '{}': state.json is damaged ({})",
                              options.dir.string(), e.what()));
    } catch (const Error &e) {
      throw Error(fmt::format("cannot resume '{}': {}", options.dir.string(), e.what()));
    }
  }
  if (options.resume) { // drop log lines of a generation that never completed
    dir.removeStaleTemporaries();
    for (auto &r : dir.readLog())
      if (r.is_object() && r.value("generation", 1 << 30) <= s.generation)
        log.push_back(r);
    dir.writeLog(log);
  }

  Progress progress(options.progress, options.forceTty);
  if (options.resume && s.generation + 1 >= config.generations)
    progress.note(fmt::format("'{}' has already completed generations 0 to {}; to go on, "
                              "ask for more generations",
                              options.dir.string(), s.generation));
  else if (options.resume && s.generation < 0)
    progress.note(fmt::format("resuming '{}': no generation had completed; starting from "
                              "generation 0",
                              options.dir.string()));
  else if (options.resume)
    progress.note(
        fmt::format("resuming '{}' after generation {}", options.dir.string(), s.generation));
  double genSecondsSum = 0;
  int gensThisRun = 0;
  for (int g = s.generation + 1; g < config.generations; ++g) {
    const auto t0 = Clock::now();
    std::vector<Individual> offspring;
    std::vector<Verdict> verdicts;
    std::vector<Evaluation> evals;
    double evalSeconds = 0, robotSteps = 0;
    int valid = 0;
    for (int attempt = 0; valid == 0; ++attempt) {
      if (g == 0 && attempt >= std::max(1, config.maxInitialAttempts))
        throw Error(fmt::format("every robot of {} random initial populations was invalid "
                                "(last reason: {}); check the loss, the learning settings "
                                "and the invalid rules",
                                attempt, verdicts.empty() ? "none" : verdicts.back().reason));
      offspring.clear();
      EvalBatch batch;
      batch.generation = g;
      for (int i = 0; i < config.population; ++i) {
        Individual child;
        child.id = s.nextId++;
        child.born = g;
        if (g == 0) {
          child.genome = body.sample(s.rng);
        } else {
          const Individual &parent = s.population[size_t(i) % s.population.size()];
          child.parent = int64_t(parent.id);
          child.genome = body.mutate(parent.genome, mutation, s.rng);
        }
        batch.ids.push_back(child.id);
        batch.seeds.push_back(designSeed(config.seed, child.id));
        batch.robots.push_back(body.express(child.genome));
        offspring.push_back(std::move(child));
      }
      const auto e0 = Clock::now();
      evals = evaluate(batch);
      evalSeconds += seconds(e0, Clock::now());
      if (evals.size() != offspring.size())
        throw Error(fmt::format("the evaluate function returned {} results for {} robots",
                                evals.size(), offspring.size()));
      s.designs += offspring.size();
      verdicts.clear();
      valid = 0;
      for (size_t i = 0; i < evals.size(); ++i) {
        Verdict v = judge(evals[i].losses, config.fitness);
        if (!evals[i].valid) {
          v.valid = false;
          v.reason = evals[i].reason.empty() ? "rejected by the trainer" : evals[i].reason;
        }
        offspring[i].losses = evals[i].losses;
        offspring[i].gradNorms = evals[i].gradNorms;
        robotSteps +=
            evals[i].robotSteps > 0 ? double(evals[i].robotSteps) : config.robotStepsPerDesign;
        offspring[i].fitness = v.fitness;
        valid += v.valid;
        verdicts.push_back(std::move(v));
      }
      if (g > 0)
        break; // a generation with no valid offspring keeps its parents
    }

    // Survivors: parents plus valid offspring.
    std::vector<Individual> pool = s.population;
    std::vector<Scored> scored;
    for (const auto &p : pool)
      scored.push_back({p.id, p.fitness});
    int bestChild = -1;
    for (size_t i = 0; i < offspring.size(); ++i) {
      if (!verdicts[i].valid)
        continue;
      Scored sc{offspring[i].id, offspring[i].fitness};
      if (bestChild < 0 || ranksBefore(sc, Scored{offspring[size_t(bestChild)].id,
                                                  offspring[size_t(bestChild)].fitness}))
        bestChild = int(i);
      scored.push_back(sc);
      pool.push_back(offspring[i]);
    }
    std::vector<size_t> keep =
        selectSurvivors(scored, size_t(config.population), config.selection, s.rng);
    s.population.clear();
    for (size_t k : keep)
      s.population.push_back(pool[k]);
    if (bestChild >= 0) {
      const Individual &c = offspring[size_t(bestChild)];
      if (!s.haveBest || ranksBefore({c.id, c.fitness}, {s.best.id, s.best.fitness})) {
        const Evaluation &e = evals[size_t(bestChild)];
        s.best = c;
        s.haveBest = true;
        s.bestParams = !e.params.is_null() ? e.params : e.paramsFn ? e.paramsFn() : json();
      }
    }
    evals.clear();

    // Files, state.json last.
    std::vector<double> fit;
    std::vector<LearningMetrics> metrics;
    for (const auto &p : s.population) {
      fit.push_back(p.fitness);
      metrics.push_back(learningMetrics(p.losses, p.gradNorms));
    }
    auto medianMetric = [&](double LearningMetrics::*field) {
      std::vector<double> v;
      for (const auto &m : metrics)
        if (std::isfinite(m.*field))
          v.push_back(m.*field);
      return v.empty() ? json() : json(median(v));
    };
    json pop = json::array(), kids = json::array();
    for (size_t i = 0; i < s.population.size(); ++i)
      pop.push_back(individualJson(body, s.population[i], int(i) < config.phenotypeLimit));
    for (size_t i = 0; i < offspring.size(); ++i) {
      json k = {{"id", offspring[i].id},
                {"parent", offspring[i].parent},
                {"valid", verdicts[i].valid},
                {"fitness", verdicts[i].valid ? json(offspring[i].fitness) : json(nullptr)},
                {"genome", body.toJson(offspring[i].genome)}};
      if (!verdicts[i].valid)
        k["reason"] = verdicts[i].reason;
      kids.push_back(k);
    }
    json bestJ = robotToJson(body.express(s.best.genome));
    bestJ["id"] = s.best.id;
    bestJ["born"] = s.best.born;
    bestJ["fitness"] = s.best.fitness;
    bestJ["losses"] = s.best.losses;
    bestJ["genome"] = body.toJson(s.best.genome);
    bestJ["params"] = s.bestParams;
    dir.writePopulation(
        g, {{"generation", g},
            {"population", pop},
            {"offspring", kids},
            {"best", {{"id", s.best.id}, {"fitness", s.best.fitness}, {"params", s.bestParams}}}});
    dir.writeBest(bestJ);
    const double genSeconds = seconds(t0, Clock::now());
    s.elapsed += genSeconds;
    json rec = {{"generation", g},
                {"fitness_min", *std::min_element(fit.begin(), fit.end())},
                {"fitness_median", median(fit)},
                {"fitness_max", *std::max_element(fit.begin(), fit.end())},
                {"learning_gain_median", medianMetric(&LearningMetrics::gain)},
                {"monotonicity_median", medianMetric(&LearningMetrics::monotone)},
                {"best_id", s.best.id},
                {"best_fitness", s.best.fitness},
                {"population", s.population.size()},
                {"offspring", offspring.size()},
                {"offspring_valid", valid},
                {"designs_evaluated", s.designs},
                {"seconds", genSeconds},
                {"elapsed_seconds", s.elapsed},
                {"designs_per_second", numberOrNull(double(offspring.size()) / genSeconds)},
                {"robot_steps_per_second", numberOrNull(robotSteps / evalSeconds)}};
    log.push_back(rec);
    writePictures(dir, g, body, s, options.gait, log);
    dir.writeLog(log);
    s.generation = g;
    dir.writeState(stateJson(body, s, fingerprint));

    genSecondsSum += seconds(t0, Clock::now());
    ++gensThisRun;
    ProgressInfo info;
    info.generation = g;
    info.generations = config.generations;
    info.bestFitness = s.best.fitness;
    info.designsPerSecond = double(offspring.size()) / std::max(1e-9, genSeconds);
    info.secondsLeft = genSecondsSum / gensThisRun * (config.generations - 1 - g);
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
