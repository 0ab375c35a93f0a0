// Run directory files of the engine: the checkpoint (with the archive), the
// per-generation population, the log, the best robot and the pictures.
#include "evolve/record/Recorder.h"

#include "core/RobotJson.h"
#include "evolve/bodies/Lattice.h"
#include "evolve/engine/MapElites.h"
#include "evolve/engine/Metrics.h"
#include "evolve/record/Svg.h"

#include "support/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>

namespace evoc::evolve::engine {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

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

// A log field, NaN when absent or not a number (a NaN was written as null).
double numberOr(const json &r, const char *key) {
  return r.contains(key) && r[key].is_number() ? r[key].get<double>()
                                               : std::numeric_limits<double>::quiet_NaN();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The loss's named terms as {"name": curve}; NaN written as null.
json termsJson(const std::vector<std::pair<std::string, std::vector<double>>> &terms) {
  json j = json::object();
  for (const auto &[name, curve] : terms) {
    json c = json::array();
    for (double v : curve)
      c.push_back(numberOrNull(v));
    j[name] = c;
  }
  return j;
}

std::vector<std::pair<std::string, std::vector<double>>> termsFromJson(const json &j) {
  std::vector<std::pair<std::string, std::vector<double>>> out;
  for (auto it = j.begin(); it != j.end(); ++it)
    out.emplace_back(it.key(), doublesOrNaN(it.value()));
  return out;
}

// MAP-Elites: a design's descriptors (NaN as null), as "descriptors".
void descriptorsInto(json &j, const std::vector<double> &values) {
  json d = json::array();
  for (double v : values)
    d.push_back(numberOrNull(v));
  j["descriptors"] = d;
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

// state.json's shape, checked before anything reads it, so that a damaged
// file is refused with the field named instead of crashing the resume.
[[noreturn]] void damaged(const std::string &at, const std::string &what) {
  throw Error(fmt::format("{} {}", at, what));
}

std::string describe(const json &j) {
  return j.is_structured() ? fmt::format("an {}", j.type_name()) : j.dump();
}

const json &field(const json &obj, const std::string &at, const char *key) {
  if (!obj.contains(key))
    damaged(at.empty() ? key : at + "." + key, "is missing");
  return obj[key];
}

std::string sub(const std::string &at, const char *key) {
  return at.empty() ? key : at + "." + key;
}

uint64_t needUnsigned(const json &j, const std::string &at) {
  if (!j.is_number_unsigned())
    damaged(at, fmt::format("must be a whole number >= 0, not {}", describe(j)));
  return j.get<uint64_t>();
}

int64_t needInteger(const json &j, const std::string &at, int64_t lo, int64_t hi) {
  if (!j.is_number_integer() || (j.is_number_unsigned() && j.get<uint64_t>() > uint64_t(hi)) ||
      j.get<int64_t>() < lo || j.get<int64_t>() > hi)
    damaged(at, fmt::format("must be a whole number from {} to {}, not {}", lo, hi, describe(j)));
  return j.get<int64_t>();
}

void needNumber(const json &j, const std::string &at) {
  if (!j.is_number())
    damaged(at, fmt::format("must be a number, not {}", describe(j)));
}

void needCurve(const json &j, const std::string &at) { // NaN was written as null
  if (!j.is_array())
    damaged(at, fmt::format("must be an array of numbers, not {}", describe(j)));
  for (const auto &v : j)
    if (!v.is_number() && !v.is_null())
      damaged(at, fmt::format("must hold numbers only, not {}", describe(v)));
}

// An individual (population member or best); returns its id.
uint64_t checkIndividual(const json &p, const std::string &at, int64_t generation) {
  if (!p.is_object())
    damaged(at, fmt::format("must be an object, not {}", describe(p)));
  uint64_t id = needUnsigned(field(p, at, "id"), sub(at, "id"));
  needInteger(field(p, at, "parent"), sub(at, "parent"), -1, std::numeric_limits<int64_t>::max());
  needInteger(field(p, at, "born"), sub(at, "born"), 0, generation);
  needNumber(field(p, at, "fitness"), sub(at, "fitness"));
  needCurve(field(p, at, "losses"), sub(at, "losses"));
  if (p.contains("grad_norms"))
    needCurve(p["grad_norms"], sub(at, "grad_norms"));
  if (p.contains("descriptors"))
    needCurve(p["descriptors"], sub(at, "descriptors"));
  if (p.contains("terms")) {
    const json &t = p["terms"];
    if (!t.is_object())
      damaged(sub(at, "terms"), fmt::format("must be an object of curves, not {}", describe(t)));
    for (auto it = t.begin(); it != t.end(); ++it)
      needCurve(it.value(), sub(at, "terms") + "." + it.key());
  }
  field(p, at, "genome"); // the body model checks its content
  return id;
}

// Checks every field stateFromJson reads (format and version already
// checked); throws evoc::Error naming the first bad one.
void checkStateShape(const json &j) {
  const int64_t g =
      needInteger(field(j, "", "generation"), "generation", 0, std::numeric_limits<int>::max() - 1);
  const uint64_t nextId = needUnsigned(field(j, "", "next_id"), "next_id");
  needUnsigned(field(j, "", "designs_evaluated"), "designs_evaluated");
  needNumber(field(j, "", "elapsed_seconds"), "elapsed_seconds");
  if (!field(j, "", "rng").is_string())
    damaged("rng", fmt::format("must be a string of 64 hex digits, not {}", describe(j["rng"])));
  if (!field(j, "", "config").is_object())
    damaged("config", fmt::format("must be an object, not {}", describe(j["config"])));
  uint64_t maxId = 0;
  const json &pop = field(j, "", "population");
  if (!pop.is_array() || pop.empty())
    damaged("population", fmt::format("must be a non-empty array, not {}",
                                      pop.is_array() ? "an empty one" : describe(pop)));
  for (size_t i = 0; i < pop.size(); ++i)
    maxId = std::max(maxId, checkIndividual(pop[i], fmt::format("population[{}]", i), g));
  const json &best = field(j, "", "best");
  if (!best.is_object())
    damaged("best", fmt::format("must be an object, not {}", describe(best)));
  maxId = std::max(maxId, checkIndividual(field(best, "best", "individual"), "best.individual", g));
  field(best, "best", "params");
  const json &archive = field(j, "", "archive");
  if (!archive.is_array())
    damaged("archive", fmt::format("must be an array, not {}", describe(archive)));
  for (size_t i = 0; i < archive.size(); ++i) {
    const json &r = archive[i];
    std::string at = fmt::format("archive[{}]", i);
    if (!r.is_array() || r.size() != 4 || !r[0].is_string() || !r[1].is_number_unsigned() ||
        !(r[2].is_number() || r[2].is_null()) ||
        !(r[2].is_null() ? r[3].is_string() : r[3].is_array()))
      damaged(at, fmt::format("must be [key, id, fitness, losses] or [key, id, null, reason], "
                              "not {}",
                              r.dump().substr(0, 80)));
    if (r[3].is_array())
      needCurve(r[3], at + "[3]");
    maxId = std::max(maxId, r[1].get<uint64_t>());
  }
  if (nextId <= maxId)
    damaged("next_id", fmt::format("is {}, but design {} exists; ids would repeat", nextId, maxId));
}

} // namespace

Recorder::Recorder(const EvolutionConfig &config, const RunOptions &options)
    : config_(config), model_(*config.body), options_(options),
      fingerprint_(configFingerprint(config)),
      dir_(options.resume ? RunDir::resume(options.dir, options.resolvedSource)
                          : RunDir::create(options.dir, options.resolvedSource)) {
  dir_.lock();
}

json Recorder::individualJson(const Individual &ind, bool phenotype) const {
  json j = {{"id", ind.id},         {"parent", ind.parent},
            {"born", ind.born},     {"fitness", ind.fitness},
            {"losses", ind.losses}, {"genome", model_.toJson(*ind.genome)}};
  if (!ind.gradNorms.empty())
    j["grad_norms"] = ind.gradNorms;
  if (!ind.terms.empty())
    j["terms"] = termsJson(ind.terms);
  j["metrics"] = metricsJson(learningMetrics(ind.losses, ind.gradNorms));
  if (!ind.descriptors.empty()) // MAP-Elites: what places it in its cell
    descriptorsInto(j, ind.descriptors);
  if (phenotype)
    j["robot"] = runtime::robotToJson(model_.express(*ind.genome).robot);
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
  if (j.contains("terms"))
    ind.terms = termsFromJson(j["terms"]);
  if (j.contains("descriptors"))
    ind.descriptors = doublesOrNaN(j["descriptors"]);
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
  if (!j.is_object())
    throw Error(fmt::format("its state.json holds {}, not an evoc run state (an object); "
                            "the file is damaged",
                            describe(j)));
  const std::string format = j.contains("format") && j["format"].is_string() ? j["format"] : "";
  if (format != "evoc-run-state")
    throw Error("its state.json is not an evoc run state (written by a different program?); "
                "start a new run");
  const int version =
      j.contains("version") && j["version"].is_number_integer() ? j["version"].get<int>() : 0;
  if (version == 1)
    throw Error("its state.json is of version 1, written by an evoc from before body models "
                "and the evaluation archive; this evoc cannot continue it; start a new run");
  if (version != kStateVersion)
    throw Error(fmt::format("its state.json is not an evoc run state of version {} (it says "
                            "version {}; written by a different evoc?); start a new run",
                            kStateVersion, version));
  try {
    checkStateShape(j);
  } catch (const Error &e) {
    throw Error(fmt::format("its state.json is damaged ({}); restore it from a backup, or "
                            "start a new run",
                            e.what()));
  }
  State s;
  try {
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
  } catch (const std::exception &e) { // a genome its body model cannot read
    throw Error(fmt::format("its state.json is damaged ({}); restore it from a backup, or "
                            "start a new run",
                            e.what()));
  }
  return s;
}

// The settings that differ between a run's fingerprint and this
// experiment's, as "key: was A, now B", or "". The experiment's text is
// compared last, so that a setting with a name is named; a fingerprint
// from an evoc before the experiment settings has none to compare.
static std::string settingsDifference(json was, json now) {
  std::string textWas, textNow;
  if (!was.contains("experiment"))
    now.erase("experiment");
  auto takeText = [](json &j, std::string &into) {
    if (j.contains("experiment") && j["experiment"].is_object() &&
        j["experiment"].contains("text_hash")) {
      into = j["experiment"]["text_hash"].dump();
      j["experiment"].erase("text_hash");
    }
  };
  takeText(was, textWas);
  takeText(now, textNow);
  std::string diff = firstDifference(was, now, "");
  // "inherit" is only written when on, so its absence is a difference too.
  if (diff.empty() && was.contains("inherit") && !now.contains("inherit"))
    diff = "inherit was \"weights\", now none";
  // So is "offspring" (written when it is not the population).
  if (diff.empty() && was.contains("offspring") && !now.contains("offspring"))
    diff = fmt::format("offspring was {}, now one per parent", was["offspring"].dump());
  if (diff.empty() && textWas != textNow)
    diff = "the experiment's text (the .evo file or a file it imports: its loss, world, "
           "learning or body) changed since the run started";
  return diff;
}

// Checks that the log holds exactly one line for each of generations
// 0..last (in order) and returns those; lines of a later generation (one
// that never committed) are dropped. Throws evoc::Error otherwise.
static std::vector<json> committedLog(const std::vector<json> &lines, int last) {
  std::vector<json> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    const json &r = lines[i];
    if (!r.is_object() || !r.contains("generation") || !r["generation"].is_number_integer())
      throw Error(fmt::format("line {} of log.jsonl is damaged (not a log record with a "
                              "whole-number generation)",
                              i + 1));
    const int64_t g = r["generation"].get<int64_t>();
    if (g > last)
      continue;
    if (g != int64_t(out.size()))
      throw Error(fmt::format("line {} of log.jsonl is of generation {} where generation {} "
                              "was due",
                              i + 1, g, out.size()));
    out.push_back(r);
  }
  if (int(out.size()) != last + 1)
    throw Error(fmt::format("log.jsonl holds {} of the {} completed generations (0 to {}); "
                            "it was truncated or deleted",
                            out.size(), last + 1, last));
  return out;
}

bool Recorder::load(State &s) {
  if (!options_.resume)
    return false;
  const std::string where = fmt::format("cannot resume '{}': ", options_.dir.string());
  const std::string untouched = "; evoc left the directory untouched";
  bool loaded = false;
  if (dir_.hasState()) {
    json sj;
    try {
      sj = dir_.readState();
    } catch (const Error &e) {
      throw Error(fmt::format("{}{}{}; restore state.json from a backup, or start a new run", where,
                              e.what(), untouched));
    }
    // A state of this version whose settings differ is refused by name.
    if (sj.is_object() && sj.contains("version") && sj["version"] == kStateVersion &&
        sj.contains("config") && sj["config"].is_object()) {
      std::string diff = settingsDifference(sj["config"], fingerprint_);
      if (!diff.empty())
        throw Error(fmt::format("{}its settings differ from this experiment's ({}); only "
                                "evolve.generations may change on resume{}; start a new run "
                                "with --out to try the new settings",
                                where, diff, untouched));
    }
    try {
      s = stateFromJson(sj);
    } catch (const json::exception &e) {
      throw Error(fmt::format("{}state.json is damaged ({}); restore it from a backup, or "
                              "start a new run{}",
                              where, e.what(), untouched));
    } catch (const Error &e) {
      throw Error(fmt::format("{}{}{}", where, e.what(), untouched));
    }
    loaded = true;
  }
  const int last = loaded ? s.generation : -1;
  if (loaded) {
    try {
      log_ = committedLog(dir_.readLog(), last);
    } catch (const Error &e) {
      throw Error(fmt::format("{}{}{}; restore log.jsonl from a backup, or start a new run", where,
                              e.what(), untouched));
    }
  }
  // Checked: now the directory may change. Drop temporaries and log lines
  // of a generation that never completed, and write resolved.evo if the
  // run was killed before it did.
  dir_.removeStaleTemporaries();
  dir_.writeLog(log_);
  if (!fs::exists(options_.dir / "resolved.evo") && !options_.resolvedSource.empty())
    dir_.writeFile("resolved.evo", options_.resolvedSource);
  return loaded;
}

void Recorder::writePictures(const State &s, int generation, const GaitFn &gait) const {
  Phenotype ph = model_.express(*s.best.genome);
  writeGaitPicture(s, generation, gait, ph); // a side view in 2D, an oblique view in 3D
  std::vector<FitnessPoint> pts;
  for (const auto &r : log_)
    pts.push_back({r.at("generation").get<int>(), numberOr(r, "fitness_min"),
                   numberOr(r, "fitness_median"), numberOr(r, "fitness_max")});
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
  style.terrain = options_.terrain.empty() ? nullptr : &options_.terrain;
  // The fitness with its definition, so that the frames' figures can be
  // read against it (with losses/displacement.evo and max(-loss) the last
  // frame's "moved" is the fitness).
  style.title = fmt::format("generation {}: best design {} (fitness {:.5g} = {})", generation,
                            s.best.id, s.best.fitness, fitnessName(config_.fitness.kind));
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
    if (c.trained && !c.ind.losses.empty()) {
      k["first_loss"] = c.ind.losses[0]; // the loss of its initial weights
      // Its own learning measures, whether or not it survives.
      k["metrics"] = metricsJson(learningMetrics(c.ind.losses, c.ind.gradNorms));
    }
    if (config_.inheritWeights && c.trained)
      k["inherited"] = c.inherited; // parameter scalars taken from the parent
    if (c.trained && !c.notTrained.empty())
      k["not_trained"] = c.notTrained;
    if (c.reused)
      k["reused"] = s.archive.at(c.key.hex()).id; // the design whose evaluation it reuses
    if (c.variation.fallback)
      k["fallback"] = c.variation.fallbackOp;
    if (!c.valid)
      k["reason"] = c.reason;
    if (!c.ind.descriptors.empty())
      descriptorsInto(k, c.ind.descriptors);
    kids.push_back(k);
  }
  json bestJ = runtime::robotToJson(model_.express(*s.best.genome).robot);
  bestJ["id"] = s.best.id;
  bestJ["born"] = s.best.born;
  bestJ["fitness"] = s.best.fitness;
  bestJ["losses"] = s.best.losses;
  if (!s.best.terms.empty())
    bestJ["terms"] = termsJson(s.best.terms);
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
            {"offspring_not_trained", rec.eval.notTrained},
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
  // Mutation rates that were not probabilities and were clamped (the run
  // also warns on stderr; docs/grammars.md), in every generation they occur
  // so that a resumed run's log reads as an uninterrupted one's.
  if (!rec.breed.clampedRates.empty()) {
    json c = json::object();
    for (const auto &[op, v] : rec.breed.clampedRates)
      c[op] = numberOrNull(v);
    r["rates_clamped"] = c;
  }
  if (config_.selection.kind == SelectionSpec::Kind::MapElites) {
    std::vector<EliteRecord> elites;
    for (const auto &p : s.population)
      elites.push_back({p.id, p.born, p.fitness, p.descriptors});
    json map = eliteMapJson(config_.selection, g, elites);
    r["coverage"] = map["coverage"];
    r["qd_score"] = map["qd_score"];
    r["cells_filled"] = map["filled"];
    dir_.writeFile("elites.json", map.dump(1));
  }
  log_.push_back(r);
  writePictures(s, g, gait);
  dir_.writeLog(log_);
  dir_.writeState(stateJson(s));
}

} // namespace evoc::evolve::engine
