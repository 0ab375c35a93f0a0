// What `evoc run` and `evoc render` share to draw a run's report: the world
// of a compiled experiment and gaits recomputed from saved weights.
#pragma once

#include "app/Session.h"
#include "codegen/Executable.h"
#include "core/Layout.h"
#include "core/Train.h"
#include "report/Report.h"
#include "sema/Program.h"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace evoc::app {

/// The world the report draws: dimension, up axis, ground (or terrain), steps, dt.
report::World reportWorld(const sema::CheckedProgram &p, const runtime::TrainOptions &train);

/// The field the controller writes ("spring.act"), "" without a controller.
std::string controllerOutputField(const sema::CheckedProgram &p);

/// point.x under saved weights (runtime::trajectory, the pictures' rollout)
/// and, when asked, the controller's output `outputField` at each sampled
/// step. `info` and `exe` must outlive the function.
report::TrajectoryFn reportTrajectory(const runtime::ModuleInfo &info,
                                      const codegen::Executable &exe, runtime::TrainOptions train,
                                      std::string outputField);

/// A run's experiment compiled again (CPU) for its report.
struct Experiment {
  std::unique_ptr<Session> session;
  std::unique_ptr<runtime::ModuleInfo> info;
  runtime::TrainOptions train;
  report::World world;
};

/// Compiles `source`: a run's resolved.evo (told by its header; its imports
/// dropped, its recorded --set options applied) or a .evo file. Returns
/// null, with a note, when it does not compile (diagnostics on stderr).
std::unique_ptr<Experiment> loadExperiment(const std::filesystem::path &source,
                                           std::vector<std::string> &notes);

/// The report of a training run (evoc train, TrainReport.cpp): one gait per
/// case of the validation grid under DIR/weights.json, the training loss and
/// the validation over iterations. Writes DIR/report.html, or with `video`
/// that video of case `videoCase` (< 0: case 0); returns the path written.
/// Appends what is missing to `notes`; throws evoc::Error when there is
/// nothing to draw.
std::filesystem::path writeTrainReport(const std::filesystem::path &dir, const Session &s,
                                       const runtime::ModuleInfo &info,
                                       const runtime::TrainOptions &train, const std::string &video,
                                       int64_t videoCase, std::vector<std::string> &notes);

} // namespace evoc::app
