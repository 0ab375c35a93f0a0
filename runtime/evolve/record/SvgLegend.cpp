// What the 2D and 3D gait pictures write alike: the picture's head and keys,
// the figure under each frame, the part colours and their legend, the
// springs' and points' shapes, and the text widths the layout reserves so
// that no label overlaps another or leaves the picture.
#include "evolve/record/GaitLook.h"
#include "evolve/record/SvgCommon.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace evoc::evolve::svg {

namespace {

/// A filled circle: a point or a particle.
std::string circle(double x, double y, double r, const std::string &fill) {
  return fmt::format("<circle cx=\"{:.2f}\" cy=\"{:.2f}\" r=\"{}\" fill=\"{}\"/>\n", x, y, r, fill);
}

} // namespace

// 0.62 em is wider than the average glyph of the usual sans-serif fonts
// (digits are 0.556 em in Helvetica and Arial, lower case less), so text laid
// out with this estimate has room in any of them.
double textWidth(const std::string &s, double size) {
  size_t glyphs = 0;
  for (unsigned char c : s)
    glyphs += (c & 0xC0) != 0x80; // UTF-8: count lead bytes only
  return 0.62 * size * double(glyphs);
}

double meanX(const runtime::Robot &robot, const GaitFrame &fr) {
  const int n = robot.numPoints();
  if (n == 0)
    return 0;
  double sum = 0;
  for (int i = 0; i < n; ++i)
    sum += fr.points[size_t(robot.dim * i)];
  return sum / n;
}

std::string movedLabel(double moved) { return fmt::format("moved {:+.4f}", moved); }

const char *movedCaption() {
  return "moved: change of the points' mean x since the first frame (what "
         "losses/displacement.evo measures)";
}

const char *springKey() {
  return "actuated springs: orange at rest, red contracted, blue extended; grey: passive";
}

FrameLabels frameLabels(const runtime::Robot &robot, const std::vector<GaitFrame> &frames) {
  FrameLabels out;
  const double mean0 = frames.empty() ? 0 : meanX(robot, frames[0]);
  for (size_t f = 0; f < frames.size(); ++f) {
    out.labels.push_back(frames[f].label.empty() ? fmt::format("frame {}", f) : frames[f].label);
    out.moved.push_back(movedLabel(meanX(robot, frames[f]) - mean0));
    out.width = std::max({out.width, textWidth(out.labels[f], 12), textWidth(out.moved[f], 12)});
  }
  return out;
}

// Each part kind gets its own colour: its material's when it has one, else
// the palette's (grammar bodies: by the part's name, so a voxel grammar's
// rigid, soft and actuated voxels differ). Names are sorted, so the same
// parts get the same colours in every frame and generation.
} // namespace evoc::evolve::svg

namespace evoc::evolve {

namespace {

const char *const kPalette[] = {"#4e79a7", "#59a14f", "#b07aa1", "#edc948", "#76b7b2",
                                "#ff9da7", "#9c755f", "#f28e2b", "#e15759", "#bab0ac"};
constexpr size_t kPaletteSize = sizeof kPalette / sizeof *kPalette;

} // namespace

std::map<std::string, std::string> partColours(const std::vector<PartOutline> &outlines) {
  std::map<std::string, std::string> out;
  for (const auto &o : outlines)
    out.emplace(o.part, o.colour);
  // Parts without a material colour take the palette's in name order.
  size_t i = 0;
  for (auto &[name, colour] : out)
    if (colour.empty())
      colour = kPalette[i++ % kPaletteSize];
  return out;
}

} // namespace evoc::evolve

namespace evoc::evolve::svg {

std::string pictureHead(double W, double H, const std::string &title) {
  std::string svg =
      fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
                  "viewBox=\"0 0 {:.1f} {:.1f}\" font-family=\"sans-serif\" font-size=\"12\">\n"
                  "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
                  W, H, W, H);
  if (!title.empty())
    svg += fmt::format("<text x=\"{:.1f}\" y=\"20\" text-anchor=\"middle\" "
                       "font-size=\"14\">{}</text>\n",
                       W / 2, escape(title));
  return svg;
}

std::string keyLines(double W, double y, const std::vector<std::string> &lines) {
  std::string svg;
  for (size_t i = 0; i < lines.size(); ++i)
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" "
                       "font-size=\"11\" fill=\"#555\">{}</text>\n",
                       W / 2, y + 14 * double(i), escape(lines[i]));
  return svg;
}

std::string springLine(double ax, double ay, double bx, double by, const std::string &colour,
                       bool actuated) {
  return fmt::format("<line x1=\"{:.2f}\" y1=\"{:.2f}\" x2=\"{:.2f}\" y2=\"{:.2f}\" "
                     "stroke=\"{}\" stroke-width=\"{}\"/>\n",
                     ax, ay, bx, by, colour, actuated ? look::kActuatedWidth : look::kPassiveWidth);
}

std::string pointDot(double x, double y) { return circle(x, y, look::kPointRadius, look::kPoint); }

std::string particleDot(double x, double y, const std::string &colour) {
  return circle(x, y, look::kPointRadius * 0.6, colour);
}

std::string panelCaption(double x, double y1, double y2, const std::string &label,
                         const std::string &moved) {
  return fmt::format("<text class=\"frame-label\" x=\"{0:.1f}\" y=\"{1:.1f}\" "
                     "text-anchor=\"middle\">{3}</text>\n<text class=\"frame-label\" "
                     "x=\"{0:.1f}\" y=\"{2:.1f}\" text-anchor=\"middle\">{4}</text>\n</g>\n",
                     x, y1, y2, escape(label), escape(moved));
}

std::string partLegend(const std::map<std::string, std::string> &colours, double width, double y,
                       double &height, const std::string &heading) {
  height = 0;
  if (colours.empty())
    return "";
  const double size = 11, rowH = 16, margin = 10;
  std::string out = fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\" "
                                "fill=\"#555\">{}</text>\n",
                                margin, y, escape(heading));
  double x = margin + textWidth(heading, size) + 8, row = 0;
  for (const auto &[name, colour] : colours) {
    const double w = 14 + textWidth(name, size) + 12;
    if (x > margin && x + w > width - margin) {
      x = margin;
      row += 1;
    }
    const double base = y + row * rowH;
    out += fmt::format("<rect class=\"part-key\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"10\" "
                       "height=\"10\" fill=\"{}\" fill-opacity=\"0.5\" stroke=\"{}\"/>"
                       "<text x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"11\">{}</text>\n",
                       x, base - 9, colour, colour, x + 14, base, escape(name));
    x += w;
  }
  height = (row + 1) * rowH;
  return out;
}

double partLegendWidth(const std::map<std::string, std::string> &colours,
                       const std::string &heading) {
  double w = 0;
  for (const auto &[name, colour] : colours)
    w = std::max(w, 14 + textWidth(name, 11) + 12);
  return colours.empty() ? 0 : 10 + textWidth(heading, 11) + 8 + w + 10;
}

std::map<std::string, std::string> particleColours(const runtime::Robot &robot) {
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < robot.actuators.size(); ++i)
    out.emplace(robot.actuators[i] < 0 ? "passive"
                                       : "actuator " + std::to_string(robot.actuators[i]),
                pointColour(robot, i));
  return out;
}

std::string pointColour(const runtime::Robot &robot, size_t point) {
  if (point >= robot.actuators.size())
    return look::kPoint;
  const int a = robot.actuators[point];
  return a < 0 ? look::kPassiveSpring : kPalette[size_t(a) % kPaletteSize];
}

} // namespace evoc::evolve::svg
