// SVG rendering of gaits and fitness curves (plain text, no dependencies).
#include "evolve/record/Svg.h"

#include "evolve/record/GaitLook.h"
#include "evolve/record/SvgCommon.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace evoc::evolve {

/// How far beside the body (in world units) an object still widens a 2D
/// gait panel to show it.
constexpr double kObjectsInView = 0.3;

namespace svg {

std::string escape(const std::string &s) {
  std::string o;
  for (char c : s) {
    if (c == '<')
      o += "&lt;";
    else if (c == '>')
      o += "&gt;";
    else if (c == '&')
      o += "&amp;";
    else
      o += c;
  }
  return o;
}

std::string springColour(const runtime::Robot &robot, const GaitFrame &fr, size_t s) {
  const auto &sp = robot.springs[s];
  if (sp.actuation == 0)
    return look::kPassiveSpring;
  const double length = look::springLength(&fr.points[size_t(robot.dim * sp.a)],
                                           &fr.points[size_t(robot.dim * sp.b)], robot.dim);
  const double output = s < fr.activation.size() ? fr.activation[s] : NAN;
  return look::css(
      look::at(look::kSpringRamp, look::springValue(length, sp.rest, sp.actuation, output)));
}

void checkFrames(const runtime::Robot &robot, const std::vector<GaitFrame> &frames,
                 const std::vector<PartOutline> &outlines) {
  if (robot.dim != 2 && robot.dim != 3)
    throw Error("gait pictures are drawn for 2D and 3D robots only");
  const size_t need = size_t(robot.dim * robot.numPoints());
  for (size_t f = 0; f < frames.size(); ++f)
    if (frames[f].points.size() != need)
      throw Error(fmt::format("gait frame {} has {} coordinates; the robot has {} "
                              "points, so it needs {}",
                              f, frames[f].points.size(), robot.numPoints(), need));
  for (const auto &o : outlines)
    for (int p : o.points)
      if (p < 0 || p >= robot.numPoints())
        throw Error(fmt::format("the outline of part '{}' names point {}, but the robot has "
                                "{} points",
                                o.part, p, robot.numPoints()));
}

double groundAt(const GaitStyle &style, double x, double y, int dim) {
  const double p[3] = {x, y, 0};
  return style.terrain ? style.terrain->heightUnder(p, dim, style.groundY) : style.groundY;
}

std::vector<std::pair<double, double>> groundLine(const GaitStyle &style, double xa, double xb) {
  std::vector<std::pair<double, double>> line{{xa, groundAt(style, xa, 0, 2)}};
  if (style.terrain)
    for (const auto &[x, h] : style.terrain->profile)
      if (x > xa && x < xb)
        line.push_back({x, h});
  line.push_back({xb, groundAt(style, xb, 0, 2)});
  return line;
}

void widenForScene(const GaitStyle &style, double xa, double xb, double &ylo, double &yhi) {
  if (style.terrain)
    for (const SceneBox &b : style.terrain->boxes)
      if (b.hi[0] > xa && b.lo[0] < xb)
        yhi = std::max({yhi, ylo, b.hi[1]});
}

/// The scene's boxes (2D) over [xa, xb] as rectangles, cut to that range and
/// above `bottom` (screen coordinates).
template <class FX, class FY>
std::string sceneSvg(const GaitStyle &style, double xa, double xb, FX X, FY Y, double bottom) {
  std::string out;
  if (style.terrain)
    for (const SceneBox &b : style.terrain->boxes) {
      const double l = std::max(b.lo[0], xa), r = std::min(b.hi[0], xb);
      if (l < r)
        out += fmt::format("<rect class=\"scene-box\" x=\"{:.1f}\" y=\"{:.1f}\" "
                           "width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\" "
                           "stroke=\"{}\" stroke-width=\"{}\"/>\n",
                           X(l), Y(b.hi[1]), X(r) - X(l),
                           std::max(0.0, std::min(Y(b.lo[1]), bottom) - Y(b.hi[1])),
                           look::kSceneBox.fill, look::kSceneBox.stroke, look::kSceneBox.width);
    }
  return out;
}

/// Where the world's object `i` is in 2D frame `fr` (where it starts when the
/// frame does not say): {x0, y0, x1, y1}.
std::array<double, 4> objectRect(const GaitStyle &style, const GaitFrame &fr, size_t i) {
  const auto &objects = style.terrain->objects;
  const WorldObject &o = objects[i];
  std::array<double, 4> r{};
  for (size_t k = 0; k < 2; ++k) {
    const double half = (o.hi[k] - o.lo[k]) / 2;
    const double c =
        fr.objects.size() >= 2 * objects.size() ? fr.objects[2 * i + k] : (o.lo[k] + o.hi[k]) / 2;
    r[k] = c - half;
    r[k + 2] = c + half;
  }
  return r;
}

/// The world's movable objects (2D) in frame `fr` over [xa, xb], as
/// rectangles cut to that range.
template <class FX, class FY>
std::string objectsSvg(const GaitStyle &style, const GaitFrame &fr, double xa, double xb, FX X,
                       FY Y) {
  std::string out;
  if (!style.terrain)
    return out;
  for (size_t i = 0; i < style.terrain->objects.size(); ++i) {
    const auto b = objectRect(style, fr, i);
    const double l = std::max(b[0], xa), r = std::min(b[2], xb);
    if (l < r)
      out += fmt::format("<rect class=\"object\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
                         "height=\"{:.1f}\" fill=\"{}\" stroke=\"{}\" "
                         "stroke-width=\"{}\"><title>object {}</title></rect>\n",
                         X(l), Y(b[3]), X(r) - X(l), Y(b[1]) - Y(b[3]), look::kObject.fill,
                         look::kObject.stroke, look::kObject.width, i);
  }
  return out;
}

/// An SVG polyline of the ground between xa and xb (screen coordinates by X
/// and Y), filled below down to `bottom` when it is a terrain, and the
/// scene's boxes on it.
template <class FX, class FY>
std::string groundSvg(const GaitStyle &style, double xa, double xb, FX X, FY Y, double bottom) {
  const auto line = groundLine(style, xa, xb);
  if (line.size() == 2 && line[0].second == line[1].second)
    return fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" "
                       "stroke=\"{}\" stroke-width=\"{}\"/>\n",
                       X(xa), Y(line[0].second), X(xb), Y(line[1].second), look::kGround,
                       look::kGroundWidth) +
           sceneSvg(style, xa, xb, X, Y, bottom);
  std::string pts;
  for (const auto &[x, h] : line)
    pts += fmt::format("{}{:.1f},{:.1f}", pts.empty() ? "" : " ", X(x), Y(h));
  return fmt::format("<polygon class=\"terrain\" points=\"{} {:.1f},{:.1f} {:.1f},{:.1f}\" "
                     "fill=\"{}\" stroke=\"none\"/>\n<polyline class=\"ground\" "
                     "points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"/>\n",
                     pts, X(xb), bottom, X(xa), bottom, look::kTerrainFill, pts, look::kGround,
                     look::kGroundWidth) +
         sceneSvg(style, xa, xb, X, Y, bottom);
}

} // namespace svg

