// The training engine of `train { ... }` programs: the loop, its log and
// checkpoints, resume, and the validation pictures (FixedTraining.h).
#include "evolve/train/FixedTraining.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/Commands.h"
#include "core/JsonIO.h"
#include "evolve/record/RunDir.h"
#include "evolve/record/Svg.h"
#include "ir/Names.h"
#include "support/Error.h"

namespace evoc::evolve {

namespace {

using nlohmann::json;

json termsJson(const std::vector<std::string> &names, const std::vector<double> &v) {
  json j = json::object();
  for (size_t k = 0; k < names.size() && k < v.size(); ++k)
    j[names[k]] = v[k];
  return j;
}

json validationJson(int64_t iteration, const std::vector<std::string> &names,
                    const runtime::Validation &v) {
  json j = {{"iteration", iteration},
            {"valid", v.valid},
            {"total", v.meanLoss},
            {"terms", termsJson(names, v.meanTerms)}};
  return j;
}

// validation.svg: the grid's mean total and each term over iterations.
std::string validationPlot(const std::string &vlog, const std::vector<std::string> &names) {
  LinePlot plot{"validation loss (mean over the grid of commands)", "iteration", "loss", {}};
  plot.series.push_back({"total", "#000000", {}});
  for (const auto &n : names)
    plot.series.push_back({n, "", {}});
  for (size_t at = 0; at < vlog.size();) {
    size_t nl = vlog.find('\n', at);
    json j = json::parse(vlog.substr(at, nl - at));
    double it = double(j.value("iteration", 0));
    plot.series[0].points.emplace_back(it, j.value("total", 0.0));
    for (size_t k = 0; k < names.size(); ++k)
      if (j.contains("terms") && j["terms"].contains(names[k]))
        plot.series[k + 1].points.emplace_back(it, j["terms"][names[k]].get<double>());
    at = nl == std::string::npos ? vlog.size() : nl + 1;
  }
  return renderLinePlot(plot);
}

// gaits/case_NN_....svg: the body under each validation case's commands,
// at five moments, with the final weights (a side view in 2D, an oblique
// view in 3D).
void writeGaits(const FixedTrainingConfig &cfg, const RunDir &run, runtime::FixedTrainer &trainer,
                const runtime::Robot &robot) {
  const body::CommandSpec &spec = cfg.commands;
  if (spec.gridCases() == 0)
    return;
  std::filesystem::path dir = run.path() / "gaits";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw Error("cannot create '" + dir.string() + "': " + ec.message());
  const int64_t T = cfg.steps;
  std::vector<int64_t> times;
  for (int k = 0; k < 5; ++k)
    times.push_back(std::min<int64_t>(T - 1, k * (T - 1) / 4));
  times.erase(std::unique(times.begin(), times.end()), times.end());
  for (int64_t c = 0; c < spec.gridCases(); ++c) {
    auto xs = trainer.caseTrajectory(c, ir::names::kPositions, times);
    auto [label, file] = validationCaseName(spec, T, c);
    std::vector<GaitFrame> frames;
    for (size_t k = 0; k < xs.size(); ++k)
      frames.push_back({xs[k], {}, fmt::format("t = {}", times[k])});
    GaitStyle style;
    style.groundY = cfg.groundHeight;
    style.terrain = &cfg.terrain;
    style.title = "validation case " + std::to_string(c) + ": " + label;
    writeFileAtomic(dir / (file + ".svg"), renderGait(robot, frames, style));
  }
}

// Restores a training run from its state.json `st` (checked): the trainer's
// weights, optimiser and carried episodes, the log and validation lines so
// far; returns the iteration to continue from.
int64_t resumeTraining(const json &st, const FixedTrainingConfig &cfg,
                       runtime::FixedTrainer &trainer, std::string &log, std::string &vlog) {
  const std::string &dir = cfg.dir;
  if (!st.is_object() || st.value("kind", "") != "train" || !st.contains("iteration") ||
      !st["iteration"].is_number_integer() || !st.contains("params") || !st.contains("optimizer") ||
      !st["optimizer"].is_array() || !st.contains("log") || !st["log"].is_string() ||
      !st.contains("validation") || !st["validation"].is_string())
    throw Error(dir + "/state.json is not the state of a training run (evoc train); it "
                      "may be damaged");
  if (st.value("text", std::string()) != cfg.resolved)
    throw Error(dir + " was started with another experiment (its resolved.evo differs); "
                      "resume it with the same file and --set options");
  const int64_t start = st["iteration"].get<int64_t>();
  if (start < 0 || start > cfg.iterations)
    throw Error(dir + "/state.json: iteration " + std::to_string(start) + " is outside 0.." +
                std::to_string(cfg.iterations));
  json params = {{"params", st["params"]}};
  auto sets = runtime::parseParamsJson(params.dump(), dir + "/state.json");
  if (sets.size() != 1)
    throw Error(dir + "/state.json holds " + std::to_string(sets.size()) +
                " parameter sets; a training run has one");
  trainer.setParams(sets[0]);
  trainer.optimizer().load(st["optimizer"].get<std::vector<double>>());
  log = st["log"].get<std::string>();
  vlog = st["validation"].get<std::string>();
  if (st.contains("carry")) {
    if (!st["carry"].is_array())
      throw Error(dir + "/state.json: 'carry' is not a list of episode states");
    trainer.carry().load(st["carry"].get<std::vector<std::string>>());
  }
  return start;
}

/// One training run in progress: its directory, trainer, and the log and
/// validation lines so far.
class TrainingRun {
public:
  TrainingRun(const FixedTrainingConfig &cfg, runtime::FixedTrainer &trainer, RunDir &run)
      : cfg_(cfg), trainer_(trainer), run_(run), grid_(cfg.commands.gridCases() > 0) {}

