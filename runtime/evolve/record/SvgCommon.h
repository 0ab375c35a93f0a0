// What the 2D and 3D gait pictures share (runtime/evolve/record/Svg.cpp,
// SvgLegend.cpp): text escaping, spring and part colours, the figure under
// each frame and text widths for the layout. Internal to the pictures.
#pragma once

#include "evolve/bodies/BodyModel.h"
#include "evolve/record/Svg.h"

#include "core/Robot.h"

#include <map>
#include <string>
#include <vector>

namespace evoc::evolve::svg {

/// `s` with <, > and & escaped for SVG text.
std::string escape(const std::string &s);

/// Spring s's colour in a frame: grey when passive, else by the frame's
/// controller output (when it has one) or by its strain relative to its
/// actuation amplitude (orange at rest length, red contracted, blue
/// extended). Works in the robot's dimension.
std::string springColour(const runtime::Robot &robot, const GaitFrame &fr, size_t s);

/// An estimate of the width in pixels of `s` in a sans-serif font of `size`
/// pixels, generous enough that text laid out with it never collides.
double textWidth(const std::string &s, double size);

/// The points' mean horizontal position (x) in a frame.
double meanX(const runtime::Robot &robot, const GaitFrame &fr);
/// The figure under a frame: "moved +0.0123", the change of meanX since the
/// first frame; movedCaption() says so in the picture.
std::string movedLabel(double moved);
const char *movedCaption();
/// The legend line of springColour's colours.
const char *springKey();

/// What is written under each panel: the frame's label ("frame N" when it
/// has none) and its movedLabel, and the widest of them at 12 px.
struct FrameLabels {
  std::vector<std::string> labels, moved;
  double width = 0;
};
FrameLabels frameLabels(const runtime::Robot &robot, const std::vector<GaitFrame> &frames);

/// The legend of `colours` (`heading`, then a swatch and name each) in rows
/// no wider than `width`, the first row's baseline at y; `height` gets the
/// height of its rows. Empty for no parts.
std::string partLegend(const std::map<std::string, std::string> &colours, double width, double y,
                       double &height, const std::string &heading = "parts:");
/// The width partLegend needs to fit any single entry on a row.
double partLegendWidth(const std::map<std::string, std::string> &colours,
                       const std::string &heading = "parts:");

/// A particle body's groups (Robot::actuators): "passive" and "actuator K",
/// each with its colour; empty for a body of springs. pointColour gives a
/// point's: its group's for a particle, kPoint otherwise.
std::map<std::string, std::string> particleColours(const runtime::Robot &robot);
std::string pointColour(const runtime::Robot &robot, size_t point);

/// A picture's opening: the <svg> element W x H on white, and the title
/// centred at the top when there is one.
std::string pictureHead(double W, double H, const std::string &title);
/// Grey 11 px lines of text centred at W / 2, the first's baseline at y,
/// 14 px apart (the keys under a picture).
std::string keyLines(double W, double y, const std::vector<std::string> &lines);

/// The shapes both pictures draw: a spring from (ax, ay) to (bx, by) in
/// `colour`, thicker when actuated; a point; and a panel's two caption lines
/// (label, moved) centred at x, closing the panel's group.
std::string springLine(double ax, double ay, double bx, double by, const std::string &colour,
                       bool actuated);
std::string pointDot(double x, double y);
/// A particle: a smaller dot in its group's colour.
std::string particleDot(double x, double y, const std::string &colour);
std::string panelCaption(double x, double y1, double y2, const std::string &label,
                         const std::string &moved);

/// Throws evoc::Error unless every frame has dim x points coordinates and
/// every outline names points of the robot.
void checkFrames(const runtime::Robot &robot, const std::vector<GaitFrame> &frames,
                 const std::vector<PartOutline> &outlines = {});

/// The ground's height under horizontal position (x, y) (y unused in 2D).
double groundAt(const GaitStyle &style, double x, double y, int dim);

/// The ground of a 2D picture between xa and xb: the flat line, or the
/// terrain profile's rows in between and its heights at the ends.
std::vector<std::pair<double, double>> groundLine(const GaitStyle &style, double xa, double xb);

/// Raises the top yhi of a 2D picture to the tops of the scene's boxes over
/// [xa, xb], so that they are drawn whole above the ground.
void widenForScene(const GaitStyle &style, double xa, double xb, double &ylo, double &yhi);

/// renderGait for a 3D robot (runtime/evolve/record/Svg3d.cpp): a fixed oblique
/// view from the right, ahead and above, parts and springs drawn far to near,
/// faces shaded by their slope to a fixed light, and the ground plane under
/// each frame with the points' shadows on it.
std::string renderGait3d(const runtime::Robot &robot, const std::vector<GaitFrame> &frames,
                         const GaitStyle &style, const std::vector<PartOutline> &outlines);

} // namespace evoc::evolve::svg
