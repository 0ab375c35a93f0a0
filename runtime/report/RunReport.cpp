// The report of an evolution run: reads log.jsonl, state.json and every
// gen_NNNN/population.json (each committed generation once), recomputes the
// gaits of the generations' best robots from their saved weights, and says
// what is missing from a partial run.
#include "report/Report.h"

#include "evolve/engine/Metrics.h"
#include "evolve/record/RunDir.h"

#include "core/JsonIO.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>

namespace evoc::report {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// A committed generation, as the report needs it.
struct Generation {
  int g = 0;
  uint64_t bestId = 0;
  double bestFitness = 0;
  json bestParams;
  // The best's population entry (genome, losses, maybe robot), shared by the
  // generations with the same best: one copy per distinct best in memory.
  std::shared_ptr<const json> bestEntry = std::make_shared<const json>();
  double gradCvMedian = NAN;
  std::vector<std::tuple<uint64_t, int64_t, double>> lineage; // id, parent, fitness
};

double medianOf(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return !std::isfinite(x); }), v.end());
  if (v.empty())
    return NAN;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

json num(const json &r, const char *key) {
  return r.is_object() && r.contains(key) && r[key].is_number() ? r[key] : json();
}

json finiteOrNull(double v) { return std::isfinite(v) ? json(v) : json(); }

Generation readGeneration(const json &doc, int g) {
  Generation out;
  out.g = g;
  const json &best = doc.at("best");
  out.bestId = best.at("id").get<uint64_t>();
  out.bestFitness = best.at("fitness").get<double>();
  out.bestParams = best.value("params", json());
  std::vector<double> cvs;
  for (const json &p : doc.at("population")) {
    if (p.contains("metrics") && p["metrics"].is_object())
      cvs.push_back(num(p["metrics"], "grad_norm_cv").is_number()
                        ? p["metrics"]["grad_norm_cv"].get<double>()
                        : NAN);
    if (p.at("id").get<uint64_t>() == out.bestId)
      out.bestEntry = std::make_shared<const json>(p);
    double f = p.value("fitness", NAN);
    out.lineage.emplace_back(p.at("id").get<uint64_t>(), p.value("parent", int64_t(-1)), f);
  }
  if (doc.contains("offspring"))
    for (const json &c : doc["offspring"])
      out.lineage.emplace_back(c.at("id").get<uint64_t>(), c.value("parent", int64_t(-1)),
                               c["fitness"].is_number() ? c["fitness"].get<double>() : NAN);
  out.gradCvMedian = medianOf(cvs);
  return out;
}

// The JSON lines of a file; damaged lines are reported, not fatal.
std::vector<json> readLines(const fs::path &p, std::vector<std::string> &missing) {
  std::vector<json> out;
  std::istringstream in(evolve::readTextFile(p));
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty())
      continue;
    try {
      out.push_back(json::parse(line));
    } catch (const json::exception &) {
      missing.push_back(fmt::format("{} line {} is damaged (not JSON); it was skipped",
                                    p.filename().string(), n));
    }
  }
  return out;
}

} // namespace

struct RunReport::Impl {
  ReportContext ctx;
  std::map<int, Generation> gens;          // committed generations read so far
  std::map<uint64_t, json> galleryMotions; // design id -> motionJson
  std::pair<uint64_t, json> bestMotion{~0ull, json()};
  std::vector<std::string> missing;
  std::vector<std::string> gaitNotes; // gaits that failed (cached, so kept across builds)

  int readState(); // the last completed generation, -1 when none
  void readGenerations(const std::vector<json> &log, int committed);
  const Generation *generationOfDesign(uint64_t id) const;
  Motion motionOf(const Generation &g, int frames, bool outputs);
  json motionCached(const Generation &g, int frames, bool outputs, std::map<uint64_t, json> &cache);
  json data(const std::vector<json> &log, int committed);
  json lineageJson(uint64_t bestId) const;
};

RunReport::RunReport(ReportContext ctx) : impl_(std::make_unique<Impl>()) {
  impl_->ctx = std::move(ctx);
}
RunReport::~RunReport() = default;