using svg::checkFrames;
using svg::escape;
using svg::springColour;

std::string renderGait(const runtime::Robot &robot, const std::vector<GaitFrame> &frames,
                       const GaitStyle &style, const std::vector<PartOutline> &outlines) {
  checkFrames(robot, frames, outlines);
  if (robot.dim == 3)
    return svg::renderGait3d(robot, frames, style, outlines);
  const size_t n = size_t(robot.numPoints());
  // Shared vertical range; per-panel horizontal range (the body's width).
  // A panel shows x from its frame's leftmost point (`left`) - margin to
  // + width + margin.
  double ylo = style.groundY, yhi = style.groundY, width = 0;
  std::vector<double> left(frames.size(), 0.0);
  for (size_t f = 0; f < frames.size(); ++f) {
    const auto &fr = frames[f];
    double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo;
    for (size_t i = 0; i < n; ++i) {
      xlo = std::min(xlo, fr.points[2 * i]);
      xhi = std::max(xhi, fr.points[2 * i]);
      ylo = std::min(ylo, fr.points[2 * i + 1]);
      yhi = std::max(yhi, fr.points[2 * i + 1]);
    }
    // Objects near the body widen its panel to show them (a box it pushes).
    for (size_t i = 0; n > 0 && style.terrain && i < style.terrain->objects.size(); ++i) {
      const auto b = svg::objectRect(style, fr, i);
      if (b[0] < xhi + kObjectsInView && b[2] > xlo - kObjectsInView) {
        xlo = std::min(xlo, b[0]);
        xhi = std::max(xhi, b[2]);
      }
    }
    if (n > 0) {
      width = std::max(width, xhi - xlo);
      left[f] = xlo;
    }
  }
  // Under each panel: the frame's label, then how far the points' mean x
  // moved: the figure losses/displacement.evo makes its loss of, so that the
  // picture and the fitness agree (the leftmost point's displacement, shown
  // before, differs from it whenever the body changes shape).
  const svg::FrameLabels under = svg::frameLabels(robot, frames);
  const double k = style.pixelsPerUnit, pad = 24, top = style.title.empty() ? 10 : 30;
  // A panel is as wide as its body or its labels, whichever is wider (a
  // small robot's labels would overlap their neighbours'), the body centred.
  const double panelW = std::max(width * k + 2 * pad, under.width + 16);
  const double margin = (panelW - width * k) / 2;
  for (double xl : left) { // the terrain and the scene's boxes in view
    for (const auto &[x, h] : svg::groundLine(style, xl - margin / k, xl + width + margin / k)) {
      ylo = std::min(ylo, h);
      yhi = std::max(yhi, h);
    }
    svg::widenForScene(style, xl - margin / k, xl + width + margin / k, ylo, yhi);
  }
  if (style.terrain) // the objects' tops, wherever a frame has them
    for (const auto &fr : frames)
      for (size_t i = 0; i < style.terrain->objects.size(); ++i)
        yhi = std::max(yhi, svg::objectRect(style, fr, i)[3]);
  const double bodyH = (yhi - ylo) * k;
  const double panelH = bodyH + 2 * pad + 32;
  // A grammar body's parts, or a particle body's actuator groups.
  const bool particles = !robot.actuators.empty();
  const std::string heading = particles ? "particles:" : "parts:";
  const auto colours = particles ? svg::particleColours(robot) : partColours(outlines);
  const std::string springKey = svg::springKey();
  // As wide as every line of text in it, so that none is clipped.
  const double W = std::max(
      {430.0, std::max(1.0, double(frames.size())) * panelW, svg::textWidth(style.title, 14) + 20,
       svg::textWidth(springKey, 11) + 20, svg::textWidth(svg::movedCaption(), 11) + 20,
       svg::partLegendWidth(colours, heading)});
  // The panels centred in a picture made wider by its text.
  const double strip = (W - double(frames.size()) * panelW) / 2;
  double legendH = 0;
  const std::string legend = svg::partLegend(colours, W, top + panelH + 14, legendH, heading);
  const double H = panelH + top + legendH + 32;
  std::string svg = svg::pictureHead(W, H, style.title);
  svg += legend;
  svg += svg::keyLines(W, H - 18, {springKey, svg::movedCaption()});
  for (size_t f = 0; f < frames.size(); ++f) {
    const auto &fr = frames[f];
    const double xlo = left[f];
    const double ox = strip + f * panelW + margin, oy = top + pad;
    auto X = [&](double x) { return ox + (x - xlo) * k; };
    auto Y = [&](double y) { return oy + (yhi - y) * k; };
    svg += fmt::format("<g>\n<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
                       "height=\"{:.1f}\" fill=\"none\" stroke=\"#ddd\"/>\n",
                       strip + f * panelW + 2, top, panelW - 4, panelH - 2);
    svg += svg::groundSvg(style, xlo + (4 - margin) / k, xlo + (panelW - 4 - margin) / k, X, Y,
                          oy + bodyH + pad / 2);
    svg +=
        svg::objectsSvg(style, fr, xlo + (4 - margin) / k, xlo + (panelW - 4 - margin) / k, X, Y);
    // Part outlines first, so the springs draw over them; each part kind in
    // its own colour (the legend names them).
    for (const auto &o : outlines) {
      if (o.points.size() < 2)
        continue;
      std::string pts;
      for (int p : o.points)
        pts += fmt::format("{}{:.2f},{:.2f}", pts.empty() ? "" : " ", X(fr.points[2 * p]),
                           Y(fr.points[2 * p + 1]));
      const std::string &c = colours.at(o.part);
      svg += fmt::format("<polygon class=\"part\" points=\"{}\" fill=\"{}\" "
                         "fill-opacity=\"{}\" stroke=\"{}\" stroke-opacity=\"0.8\" "
                         "stroke-width=\"1\"><title>{}</title></polygon>\n",
                         pts, c, look::kPartOpacity, c, escape(o.part));
    }
    for (size_t s = 0; s < robot.springs.size(); ++s) {
      const auto &sp = robot.springs[s];
      svg += svg::springLine(X(fr.points[2 * sp.a]), Y(fr.points[2 * sp.a + 1]),
                             X(fr.points[2 * sp.b]), Y(fr.points[2 * sp.b + 1]),
                             springColour(robot, fr, s), sp.actuation != 0);
    }
    for (size_t i = 0; i < n; ++i)
      svg += particles ? svg::particleDot(X(fr.points[2 * i]), Y(fr.points[2 * i + 1]),
                                          svg::pointColour(robot, i))
                       : svg::pointDot(X(fr.points[2 * i]), Y(fr.points[2 * i + 1]));
    svg += svg::panelCaption(strip + f * panelW + panelW / 2, top + panelH - 22, top + panelH - 8,
                             under.labels[f], under.moved[f]);
  }
  return svg + "</svg>\n";
}

