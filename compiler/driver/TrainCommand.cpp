// `evoc train FILE` (and `evoc run` of a program with a `train` block):
// trains one fixed body's controller, batch by batch, validating on the
// commands' grid, in a resumable run directory:
//   DIR/run.json, resolved.evo    as for evolution runs (RunDir)
//   DIR/log.jsonl                 one line per iteration: loss, terms, |g|
//   DIR/validation.jsonl          one line per validation: means per term
//   DIR/weights.json              the current weights (PARAMS.json format)
//   DIR/robot.json                the body trained (ROBOTS.json format)
//   DIR/validation.svg            the validation total over iterations
//   DIR/gaits/case_NN_*.svg       the gait under each validation case (at the end)
//   DIR/state.json                checkpoint (weights, optimiser, iteration,
//                                 continued episodes' states)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "core/Commands.h"
#include "core/FixedTrain.h"
#include "core/JsonIO.h"
#include "driver/BodyModels.h"
#include "driver/Driver.h"

#include "driver/ReportSupport.h"
#include "driver/Session.h"
#include "evolve/BodyModel.h"
#include "evolve/EvoRng.h"
#include "evolve/RunDir.h"
#include "evolve/Svg.h"
#include "ir/Names.h"
#include "support/Error.h"
#include <optional>

namespace evoc::driver {

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
  evolve::LinePlot plot{
      "validation loss (mean over the grid of commands)", "iteration", "loss", {}};
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
  return evolve::renderLinePlot(plot);
}

// gaits/case_NN_....svg: the body under each validation case's commands,
// at five moments, with the final weights (a side view in 2D, an oblique
// view in 3D).
void writeGaits(const evolve::RunDir &run, runtime::FixedTrainer &trainer,
                const runtime::Robot &robot, const sema::CheckedProgram &p) {
  const body::CommandSpec &spec = p.commands;
  if (spec.gridCases() == 0)
    return;
  std::filesystem::path dir = run.path() / "gaits";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw Error("cannot create '" + dir.string() + "': " + ec.message());
  const int64_t T = p.world.steps;
  const runtime::GroundShape terrain = p.world.ground.shape();
  std::vector<int64_t> times;
  for (int k = 0; k < 5; ++k)
    times.push_back(std::min<int64_t>(T - 1, k * (T - 1) / 4));
  times.erase(std::unique(times.begin(), times.end()), times.end());
  for (int64_t c = 0; c < spec.gridCases(); ++c) {
    auto xs = trainer.caseTrajectory(c, ir::names::kPositions, times);
    auto [label, file] = validationCaseName(spec, T, c);
    std::vector<evolve::GaitFrame> frames;
    for (size_t k = 0; k < xs.size(); ++k)
      frames.push_back({xs[k], {}, fmt::format("t = {}", times[k])});
    evolve::GaitStyle style;
    style.groundY = p.world.ground.height;
    style.terrain = &terrain;
    style.title = "validation case " + std::to_string(c) + ": " + label;
    evolve::writeFileAtomic(dir / (file + ".svg"), evolve::renderGait(robot, frames, style));
  }
}

// DIR/report.html once training is done; a report that fails is worth a
// warning, never the run.
void writeReportAtEnd(const std::string &dir, const Session &s, const runtime::ModuleInfo &info,
                      const runtime::TrainOptions &train) {
  std::vector<std::string> notes;
  try {
    std::string report = writeTrainReport(dir, s, info, train, "", -1, notes).string();
    std::printf("report: %s\n", report.c_str());
  } catch (const std::exception &e) {
    std::fprintf(stderr, "evoc train: warning: report.html not written: %s\n", e.what());
  }
}

} // namespace

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

