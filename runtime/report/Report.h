// A run's report: one self-contained HTML page (report.html) that shows what
// evolved and how it moves, built from the run directory's files and gaits
// recomputed from the saved weights; and the same gaits as video frames.
//
//   RunReport report(ctx);        // ctx: the run, its world, a trajectory fn
//   report.write();               // reads what is new, writes DIR/report.html
//
// Every generation's files are read once and kept, so `evoc run` can call
// write() after every generation without rereading the run.
#pragma once

#include "evolve/bodies/BodyModel.h"

#include "core/Robot.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace evoc::report {

/// point.x of `robot` under `params` (PARAMS.json entry) at `times`
/// (ascending steps), and with `outputs` the controller's output per spring at
/// each (empty when unknown), with `objects` the world's objects' centres at
/// each (empty without objects); may throw evoc::Error (the gait is then
/// left out).
using TrajectoryFn = std::function<std::vector<std::vector<double>>(
    const runtime::Robot &robot, const nlohmann::json &params, const std::vector<int64_t> &times,
    std::vector<std::vector<double>> *outputs, std::vector<std::vector<double>> *objects)>;

/// The world the gaits are drawn in.
struct World {
  int dim = 2;
  int upAxis = 1;
  double groundY = 0.1;
  runtime::GroundShape terrain; ///< a terrain (2D profile, 3D field); empty: flat
  int64_t steps = 1000;         ///< states per rollout
  double dt = 0.004;
};

/// One gait to animate: the robot's springs and its sampled point positions.
struct Motion {
  std::string label;
  runtime::Robot robot;
  std::vector<int64_t> times;              ///< the steps sampled
  std::vector<std::vector<double>> frames; ///< point.x at each time
  /// The controller's output per spring at each time, in [-1, 1] (empty:
  /// unknown; actuated springs are then coloured by their strain).
  std::vector<std::vector<double>> outputs;
  /// The body's parts (grammar bodies: BodyModel's outlines), drawn under
  /// the springs in their kind's colour (evolve::partColours); may be empty.
  std::vector<evolve::PartOutline> outlines;
  /// The world's movable objects' centres at each time (docs/language.md,
  /// "Objects"); empty: drawn where they start.
  std::vector<std::vector<double>> objects;
};

/// The steps a gait is sampled at: 0, k, 2k, ... and the last state, at most
/// `maxFrames` of them.
std::vector<int64_t> sampleTimes(int64_t steps, int maxFrames);

/// A motion as the page reads it: springs [a, b, rest, actuation], frames of
/// coordinates rounded to 1e-4 (as integers), and the times.
nlohmann::json motionJson(const Motion &m);

/// A run directory's name for a page title ("runs/x/" -> "x").
std::string runName(const std::filesystem::path &dir);

/// The world as the page reads it.
nlohmann::json worldJson(const World &w);

/// What a report is built from.
struct ReportContext {
  std::filesystem::path dir; ///< the run directory
  World world;
  std::shared_ptr<const evolve::BodyModel> model; ///< expresses genomes; may be null
  TrajectoryFn trajectory;                        ///< may be empty: rest poses only
  int bestFrames = 200;                           ///< frames of the best robot's animation
  int galleryFrames = 60;                         ///< frames of each gallery animation
  int galleryMax = 120; ///< gallery entries at most (evenly spread, last kept)
  /// Extra motions (e.g. one per validation command of a training run).
  std::vector<Motion> extraMotions;
};

/// An evolution run's report. Not thread-safe.
class RunReport {
public:
  explicit RunReport(ReportContext ctx);
  ~RunReport();
  RunReport(const RunReport &) = delete;
  RunReport &operator=(const RunReport &) = delete;

  /// Reads what changed in the run directory and returns the page.
  std::string build();
  /// build(), then writes DIR/report.html atomically; returns its path.
  std::filesystem::path write();
  /// What the last build found missing or damaged, one sentence each.
  const std::vector<std::string> &missing() const;
  /// The motion of design `id` as of its generation (its best-known weights);
  /// throws evoc::Error when the run has no such design with weights.
  Motion designMotion(uint64_t id, int maxFrames);
  /// The best design of the run so far (throws evoc::Error when none).
  uint64_t bestId();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// A page of motions without an evolution run: the first is the main
/// animation and, when there are several, each gets a player of its own
/// (a training run's validation cases). `plots`: line plots as the page
/// draws them ({"title", "xLabel", "yLabel", "series": [{"name", "pts":
/// [[x, y], ...]}]}); `missing`: notes shown on the page.
std::string motionsPage(const World &world, const std::vector<Motion> &motions,
                        const nlohmann::json &plots, const std::string &title,
                        const std::vector<std::string> &missing);

/// The page for one robot (`evoc render BEST.json`): its animation and, when
/// given, its learning curve.
std::string singleRobotPage(const World &world, const Motion &motion,
                            const std::vector<double> &losses, const std::string &title);

/// A line plot for motionsPage: one series of (index, value) per curve.
nlohmann::json curvePlot(
    const std::string &title, const std::string &xLabel, const std::string &yLabel,
    const std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>> &series);

/// The HTML page around a data document (ReportPage.cpp).
std::string reportHtml(const nlohmann::json &data);

} // namespace evoc::report
