// Run directory files of the engine: the checkpoint (with the archive), the
// per-generation population, the log, the best robot and the pictures.
#include "evolve/Recorder.h"

#include "evolve/Lattice.h"
#include "evolve/Metrics.h"
#include "evolve/Svg.h"

#include "support/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace evoc::evolve::engine {

namespace {

using json = nlohmann::json;

json numberOrNull(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

std::vector<double> doublesOrNaN(const json &j) { // NaN was written as null
  std::vector<double> out;
  for (const auto &g : j)
    out.push_back(g.is_number() ? g.get<double>() : std::numeric_limits<double>::quiet_NaN());
  return out;
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

json countsJson(const std::map<std::string, int> &m) {
  json j = json::object();
  for (const auto &[k, v] : m)
    j[k] = v;
  return j;
}

// The archive, compactly: [hex, id, fitness, losses] for a valid robot,
// [hex, id, null, reason] for an invalid one.
json archiveJson(const std::map<std::string, ArchiveEntry> &archive) {
  json a = json::array();
  for (const auto &[hex, e] : archive)
    a.push_back(e.valid ? json{hex, e.id, e.fitness, e.losses}
                        : json{hex, e.id, nullptr, e.reason});
  return a;
}

std::map<std::string, ArchiveEntry> archiveFromJson(const json &a) {
  std::map<std::string, ArchiveEntry> out;
  for (const auto &r : a) {
    ArchiveEntry e;
    e.id = r.at(1).get<uint64_t>();
    e.valid = !r.at(2).is_null();
    if (e.valid) {
      e.fitness = r.at(2).get<double>();
      e.losses = doublesOrNaN(r.at(3));
    } else {
      e.reason = r.at(3).get<std::string>();
    }
    out.emplace(r.at(0).get<std::string>(), std::move(e));
  }
  return out;
}

} // namespace

Recorder::Recorder(const EvolutionConfig &config, const RunOptions &options)
    : config_(config), model_(*config.body), options_(options),
      fingerprint_(configFingerprint(config)),
      dir_(options.resume ? RunDir::open(options.dir)
                          : RunDir::create(options.dir, options.resolvedSource)) {
  dir_.lock();
}

json Recorder::individualJson(const Individual &ind, bool phenotype) const {
  json j = {{"id", ind.id},         {"parent", ind.parent},
            {"born", ind.born},     {"fitness", ind.fitness},
            {"losses", ind.losses}, {"genome", model_.toJson(*ind.genome)}};
  if (!ind.gradNorms.empty())
    j["grad_norms"] = ind.gradNorms;
  j["metrics"] = metricsJson(learningMetrics(ind.losses, ind.gradNorms));
  if (phenotype)
    j["robot"] = robotToJson(model_.express(*ind.genome).robot);
  return j;
}

Individual Recorder::individualFromJson(const json &j) const {
  Individual ind;
  ind.id = j.at("id").get<uint64_t>();
  ind.parent = j.at("parent").get<int64_t>();
  ind.born = j.at("born").get<int>();
  ind.fitness = j.at("fitness").get<double>();
  ind.losses = doublesOrNaN(j.at("losses"));
  if (j.contains("grad_norms"))
    ind.gradNorms = doublesOrNaN(j["grad_norms"]);
  ind.genome = model_.fromJson(j.at("genome"));
  return ind;
}

json Recorder::stateJson(const State &s) const {
  json pop = json::array();
  for (const auto &ind : s.population) {
    pop.push_back(individualJson(ind, false));
    if (!ind.params.is_null()) // inherit = weights: a resume needs them
      pop.back()["params"] = ind.params;
  }
  json j = {{"format", "evoc-run-state"},
            {"version", kStateVersion},
            {"generation", s.generation},
            {"next_id", s.nextId},
            {"designs_evaluated", s.designs},
            {"elapsed_seconds", s.elapsed},
            {"rng", s.rng.save()},
            {"config", fingerprint_},
            {"population", pop},
            {"archive", archiveJson(s.archive)}};
  if (s.haveBest)
    j["best"] = {{"individual", individualJson(s.best, false)}, {"params", s.bestParams}};
  return j;
}

State Recorder::stateFromJson(const json &j) const {
  if (j.value("format", "") != "evoc-run-state")
    throw Error("its state.json is not an evoc run state (written by a different program?); "
                "start a new run");
  const int version = j.value("version", 0);
  if (version == 1)
    throw Error("its state.json is of version 1, written by an evoc from before body models "
                "and the evaluation archive; this evoc cannot continue it; start a new run");
  if (version != kStateVersion)
    throw Error(fmt::format("its state.json is not an evoc run state of version {} (it says "
                            "version {}; written by a different evoc?); start a new run",
                            kStateVersion, version));
  State s;
  s.generation = j.at("generation").get<int>();
  s.nextId = j.at("next_id").get<uint64_t>();
  s.designs = j.at("designs_evaluated").get<uint64_t>();
  s.elapsed = j.at("elapsed_seconds").get<double>();
  s.rng.restore(j.at("rng").get<std::string>());
  for (const auto &p : j.at("population")) {
    s.population.push_back(individualFromJson(p));
    if (p.contains("params"))
      s.population.back().params = p["params"];
  }
  if (j.contains("best")) {
    s.haveBest = true;
    s.best = individualFromJson(j["best"].at("individual"));
    s.bestParams = j["best"].at("params");
  }
  s.archive = archiveFromJson(j.at("archive"));
  return s;
}

bool Recorder::load(State &s) {
  bool loaded = false;
  if (options_.resume && dir_.hasState()) {
    json sj = dir_.readState();
    std::string diff = firstDifference(sj.value("config", json::object()), fingerprint_, "");
    // "inherit" is only written when on, so its absence is a difference too.
    if (diff.empty() && sj.value("config", json::object()).contains("inherit") &&
        !fingerprint_.contains("inherit"))
      diff = "inherit was \"weights\", now none";
    if (!diff.empty() && sj.value("version", 0) == kStateVersion)
      throw Error(fmt::format("cannot resume '{}': its settings differ from this "
                              "experiment's ({}); only evolve.generations may change "
                              "on resume",
                              options_.dir.string(), diff));
    try {
      s = stateFromJson(sj);
    } catch (const json::exception &e) {
      throw Error(fmt::format("cannot resume '{}': state.json is damaged ({})",
                              options_.dir.string(), e.what()));
    } catch (const Error &e) {
      throw Error(fmt::format("cannot resume '{}': {}", options_.dir.string(), e.what()));
    }
    loaded = true;
  }
  if (options_.resume) { // drop log lines of a generation that never completed
    const int last = loaded ? s.generation : -1;
    dir_.removeStaleTemporaries();
    for (auto &r : dir_.readLog())
      if (r.is_object() && r.value("generation", 1 << 30) <= last)
        log_.push_back(r);
    dir_.writeLog(log_);
  }
  return loaded;
}

void Recorder::writePictures(const State &s, int generation, const GaitFn &gait) const {
  Phenotype ph = model_.express(*s.best.genome);
  // Gait pictures are side views of 2D robots; a 3D run gets its fitness
  // plot only (projected 3D pictures come with the 3D physics).
  if (ph.robot.dim == 2)
    writeGaitPicture(s, generation, gait, ph);
  std::vector<FitnessPoint> pts;
  for (const auto &r : log_)
    pts.push_back({r.at("generation").get<int>(), r.at("fitness_min").get<double>(),
                   r.at("fitness_median").get<double>(), r.at("fitness_max").get<double>()});
  dir_.writeFile("fitness.svg", renderFitnessPlot(pts, "fitness over generations"));
}

void Recorder::writeGaitPicture(const State &s, int generation, const GaitFn &gait,
                                const Phenotype &ph) const {
  std::vector<GaitFrame> frames;
  if (gait)
    frames = gait(ph.robot, s.bestParams);
  if (frames.empty())
    frames.push_back(GaitFrame{ph.robot.points, {}, "rest pose"});
  GaitStyle style;
  style.groundY = model_.groundY();
  style.title = fmt::format("generation {}: best design {} (fitness {:.5g})", generation, s.best.id,
                            s.best.fitness);
  std::string svg = renderGait(ph.robot, frames, style, ph.outlines);
  writeFileAtomic(dir_.generationDir(generation) / "best.svg", svg);
  dir_.writeFile("best.svg", svg);
}

void Recorder::writeGeneration(const State &s, const std::vector<Child> &children,
                               const GenerationRecord &rec, const GaitFn &gait) {
  const int g = rec.generation;
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
    pop.push_back(individualJson(s.population[i], int(i) < config_.phenotypeLimit));
  for (const Child &c : children) {
    json k = {{"id", c.ind.id},
              {"parent", c.ind.parent},
              {"valid", c.valid},
              {"fitness", c.valid ? json(c.ind.fitness) : json(nullptr)},
              {"genome", model_.toJson(*c.ind.genome)},
              {"key", c.key.hex()},
              {"ops", c.variation.ops}};
    if (c.trained && !c.ind.losses.empty())
      k["first_loss"] = c.ind.losses[0]; // the loss of its initial weights
    if (config_.inheritWeights && c.trained)
      k["inherited"] = c.inherited; // parameter scalars taken from the parent
    if (c.reused)
      k["reused"] = s.archive.at(c.key.hex()).id; // the design whose evaluation it reuses
    if (c.variation.fallback)
      k["fallback"] = c.variation.fallbackOp;
    if (!c.valid)
      k["reason"] = c.reason;
    kids.push_back(k);
  }
  json bestJ = robotToJson(model_.express(*s.best.genome).robot);
  bestJ["id"] = s.best.id;
  bestJ["born"] = s.best.born;
  bestJ["fitness"] = s.best.fitness;
  bestJ["losses"] = s.best.losses;
  bestJ["genome"] = model_.toJson(*s.best.genome);
  bestJ["params"] = s.bestParams;
  dir_.writePopulation(
      g, {{"generation", g},
          {"population", pop},
          {"offspring", kids},
          {"best", {{"id", s.best.id}, {"fitness", s.best.fitness}, {"params", s.bestParams}}}});
  dir_.writeBest(bestJ);
  json r = {{"generation", g},
            {"fitness_min", *std::min_element(fit.begin(), fit.end())},
            {"fitness_median", median(fit)},
            {"fitness_max", *std::max_element(fit.begin(), fit.end())},
            {"learning_gain_median", medianMetric(&LearningMetrics::gain)},
            {"monotonicity_median", medianMetric(&LearningMetrics::monotone)},
            {"best_id", s.best.id},
            {"best_fitness", s.best.fitness},
            {"population", s.population.size()},
            {"offspring", rec.offspring},
            {"offspring_valid", rec.offspringValid},
            {"offspring_trained", rec.eval.trained},
            {"duplicates_avoided", rec.breed.duplicatesAvoided},
            {"duplicates_reused", rec.breed.duplicatesReused},
            {"ops", countsJson(rec.breed.ops)},
            {"fallbacks", countsJson(rec.breed.fallbacks)},
            {"archive_size", s.archive.size()},
            {"designs_evaluated", s.designs},
            {"seconds", rec.seconds},
            {"train_seconds", rec.eval.seconds},
            {"elapsed_seconds", s.elapsed},
            {"designs_per_second", numberOrNull(double(rec.eval.trained) / rec.seconds)},
            {"robot_steps_per_second", numberOrNull(rec.eval.robotSteps / rec.eval.seconds)}};
  log_.push_back(r);
  writePictures(s, g, gait);
  dir_.writeLog(log_);
  dir_.writeState(stateJson(s));
}

} // namespace evoc::evolve::engine