std::string renderGaitAnimation(const runtime::Robot &robot, const std::vector<GaitFrame> &frames,
                                double seconds, const GaitStyle &style) {
  checkFrames(robot, frames);
  if (robot.dim != 2)
    throw Error("gait animations are drawn for 2D robots only; a 3D robot's gait is a strip "
                "of frames (renderGait)");
  if (frames.empty())
    throw Error("an animation needs at least one frame");
  const size_t n = size_t(robot.numPoints());
  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo;
  double ylo = style.groundY, yhi = style.groundY;
  for (const auto &fr : frames)
    for (size_t i = 0; i < n; ++i) {
      xlo = std::min(xlo, fr.points[2 * i]);
      xhi = std::max(xhi, fr.points[2 * i]);
      ylo = std::min(ylo, fr.points[2 * i + 1]);
      yhi = std::max(yhi, fr.points[2 * i + 1]);
    }
  if (n == 0)
    xlo = xhi = 0;
  const double k = style.pixelsPerUnit, pad = 24, top = style.title.empty() ? 10 : 30;
  for (const auto &[x, h] : svg::groundLine(style, xlo - pad / k, xhi + pad / k)) {
    ylo = std::min(ylo, h);
    yhi = std::max(yhi, h);
  }
  svg::widenForScene(style, xlo - pad / k, xhi + pad / k, ylo, yhi);
  const double W = std::max(300.0, (xhi - xlo) * k + 2 * pad);
  const double H = (yhi - ylo) * k + 2 * pad + top;
  auto X = [&](double x) { return pad + (x - xlo) * k; };
  auto Y = [&](double y) { return top + pad + (yhi - y) * k; };
  const std::string timing = fmt::format(
      "dur=\"{:.3f}s\" repeatCount=\"indefinite\" calcMode=\"discrete\"", std::max(0.05, seconds));
  // values="v0;v1;..." of one attribute over the frames.
  auto values = [&](auto &&value) {
    std::string v;
    for (size_t f = 0; f < frames.size(); ++f)
      v += (f ? ";" : "") + value(frames[f]);
    return v;
  };
  auto num = [](double v) { return fmt::format("{:.2f}", v); };
  std::string svg =
      fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
                  "font-family=\"sans-serif\" font-size=\"12\">\n"
                  "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
                  W, H);
  if (!style.title.empty())
    svg += fmt::format("<text x=\"{:.1f}\" y=\"20\" text-anchor=\"middle\" "
                       "font-size=\"14\">{}</text>\n",
                       W / 2, escape(style.title));
  svg += svg::groundSvg(style, xlo - pad / k, xlo + (W - pad) / k, X, Y, H);
  for (size_t s = 0; s < robot.springs.size(); ++s) {
    const auto &sp = robot.springs[s];
    // Static attributes show frame 0 where SMIL does not run.
    const auto &f0 = frames[0].points;
    svg += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" "
                       "stroke-width=\"{}\">",
                       num(X(f0[2 * sp.a])), num(Y(f0[2 * sp.a + 1])), num(X(f0[2 * sp.b])),
                       num(Y(f0[2 * sp.b + 1])), springColour(robot, frames[0], s),
                       sp.actuation != 0 ? look::kActuatedWidth : look::kPassiveWidth);
    const char *attrs[4] = {"x1", "y1", "x2", "y2"};
    for (int c = 0; c < 4; ++c) {
      int pt = c < 2 ? sp.a : sp.b;
      bool isX = c % 2 == 0;
      svg += fmt::format("<animate attributeName=\"{}\" values=\"{}\" {}/>", attrs[c],
                         values([&](const GaitFrame &fr) {
                           double v = fr.points[2 * size_t(pt) + (isX ? 0 : 1)];
                           return num(isX ? X(v) : Y(v));
                         }),
                         timing);
    }
    svg += fmt::format("<animate attributeName=\"stroke\" values=\"{}\" {}/></line>\n",
                       values([&](const GaitFrame &fr) { return springColour(robot, fr, s); }),
                       timing);
  }
  for (size_t i = 0; i < n; ++i)
    svg += fmt::format(
        "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\">"
        "<animate attributeName=\"cx\" values=\"{}\" {}/>"
        "<animate attributeName=\"cy\" values=\"{}\" {}/></circle>\n",
        num(X(frames[0].points[2 * i])), num(Y(frames[0].points[2 * i + 1])), look::kPointRadius,
        look::kPoint, values([&](const GaitFrame &fr) { return num(X(fr.points[2 * i])); }), timing,
        values([&](const GaitFrame &fr) { return num(Y(fr.points[2 * i + 1])); }), timing);
  return svg + "</svg>\n";
}