namespace {

// The body `evoc train` trains: --robot's one robot, or the program's fixed
// body.
runtime::Robot trainedBody(const RunArgs &a, const sema::CheckedProgram &p, uint64_t seed) {
  if (!a.robot.empty()) {
    auto robots = runtime::readRobotsFile(a.robot, p.world.dim);
    if (robots.size() != 1)
      throw Error(a.robot + " holds " + std::to_string(robots.size()) + " robots; train takes one");
    return robots.front();
  }
  auto model = bodyModel(p);
  evolve::EvoRng rng(seed);
  return model->express(*model->sample(rng)).robot;
}

// Restores a training run from its state.json `st` (checked): the trainer's
// weights, optimiser and carried episodes, the log and validation lines so
// far; returns the iteration to continue from.
int64_t resumeTraining(const json &st, const std::string &dir, const std::string &resolved,
                       int64_t iterations, runtime::FixedTrainer &trainer, std::string &log,
                       std::string &vlog) {
  if (!st.is_object() || st.value("kind", "") != "train" || !st.contains("iteration") ||
      !st["iteration"].is_number_integer() || !st.contains("params") || !st.contains("optimizer") ||
      !st["optimizer"].is_array() || !st.contains("log") || !st["log"].is_string() ||
      !st.contains("validation") || !st["validation"].is_string())
    throw Error(dir + "/state.json is not the state of a training run (evoc train); it "
                      "may be damaged");
  if (st.value("text", std::string()) != resolved)
    throw Error(dir + " was started with another experiment (its resolved.evo differs); "
                      "resume it with the same file and --set options");
  const int64_t start = st["iteration"].get<int64_t>();
  if (start < 0 || start > iterations)
    throw Error(dir + "/state.json: iteration " + std::to_string(start) + " is outside 0.." +
                std::to_string(iterations));
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

} // namespace

int runTrainProgram(const CommonOptions &opts, const std::vector<std::string> &rest,
                    const Session *compiled) {
  RunArgs a;
  if (!parseRunArgs(rest, "evoc train", /*robot=*/true, a))
    return 2;
  try {
    std::optional<Session> own;
    if (!compiled)
      compiled = &own.emplace(opts, a.backend, /*requireExperiment=*/true);
    const Session &s = *compiled;
    if (!s.ok())
      return 1;
    const sema::CheckedProgram &p = s.program();
    if (!p.hasTrain) {
      std::fprintf(stderr,
                   "evoc train: error: %s has no 'train { ... }' block (an 'evolve' "
                   "experiment runs with evoc run)\n",
                   opts.file.c_str());
      return 1;
    }
    runtime::TrainOptions train = s.trainOptions();
    train.threads = a.threads;
    runtime::ModuleInfo info(s.module());
    const runtime::Robot robot = trainedBody(a, p, train.seed);
    const std::vector<std::string> &names = s.module().lossTerms;
    const int64_t iterations = std::max<int64_t>(1, train.iterations);
    const int64_t every = p.train.validateEvery;
    runtime::FixedTrainer trainer(info, s.executable(), robot, train);

    const bool resume = !a.resume.empty();
    const std::string dir = resume ? a.resume : a.out.empty() ? defaultRunDir(opts.file) : a.out;
    const std::string resolved = resolvedSource("evoc train", opts, p);
    evolve::RunDir run =
        resume ? evolve::RunDir::resume(dir, resolved) : evolve::RunDir::create(dir, resolved);
    if (resume) {
      run.lock();
      run.removeStaleTemporaries();
    }
    // The body trained, for `evoc render` (it may have come from --robot).
    if (!resume || !std::filesystem::exists(run.path() / "robot.json"))
      run.writeFile("robot.json",
                    json{{"robots", json::array({runtime::robotToJson(robot)})}}.dump());

    // The log and validation lines so far (a resume keeps those of the
    // completed iterations only).
    std::string log, vlog;
    int64_t start = 0;
    if (resume && run.hasState())
      start = resumeTraining(run.readState(), dir, resolved, iterations, trainer, log, vlog);
    const bool grid = p.commands.gridCases() > 0;
    auto validate = [&](int64_t it) {
      if (!grid)
        return;
      runtime::Validation v = trainer.validate();
      vlog += validationJson(it, names, v).dump() + "\n";
      std::string line =
          "validation at " + std::to_string(it) + ": total " + std::to_string(v.meanLoss);
      for (size_t k = 0; k < names.size() && k < v.meanTerms.size(); ++k)
        line += ", " + names[k] + " " + std::to_string(v.meanTerms[k]);
      std::printf("%s\n", line.c_str());
      std::fflush(stdout);
    };
    auto checkpoint = [&](int64_t done) {
      run.writeFile("log.jsonl", log);
      if (grid) {
        run.writeFile("validation.jsonl", vlog);
        run.writeFile("validation.svg", validationPlot(vlog, names));
      }
      json w = {{"params", json::array({runtime::paramSetToJson(trainer.params())})}};
      run.writeFile("weights.json", w.dump());
      json st = {{"kind", "train"},
                 {"iteration", done},
                 {"params", w["params"]},
                 {"optimizer", trainer.optimizer().save()},
                 {"log", log},
                 {"validation", vlog},
                 {"carry", trainer.carry().save()},
                 {"text", resolved}};
      run.writeState(st);
    };
    auto t0 = std::chrono::steady_clock::now();
    if (start == 0 && vlog.empty())
      validate(0);
    for (int64_t it = start; it < iterations; ++it) {
      runtime::BatchStep b = trainer.iterate(it);
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      json line = {{"iteration", it},         {"valid", b.valid},
                   {"loss", b.loss},          {"terms", termsJson(names, b.terms)},
                   {"grad_norm", b.gradNorm}, {"seconds", secs}};
      if (!b.valid) {
        line["error"] = b.error;
        log += line.dump() + "\n";
        checkpoint(it);
        throw Error("iteration " + std::to_string(it) + ": " + b.error +
                    "; the weights before it are in " + dir + "/weights.json");
      }
      log += line.dump() + "\n";
      bool last = it + 1 == iterations;
      if (last || (every > 0 && (it + 1) % every == 0))
        validate(it + 1);
      if (last || (it + 1) % 10 == 0 || (every > 0 && (it + 1) % every == 0)) {
        checkpoint(it + 1);
        std::printf("iteration %lld: batch loss %.6g (%.1f s)\n", (long long)(it + 1), b.loss,
                    secs);
        std::fflush(stdout);
      }
    }
    if (start >= iterations)
      checkpoint(iterations);
    writeGaits(run, trainer, robot, p);
    std::printf("evoc train: %lld iterations; results: %s/log.jsonl, %s/validation.jsonl, "
                "%s/weights.json\n",
                (long long)iterations, dir.c_str(), dir.c_str(), dir.c_str());
    writeReportAtEnd(dir, s, info, train);
    return 0;
  } catch (const Error &e) {
    std::fprintf(stderr, "evoc train: error: %s\n", e.what());
    return 1;
  } catch (const nlohmann::json::exception &e) {
    std::fprintf(stderr, "evoc train: error: a damaged file in the run directory: %s\n", e.what());
    return 1;
  }
}

namespace {
int runTrain(const std::vector<std::string> &args) {
  CommonOptions opts;
  if (!parseCommonOptions(args, opts))
    return 2;
  return runTrainProgram(opts, opts.rest);
}

[[maybe_unused]] bool registered = addSubcommand(
    {"train", "train one fixed body's controller (a 'train' block); resumable", runTrain,
     "train FILE.evo [--out DIR | --resume DIR] [--robot R.json] [--backend B] [--threads N]\n"
     "                [options]\n"
     "  --out DIR          the run directory to create (default: runs/<file name>)\n"
     "  --resume DIR       continue the training in DIR from its last checkpoint\n"
     "  --robot R.json     train this one robot (ROBOTS.json format) instead of the file's\n"
     "                     fixed body\n"
     "  --backend B        cpu (default), interp or cuda\n"
     "  --threads N        worker threads (0: one per core)"});
} // namespace

} // namespace evoc::driver
