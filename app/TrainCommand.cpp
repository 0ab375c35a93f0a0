// `evoc train FILE` (and `evoc run` of a program with a `train` block): the
// command line of the training engine (evolve/train/FixedTraining.h, which owns
// the run directory, its log, checkpoints and resume): the options, the body
// trained, the trainer, and the report at the end.
#include <algorithm>
#include <cstdio>
#include <optional>

#include <nlohmann/json.hpp>

#include "app/BodyModels.h"
#include "app/Driver.h"
#include "app/ReportSupport.h"
#include "app/Session.h"
#include "core/FixedTrain.h"
#include "core/JsonIO.h"
#include "evolve/bodies/BodyModel.h"
#include "evolve/engine/EvoRng.h"
#include "evolve/train/FixedTraining.h"
#include "support/Error.h"

namespace evoc::app {

namespace {

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
    // Groups of `lanes` episodes of the batch run in one kernel call each
    // (docs/architecture.md, "Episodes in lanes").
    const int lanes = a.lanes > 0 ? a.lanes : runtime::kTrainLanes;
    std::unique_ptr<codegen::Executable> lanesExe =
        lanes > 1 && train.batch >= lanes ? s.lanesExecutable(lanes) : nullptr;
    runtime::FixedTrainer trainer(info, s.executable(), robot, train, lanesExe.get(), lanes);

    evolve::FixedTrainingConfig cfg;
    cfg.resume = !a.resume.empty();
    cfg.dir = cfg.resume ? a.resume : a.out.empty() ? defaultRunDir(opts.file) : a.out;
    cfg.resolved = resolvedSource("evoc train", opts, p);
    cfg.termNames = s.module().lossTerms;
    cfg.iterations = std::max<int64_t>(1, train.iterations);
    cfg.validateEvery = p.train.validateEvery;
    cfg.commands = p.commands;
    cfg.steps = p.world.steps;
    cfg.groundHeight = p.world.ground.height;
    cfg.terrain = p.world.ground.shape();
    evolve::runFixedTraining(cfg, trainer, robot);
    const char *dir = cfg.dir.c_str();
    std::printf("evoc train: %lld iterations; results: %s/log.jsonl, %s/validation.jsonl, "
                "%s/weights.json\n",
                (long long)cfg.iterations, dir, dir, dir);
    writeReportAtEnd(cfg.dir, s, info, train);
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
     "                [--lanes L] [options]\n"
     "  --out DIR          the run directory to create (default: runs/<file name>)\n"
     "  --resume DIR       continue the training in DIR from its last checkpoint\n"
     "  --robot R.json     train this one robot (ROBOTS.json format) instead of the file's\n"
     "                     fixed body\n"
     "  --backend B        cpu (default), interp or cuda\n"
     "  --threads N        worker threads (0: one per core)\n"
     "  --lanes L          CPU: run the batch L episodes per kernel call, in vector lanes\n"
     "                     (default 16; 1: one episode per call; results agree to rounding)"});
} // namespace

} // namespace evoc::app
