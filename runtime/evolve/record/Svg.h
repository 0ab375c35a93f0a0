// Pictures of a run as standalone SVG: a robot at a few moments of its gait,
// side by side, and fitness (min / median / max) over generations.
#pragma once

#include "evolve/bodies/BodyModel.h"

#include "core/Robot.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace evoc::evolve {

/// One moment of a gait: point positions laid out like Robot::points, and
/// optionally each spring's controller output in [-1, 1] (empty = unknown).
struct GaitFrame {
  std::vector<double> points;
  std::vector<double> activation;
  std::string label; ///< e.g. "t = 250"; empty for none
  /// The world's objects' centres (dim each), empty: where they start
  /// (GaitStyle::terrain's objects; docs/language.md, "Objects").
  std::vector<double> objects = {};
};

/// Drawing options for renderGait.
struct GaitStyle {
  double groundY = 0.1; ///< height of the ground line (flat ground)
  /// A terrain to draw instead (its profile in 2D, its height field in 3D);
  /// null or empty: flat ground at groundY.
  const runtime::GroundShape *terrain = nullptr;
  double pixelsPerUnit = 900;
  std::string title;
};

/// A robot at each frame, panels left to right, each panel showing the
/// frame's horizontal offset from the first frame, the ground (a line in 2D;
/// in 3D a fixed oblique view from the right, ahead and above, drawn far to
/// near, with the ground plane, the points' shadows on it and shaded part
/// faces), passive
/// springs in grey and actuated springs coloured by their strain relative to
/// their actuation amplitude (orange at rest length, red contracted, blue
/// extended), or by the controller's output when a frame carries
/// activations. `outlines` (optional) draws each part of a grammar body as
/// a light polygon under its springs. Throws evoc::Error if a frame or an
/// outline does not match the robot.
std::string renderGait(const runtime::Robot &robot, const std::vector<GaitFrame> &frames,
                       const GaitStyle &style = {}, const std::vector<PartOutline> &outlines = {});

/// Each distinct part name of `outlines` -> the colour its parts are drawn
/// in ("#rrggbb", a fixed palette in sorted name order), in the gait
/// pictures and the run report alike.
std::map<std::string, std::string> partColours(const std::vector<PartOutline> &outlines);

/// The same robot as an animated SVG (SMIL; browsers play it): the frames
/// in turn, `seconds` per loop, in one view that spans the whole motion, so
/// the robot walks across it. Colours as renderGait. 2D robots only (a
/// fixed drawing order cannot follow a 3D robot's depth order); throws
/// evoc::Error for others.
std::string renderGaitAnimation(const runtime::Robot &robot, const std::vector<GaitFrame> &frames,
                                double seconds = 4, const GaitStyle &style = {});

/// One line of a plot: (x, y) points in order (non-finite y are skipped).
struct LineSeries {
  std::string name;
  std::string colour; ///< "" picks one from a fixed palette by position
  std::vector<std::pair<double, double>> points;
};
/// A line plot with axes, ticks and a legend.
struct LinePlot {
  std::string title, xLabel, yLabel;
  std::vector<LineSeries> series;
};
std::string renderLinePlot(const LinePlot &plot);

/// One generation's fitness summary for the plot.
struct FitnessPoint {
  int generation = 0;
  double min = 0, median = 0, max = 0;
};

/// A line plot of min / median / max fitness over generations, with axes,
/// ticks and a legend.
std::string renderFitnessPlot(const std::vector<FitnessPoint> &points,
                              const std::string &title = "fitness");

} // namespace evoc::evolve