const std::vector<std::string> &RunReport::missing() const { return impl_->missing; }

int RunReport::Impl::readState() {
  const fs::path p = ctx.dir / "state.json";
  if (!fs::exists(p)) {
    missing.push_back("state.json is missing: no generation has completed yet (a run just "
                      "started, or killed during its first generation)");
    return -1;
  }
  try {
    json s = json::parse(evolve::readTextFile(p));
    if (s.is_object() && s.contains("generation") && s["generation"].is_number_integer())
      return s["generation"].get<int>();
    missing.push_back("state.json has no generation number (damaged?)");
  } catch (const std::exception &e) {
    missing.push_back(fmt::format("state.json cannot be read ({})", e.what()));
  }
  return -1;
}

void RunReport::Impl::readGenerations(const std::vector<json> &log, int committed) {
  int last = committed;
  for (const json &r : log)
    if (r.is_object() && r.contains("generation") && r["generation"].is_number_integer())
      last = std::max(last, r["generation"].get<int>());
  for (int g = 0; g <= last + 1; ++g) {
    if (gens.count(g))
      continue;
    const fs::path p = ctx.dir / fmt::format("gen_{:04d}", g) / "population.json";
    if (!fs::exists(p)) {
      if (g <= committed)
        missing.push_back(
            fmt::format("generation {}: gen_{:04d}/population.json is missing", g, g));
      continue;
    }
    if (g > committed) {
      missing.push_back(fmt::format("generation {} is in progress or was interrupted (its "
                                    "files are there, but state.json does not commit it yet)",
                                    g));
      continue;
    }
    try {
      Generation gen = readGeneration(json::parse(evolve::readTextFile(p)), g);
      auto prev = gens.find(g - 1);
      if (prev != gens.end() && prev->second.bestId == gen.bestId &&
          !prev->second.bestEntry->empty())
        gen.bestEntry = prev->second.bestEntry;
      gens.emplace(g, std::move(gen));
    } catch (const std::exception &e) {
      missing.push_back(fmt::format("generation {}: gen_{:04d}/population.json cannot be read "
                                    "({})",
                                    g, g, e.what()));
    }
  }
}

// `outputs`: with the controller's outputs (the best's animation, videos;
// the gallery colours by strain, which keeps the page small).
Motion RunReport::Impl::motionOf(const Generation &g, int frames, bool outputs) {
  Motion m;
  m.label = fmt::format("generation {}: design {} (fitness {:.5g})", g.g, g.bestId, g.bestFitness);
  const json &e = *g.bestEntry;
  // The body model's phenotype also gives the part outlines to colour.
  evolve::Phenotype ph;
  bool expressed = false;
  if (ctx.model && e.contains("genome")) {
    try {
      ph = ctx.model->express(*ctx.model->fromJson(e["genome"]));
      expressed = true;
    } catch (const std::exception &) { // another body's genome: the robot alone
    }
  }
  if (e.contains("robot")) {
    m.robot = runtime::parseRobotsJson(json{{"robots", json::array({e["robot"]})}}.dump(),
                                       "population.json", 0)
                  .at(0);
  } else if (expressed) {
    m.robot = ph.robot;
  } else {
    throw Error(fmt::format("design {} has neither a robot nor a genome this report can "
                            "express",
                            g.bestId));
  }
  if (expressed && ph.robot.numPoints() == m.robot.numPoints())
    m.outlines = std::move(ph.outlines);
  m.times = sampleTimes(ctx.world.steps, frames);
  if (ctx.trajectory && g.bestParams.is_object()) {
    try {
      m.frames = ctx.trajectory(m.robot, g.bestParams, m.times, outputs ? &m.outputs : nullptr,
                                &m.objects);
    } catch (const std::exception &err) { // weights that do not fit, a rollout that fails
      gaitNotes.push_back(fmt::format("design {}: its gait could not be computed ({}); the "
                                      "page shows its rest pose",
                                      g.bestId, err.what()));
    }
  }
  if (m.frames.size() != m.times.size()) {
    m.frames.assign(1, m.robot.points);
    m.times.assign(1, 0);
    m.objects.clear();
  }
  return m;
}