  void run() {
    int64_t start = 0;
    if (cfg_.resume && run_.hasState())
      start = resumeTraining(run_.readState(), cfg_, trainer_, log_, vlog_);
    const int64_t every = cfg_.validateEvery;
    auto t0 = std::chrono::steady_clock::now();
    if (start == 0 && vlog_.empty())
      validate(0);
    for (int64_t it = start; it < cfg_.iterations; ++it) {
      runtime::BatchStep b = trainer_.iterate(it);
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      json line = {{"iteration", it},         {"valid", b.valid},
                   {"loss", b.loss},          {"terms", termsJson(cfg_.termNames, b.terms)},
                   {"grad_norm", b.gradNorm}, {"seconds", secs}};
      if (!b.valid) {
        line["error"] = b.error;
        log_ += line.dump() + "\n";
        checkpoint(it);
        throw Error("iteration " + std::to_string(it) + ": " + b.error +
                    "; the weights before it are in " + cfg_.dir + "/weights.json");
      }
      log_ += line.dump() + "\n";
      bool last = it + 1 == cfg_.iterations;
      if (last || (every > 0 && (it + 1) % every == 0))
        validate(it + 1);
      if (last || (it + 1) % 10 == 0 || (every > 0 && (it + 1) % every == 0)) {
        checkpoint(it + 1);
        say(fmt::format("iteration {}: batch loss {:.6g} ({:.1f} s)", it + 1, b.loss, secs));
      }
    }
    if (start >= cfg_.iterations)
      checkpoint(cfg_.iterations);
  }

private:
  void say(const std::string &line) const {
    if (!cfg_.progress)
      return;
    std::fprintf(cfg_.progress, "%s\n", line.c_str());
    std::fflush(cfg_.progress);
  }

  void validate(int64_t it) {
    if (!grid_)
      return;
    runtime::Validation v = trainer_.validate();
    vlog_ += validationJson(it, cfg_.termNames, v).dump() + "\n";
    std::string line =
        "validation at " + std::to_string(it) + ": total " + std::to_string(v.meanLoss);
    for (size_t k = 0; k < cfg_.termNames.size() && k < v.meanTerms.size(); ++k)
      line += ", " + cfg_.termNames[k] + " " + std::to_string(v.meanTerms[k]);
    say(line);
  }

  void checkpoint(int64_t done) {
    run_.writeFile("log.jsonl", log_);
    if (grid_) {
      run_.writeFile("validation.jsonl", vlog_);
      run_.writeFile("validation.svg", validationPlot(vlog_, cfg_.termNames));
    }
    json w = {{"params", json::array({runtime::paramSetToJson(trainer_.params())})}};
    run_.writeFile("weights.json", w.dump());
    json st = {{"kind", "train"},
               {"iteration", done},
               {"params", w["params"]},
               {"optimizer", trainer_.optimizer().save()},
               {"log", log_},
               {"validation", vlog_},
               {"carry", trainer_.carry().save()},
               {"text", cfg_.resolved}};
    run_.writeState(st);
  }

  const FixedTrainingConfig &cfg_;
  runtime::FixedTrainer &trainer_;
  RunDir &run_;
  const bool grid_;
  std::string log_, vlog_; // the log and validation lines so far
};

} // namespace

void runFixedTraining(const FixedTrainingConfig &cfg, runtime::FixedTrainer &trainer,
                      const runtime::Robot &robot) {
  RunDir run =
      cfg.resume ? RunDir::resume(cfg.dir, cfg.resolved) : RunDir::create(cfg.dir, cfg.resolved);
  if (cfg.resume) {
    run.lock();
    run.removeStaleTemporaries();
  }
  // The body trained, for `evoc render` (it may have come from --robot).
  if (!cfg.resume || !std::filesystem::exists(run.path() / "robot.json"))
    run.writeFile("robot.json",
                  json{{"robots", json::array({runtime::robotToJson(robot)})}}.dump());
  TrainingRun(cfg, trainer, run).run();
  writeGaits(cfg, run, trainer, robot);
}

std::pair<std::string, std::string> validationCaseName(const body::CommandSpec &spec, int64_t steps,
                                                       int64_t c) {
  runtime::CommandTable t = runtime::gridCommands(spec, steps, c);
  std::string label, file = fmt::format("case_{:02d}", c);
  for (size_t k = 0; k < spec.names.size(); ++k) {
    std::string value;
    for (int j = 0; j < spec.width(k); ++j)
      value += fmt::format("{}{:g}", j ? "," : "", t.values[size_t(spec.column(k) + j)]);
    label += fmt::format("{}{} = {}", k ? ", " : "", spec.names[k],
                         spec.width(k) > 1 ? "(" + value + ")" : value);
    file += fmt::format("_{}{}", spec.names[k], value);
  }
  return {label, file};
}

} // namespace evoc::evolve