// Round tick step for a range: 1, 2 or 5 times a power of ten.
static double niceStep(double range, int ticks) {
  double raw = range / std::max(1, ticks), p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw)
      return m * p;
  return 10 * p;
}

std::string renderLinePlot(const LinePlot &plot) {
  const double W = 640, H = 400, L = 70, R = 130, T = 36, B = 48;
  double glo = 0, ghi = 1, flo = 0, fhi = 1;
  bool first = true;
  for (const auto &s : plot.series)
    for (const auto &[x, y] : s.points) {
      if (first) {
        glo = ghi = x;
        flo = fhi = std::isfinite(y) ? y : 0;
        first = false;
      }
      glo = std::min(glo, x);
      ghi = std::max(ghi, x);
      if (std::isfinite(y)) {
        flo = std::min(flo, y);
        fhi = std::max(fhi, y);
      }
    }
  if (ghi <= glo)
    ghi = glo + 1;
  if (fhi <= flo) {
    fhi += 0.5 * std::max(1e-9, std::fabs(fhi));
    flo -= 0.5 * std::max(1e-9, std::fabs(flo));
  }
  double fpad = 0.05 * (fhi - flo);
  flo -= fpad;
  fhi += fpad;
  auto X = [&](double g) { return L + (g - glo) / (ghi - glo) * (W - L - R); };
  auto Y = [&](double v) { return T + (fhi - v) / (fhi - flo) * (H - T - B); };
  std::string svg =
      fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" "
                  "font-family=\"sans-serif\" font-size=\"12\">\n"
                  "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
                  "<text x=\"{}\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">{}</text>\n",
                  W, H, (L + W - R) / 2, escape(plot.title));
  double fs = niceStep(fhi - flo, 6);
  for (double v = std::ceil(flo / fs) * fs; v <= fhi; v += fs)
    svg += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" "
                       "stroke=\"#eee\"/><text x=\"{}\" y=\"{:.1f}\" "
                       "text-anchor=\"end\">{:.4g}</text>\n",
                       L, Y(v), W - R, Y(v), L - 6, Y(v) + 4, std::fabs(v) < fs * 1e-6 ? 0.0 : v);
  double gs = std::max(1.0, niceStep(ghi - glo, 8));
  for (double g = std::ceil(glo / gs) * gs; g <= ghi; g += gs)
    svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" "
                       "stroke=\"#999\"/><text x=\"{:.1f}\" y=\"{}\" "
                       "text-anchor=\"middle\">{:.0f}</text>\n",
                       X(g), H - B, X(g), H - B + 5, X(g), H - B + 18, g);
  svg += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" "
                     "stroke=\"#444\"/>\n",
                     L, T, W - L - R, H - T - B);
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", (L + W - R) / 2,
                     H - 10, escape(plot.xLabel));
  svg += fmt::format("<text x=\"16\" y=\"{}\" text-anchor=\"middle\" "
                     "transform=\"rotate(-90 16 {})\">{}</text>\n",
                     (T + H - B) / 2, (T + H - B) / 2, escape(plot.yLabel));
  static const char *palette[] = {"#d62728", "#1f77b4", "#7f7f7f", "#2ca02c",
                                  "#9467bd", "#ff7f0e", "#8c564b", "#e377c2"};
  for (size_t s = 0; s < plot.series.size(); ++s) {
    const LineSeries &ser = plot.series[s];
    const std::string colour = ser.colour.empty() ? palette[s % 8] : ser.colour;
    std::string path;
    for (const auto &[x, y] : ser.points) {
      if (!std::isfinite(y))
        continue;
      path += fmt::format("{}{:.1f},{:.1f} ", path.empty() ? "M" : "L", X(x), Y(y));
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\"/>\n", X(x),
                         Y(y), colour);
    }
    if (!path.empty())
      svg += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n", path,
                         colour);
    double ly = T + 14 + 20 * double(s);
    svg +=
        fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" "
                    "stroke-width=\"2\"/><text x=\"{}\" y=\"{}\">{}</text>\n",
                    W - R + 12, ly, W - R + 36, ly, colour, W - R + 42, ly + 4, escape(ser.name));
  }
  return svg + "</svg>\n";
}

std::string renderFitnessPlot(const std::vector<FitnessPoint> &pts, const std::string &title) {
  LinePlot plot{title, "generation", "fitness", {}};
  plot.series = {{"max", "#d62728", {}}, {"median", "#1f77b4", {}}, {"min", "#7f7f7f", {}}};
  for (const auto &p : pts) {
    plot.series[0].points.emplace_back(p.generation, p.max);
    plot.series[1].points.emplace_back(p.generation, p.median);
    plot.series[2].points.emplace_back(p.generation, p.min);
  }
  return renderLinePlot(plot);
}

} // namespace evoc::evolve