json RunReport::Impl::motionCached(const Generation &g, int frames, bool outputs,
                                   std::map<uint64_t, json> &cache) {
  auto it = cache.find(g.bestId);
  if (it != cache.end())
    return it->second;
  json m;
  try {
    m = motionJson(motionOf(g, frames, outputs));
  } catch (const std::exception &e) {
    gaitNotes.push_back(fmt::format("design {}: {}", g.bestId, e.what()));
  }
  cache.emplace(g.bestId, m);
  return m;
}

const Generation *RunReport::Impl::generationOfDesign(uint64_t id) const {
  for (auto it = gens.rbegin(); it != gens.rend(); ++it)
    if (it->second.bestId == id)
      return &it->second;
  return nullptr;
}

json RunReport::Impl::lineageJson(uint64_t bestId) const {
  std::map<uint64_t, std::pair<int64_t, double>> parent; // id -> (parent, fitness)
  std::map<uint64_t, int> born;
  for (const auto &[g, gen] : gens)
    for (const auto &[id, par, fit] : gen.lineage) {
      if (!born.count(id))
        born[id] = g;
      auto &slot = parent[id];
      slot = {par, std::isfinite(fit) ? fit : slot.second};
    }
  json chain = json::array();
  int64_t id = int64_t(bestId);
  for (size_t guard = 0; id >= 0 && guard <= parent.size(); ++guard) {
    auto it = parent.find(uint64_t(id));
    if (it == parent.end())
      break;
    chain.push_back(
        {{"id", id}, {"born", born[uint64_t(id)]}, {"fitness", finiteOrNull(it->second.second)}});
    id = it->second.first;
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

// The gallery's generations: the first generation of each distinct best,
// at most galleryMax of them, evenly spread, the last always kept.
static std::vector<const Generation *> galleryOf(const std::map<int, Generation> &gens, int most) {
  std::vector<const Generation *> firsts;
  uint64_t prev = ~0ull;
  for (const auto &[g, gen] : gens)
    if (gen.bestId != prev) {
      firsts.push_back(&gen);
      prev = gen.bestId;
    }
  if (int(firsts.size()) <= most || most < 2)
    return firsts;
  std::vector<const Generation *> out;
  for (int k = 0; k < most; ++k)
    out.push_back(firsts[size_t(k) * (firsts.size() - 1) / size_t(most - 1)]);
  return out;
}

static json generationsJson(const std::vector<json> &log, const std::map<int, Generation> &gens) {
  json out = json::array();
  for (const json &r : log) {
    if (!r.is_object() || !r.contains("generation") || !r["generation"].is_number_integer())
      continue;
    const int g = r["generation"].get<int>();
    auto it = gens.find(g);
    out.push_back({{"g", g},
                   {"min", num(r, "fitness_min")},
                   {"median", num(r, "fitness_median")},
                   {"max", num(r, "fitness_max")},
                   {"gain", num(r, "learning_gain_median")},
                   {"mono", num(r, "monotonicity_median")},
                   {"cv", it == gens.end() ? json() : finiteOrNull(it->second.gradCvMedian)},
                   {"best", num(r, "best_id")},
                   {"seconds", num(r, "seconds")},
                   {"designs", num(r, "designs_evaluated")},
                   {"elapsed", num(r, "elapsed_seconds")},
                   {"qd", num(r, "qd_score")},
                   {"coverage", num(r, "coverage")}});
  }
  return out;
}

json RunReport::Impl::data(const std::vector<json> &log, int committed) {
  json d = {{"kind", "evolve"},
            {"title", runName(ctx.dir)},
            {"dir", fs::absolute(ctx.dir).lexically_normal().string()},
            {"world", worldJson(ctx.world)},
            {"generations", generationsJson(log, gens)},
            {"committed", committed}};
  json motions = json::array(), gallery = json::array(), curves = json::array();
  for (const Generation *g : galleryOf(gens, ctx.galleryMax)) {
    json m = motionCached(*g, ctx.galleryFrames, false, galleryMotions);
    if (!m.is_null())
      motions.push_back(m);
    gallery.push_back({{"g", g->g},
                       {"id", g->bestId},
                       {"fitness", g->bestFitness},
                       {"motion", m.is_null() ? json() : json(motions.size() - 1)}});
    if (g->bestEntry->contains("losses"))
      curves.push_back({{"g", g->g}, {"id", g->bestId}, {"losses", (*g->bestEntry)["losses"]}});
  }
  d["gallery"] = gallery;
  d["curves"] = curves;
  if (!gens.empty()) {
    const Generation &last = gens.rbegin()->second;
    if (bestMotion.first != last.bestId) {
      std::map<uint64_t, json> one;
      bestMotion = {last.bestId, motionCached(last, ctx.bestFrames, true, one)};
    }
    if (!bestMotion.second.is_null()) {
      motions.push_back(bestMotion.second);
      d["best"] = motions.size() - 1;
    }
    d["lineage"] = lineageJson(last.bestId);
    d["best_id"] = last.bestId;
    d["best_fitness"] = last.bestFitness;
  }
  for (const Motion &m : ctx.extraMotions)
    motions.push_back(motionJson(m));
  d["extra"] = ctx.extraMotions.size();
  d["motions"] = motions;
  // MAP-Elites: the archive of the last committed generation (elites.json
  // is written before state.json, so it may be one generation ahead).
  const fs::path elites = ctx.dir / "elites.json";
  if (fs::exists(elites)) {
    try {
      json map = json::parse(evolve::readTextFile(elites));
      if (map.value("generation", -1) == committed)
        d["map"] = map;
    } catch (const std::exception &e) {
      missing.push_back(fmt::format("elites.json cannot be read ({})", e.what()));
    }
  }
  const fs::path resolved = ctx.dir / "resolved.evo";
  if (fs::exists(resolved))
    d["resolved"] = evolve::readTextFile(resolved);
  else
    missing.push_back("resolved.evo is missing");
  missing.insert(missing.end(), gaitNotes.begin(), gaitNotes.end());
  d["missing"] = missing;
  return d;
}

std::string RunReport::build() {
  Impl &m = *impl_;
  m.missing.clear();
  if (!fs::is_directory(m.ctx.dir))
    throw Error(fmt::format("'{}' is not a directory", m.ctx.dir.string()));
  if (!fs::exists(m.ctx.dir / "run.json"))
    m.missing.push_back("run.json is missing: this may not be an evoc run directory");
  std::vector<json> log;
  if (fs::exists(m.ctx.dir / "log.jsonl"))
    log = readLines(m.ctx.dir / "log.jsonl", m.missing);
  else
    m.missing.push_back("log.jsonl is missing: no generation has been logged");
  const int committed = m.readState();
  // Log lines past the commit point belong to a generation that a kill
  // interrupted; the page shows committed generations only.
  std::vector<json> shown;
  for (const json &r : log)
    if (r.is_object() && r.value("generation", -1) >= 0 && r.value("generation", -1) <= committed)
      shown.push_back(r);
  m.readGenerations(log, committed);
  return reportHtml(m.data(shown, committed));
}

fs::path RunReport::write() {
  std::string html = build();
  const fs::path out = impl_->ctx.dir / "report.html";
  evolve::writeFileAtomic(out, html);
  return out;
}

uint64_t RunReport::bestId() {
  if (impl_->gens.empty())
    build();
  if (impl_->gens.empty())
    throw Error(fmt::format("'{}' has no completed generation yet", impl_->ctx.dir.string()));
  return impl_->gens.rbegin()->second.bestId;
}

Motion RunReport::designMotion(uint64_t id, int maxFrames) {
  if (impl_->gens.empty())
    build();
  const Generation *g = impl_->generationOfDesign(id);
  if (!g)
    throw Error(fmt::format("design {} was never the best of a generation of '{}', so the run "
                            "holds no weights for it; the gallery of report.html lists the "
                            "designs it has",
                            id, impl_->ctx.dir.string()));
  return impl_->motionOf(*g, maxFrames, true);
}

} // namespace evoc::report
