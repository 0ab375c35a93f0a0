// The report of a training run (evoc train; multi-task controllers): the
// body under each command of the validation grid with the run's weights,
// and the training and validation losses over iterations.
#include <filesystem>
#include <sstream>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "app/BodyModels.h"
#include "app/ReportSupport.h"
#include "core/FixedTrain.h"
#include "core/JsonIO.h"
#include "evolve/engine/EvoRng.h"
#include "evolve/record/RunDir.h"
#include "evolve/train/FixedTraining.h"
#include "ir/Names.h"
#include "report/Video.h"
#include "support/Error.h"

namespace evoc::app {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// (x, y) of `key` against `xKey` in a JSON-lines file; absent: none.
std::vector<std::pair<double, double>> series(const fs::path &file, const char *xKey,
                                              const char *key) {
  std::vector<std::pair<double, double>> out;
  if (!fs::exists(file))
    return out;
  std::istringstream in(evolve::readTextFile(file));
  for (std::string line; std::getline(in, line);) {
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_object() && j.contains(xKey) && j[xKey].is_number() && j.contains(key) &&
        j[key].is_number())
      out.emplace_back(j[xKey].get<double>(), j[key].get<double>());
  }
  return out;
}

runtime::Robot trainedRobot(const fs::path &dir, const sema::CheckedProgram &p, uint64_t seed,
                            std::vector<std::string> &notes) {
  if (fs::exists(dir / "robot.json"))
    return runtime::readRobotsFile((dir / "robot.json").string(), p.world.dim).at(0);
  notes.push_back("robot.json is missing (a run of an older evoc): the body is drawn again "
                  "from the seed, as evoc train does without --robot");
  auto model = bodyModel(p);
  evolve::EvoRng rng(seed);
  return model->express(*model->sample(rng)).robot;
}

} // namespace

fs::path writeTrainReport(const fs::path &dir, const Session &s, const runtime::ModuleInfo &info,
                          const runtime::TrainOptions &train, const std::string &video,
                          int64_t videoCase, std::vector<std::string> &notes) {
  const sema::CheckedProgram &p = s.program();
  if (!fs::exists(dir / "weights.json"))
    throw Error(fmt::format("'{}' holds no weights.json yet (no checkpoint of the training was "
                            "written), so there is no controller to draw",
                            dir.string()));
  runtime::Robot robot = trainedRobot(dir, p, train.seed, notes);
  auto sets = runtime::readParamsFile((dir / "weights.json").string());
  if (sets.size() != 1)
    throw Error(fmt::format("{}/weights.json holds {} parameter sets; a training run has one",
                            dir.string(), sets.size()));
  runtime::FixedTrainer trainer(info, s.executable(), robot, train);
  trainer.setParams(sets[0]);
  const report::World world = reportWorld(p, train);
  std::vector<report::Motion> motions;
  const auto times = report::sampleTimes(train.steps, 150);
  const int64_t cases = p.commands.gridCases();
  for (int64_t c = 0; c < cases; ++c)
    motions.push_back({fmt::format("validation case {}: {}", c,
                                   evolve::validationCaseName(p.commands, train.steps, c).first),
                       robot, times, trainer.caseTrajectory(c, ir::names::kPositions, times)});
  if (cases == 0) { // with the controller's outputs, which colour the actuators
    report::Motion m{"the trained body", robot, times, {}};
    const std::string outputField = controllerOutputField(p);
    m.frames =
        runtime::trajectory(info, s.executable(), robot, sets[0], train, ir::names::kPositions,
                            times, outputField.empty() ? nullptr : &m.outputs, outputField);
    motions.push_back(std::move(m));
  }
  if (!video.empty()) {
    const int64_t c = videoCase < 0 ? 0 : videoCase;
    if (c >= int64_t(motions.size()))
      throw Error(fmt::format("--design {}: this training run has validation cases 0 to {}", c,
                              motions.size() - 1));
    report::writeVideo(world, motions[size_t(c)], video);
    return video;
  }
  json plots = json::array();
  plots.push_back(report::curvePlot("training loss (batch mean) over iterations", "iteration",
                                    "loss",
                                    {{"loss", series(dir / "log.jsonl", "iteration", "loss")}}));
  auto v = series(dir / "validation.jsonl", "iteration", "total");
  if (!v.empty())
    plots.push_back(report::curvePlot("validation loss (mean over the grid)", "iteration", "loss",
                                      {{"total", v}}));
  if (!fs::exists(dir / "state.json"))
    notes.push_back("state.json is missing: the training has not checkpointed yet");
  const std::string title = report::runName(dir) + " (training run)";
  const fs::path out = dir / "report.html";
  evolve::writeFileAtomic(out, report::motionsPage(world, motions, plots, title, notes));
  return out;
}

} // namespace evoc::app
