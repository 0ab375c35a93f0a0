// Gait pictures of 3D robots: an orthographic view from a fixed direction
// (front left, above), everything drawn far to near (painter's order), part
// faces shaded by a fixed light, the ground (a plane, or a height field as
// shaded quads) with the points' shadows.
#include "evolve/record/GaitLook.h"
#include "evolve/record/SvgCommon.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>

namespace evoc::evolve::svg {

namespace {

using look::kLight;
using look::Vec;
using look::View;

double dot(const Vec &a, const Vec &b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

Vec pointOf(const GaitFrame &fr, int i) {
  return {fr.points[size_t(3 * i)], fr.points[size_t(3 * i + 1)], fr.points[size_t(3 * i + 2)]};
}

/// Convex hull of 2D points (monotone chain), counter-clockwise.
std::vector<std::array<double, 2>> hull(std::vector<std::array<double, 2>> p) {
  std::sort(p.begin(), p.end());
  p.erase(std::unique(p.begin(), p.end()), p.end());
  if (p.size() < 3)
    return p;
  auto cross = [](const auto &o, const auto &a, const auto &b) {
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
  };
  std::vector<std::array<double, 2>> h(2 * p.size());
  size_t k = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    while (k >= 2 && cross(h[k - 2], h[k - 1], p[i]) <= 0)
      --k;
    h[k++] = p[i];
  }
  for (size_t i = p.size() - 1, t = k + 1; i > 0; --i) {
    while (k >= t && cross(h[k - 2], h[k - 1], p[i - 1]) <= 0)
      --k;
    h[k++] = p[i - 1];
  }
  h.resize(k - 1);
  return h;
}

using Quad = std::array<Vec, 4>;

/// The ground under a frame: its points' x-y extent and a margin, one quad
/// on flat ground, 8 x 8 quads on the terrain's height field.
std::vector<Quad> groundQuads(const GaitFrame &fr, size_t n, const GaitStyle &style) {
  double lo[2] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  double hi[2] = {-lo[0], -lo[1]};
  for (size_t i = 0; i < n; ++i)
    for (int c = 0; c < 2; ++c) {
      lo[c] = std::min(lo[c], fr.points[3 * i + c]);
      hi[c] = std::max(hi[c], fr.points[3 * i + c]);
    }
  if (n == 0)
    lo[0] = lo[1] = hi[0] = hi[1] = 0;
  const double m = 0.04;
  const int cells = style.terrain && !style.terrain->field.empty() ? 8 : 1;
  auto corner = [&](int i, int j) {
    double x = lo[0] - m + (hi[0] - lo[0] + 2 * m) * i / cells;
    double y = lo[1] - m + (hi[1] - lo[1] + 2 * m) * j / cells;
    return Vec{x, y, groundAt(style, x, y, 3)};
  };
  std::vector<Quad> quads;
  for (int j = 0; j < cells; ++j)
    for (int i = 0; i < cells; ++i)
      quads.push_back({corner(i, j), corner(i + 1, j), corner(i + 1, j + 1), corner(i, j + 1)});
  return quads;
}

/// The faces of the box from corner a to corner z that face the viewer.
void boxFaces(const double a[3], const double z[3], const View &view, std::vector<Quad> &faces) {
  // Each axis: the face at its low end (normal -axis) and high end.
  for (int axis = 0; axis < 3; ++axis)
    for (int side = 0; side < 2; ++side) {
      Vec n{0, 0, 0};
      n[size_t(axis)] = side ? 1 : -1;
      if (dot(n, view.toViewer) <= 0)
        continue; // facing away
      const int u = (axis + 1) % 3, w = (axis + 2) % 3;
      Quad q;
      const double uv[4][2] = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
      for (int c = 0; c < 4; ++c) {
        Vec p;
        p[size_t(axis)] = side ? z[axis] : a[axis];
        p[size_t(u)] = uv[c][0] ? z[u] : a[u];
        p[size_t(w)] = uv[c][1] ? z[w] : a[w];
        q[size_t(c)] = p;
      }
      faces.push_back(q);
    }
}

/// The faces of the world's objects in frame `fr` (where they start when it
/// does not say) that face the viewer (docs/language.md, "Objects").
std::vector<Quad> objectFaces(const GaitStyle &style, const GaitFrame &fr, const View &view) {
  std::vector<Quad> faces;
  if (!style.terrain)
    return faces;
  const auto &objects = style.terrain->objects;
  for (size_t i = 0; i < objects.size(); ++i) {
    double a[3], z[3];
    for (size_t k = 0; k < 3; ++k) {
      const double half = (objects[i].hi[k] - objects[i].lo[k]) / 2;
      const double c = fr.objects.size() >= 3 * objects.size()
                           ? fr.objects[3 * i + k]
                           : (objects[i].lo[k] + objects[i].hi[k]) / 2;
      a[k] = c - half;
      z[k] = c + half;
    }
    boxFaces(a, z, view, faces);
  }
  return faces;
}

/// The faces of the scene's boxes that face the viewer, cut to the x-y
/// extent of the ground quads `ground` (a wall across the world is drawn
/// where the robot is).
std::vector<Quad> sceneFaces(const GaitStyle &style, const std::vector<Quad> &ground,
                             const View &view) {
  std::vector<Quad> faces;
  if (!style.terrain || style.terrain->boxes.empty() || ground.empty())
    return faces;
  double lo[2] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
  double hi[2] = {-lo[0], -lo[1]};
  for (const Quad &q : ground)
    for (const Vec &c : q)
      for (int k = 0; k < 2; ++k) {
        lo[k] = std::min(lo[k], c[size_t(k)]);
        hi[k] = std::max(hi[k], c[size_t(k)]);
      }
  for (const SceneBox &b : style.terrain->boxes) {
    const double a[3] = {std::max(b.lo[0], lo[0]), std::max(b.lo[1], lo[1]), b.lo[2]};
    const double z[3] = {std::min(b.hi[0], hi[0]), std::min(b.hi[1], hi[1]), b.hi[2]};
    if (!(a[0] < z[0] && a[1] < z[1]))
      continue;
    boxFaces(a, z, view, faces);
  }
  return faces;
}

/// One quad of the ground as an SVG polygon: the flat plane's colour, or on
/// a terrain shaded by its slope to the light.
template <class FX, class FY> std::string quadSvg(const Quad &q, bool terrain, FX X, FY Y) {
  std::string pts;
  for (const Vec &c : q)
    pts += fmt::format("{}{:.2f},{:.2f}", pts.empty() ? "" : " ", X(c), Y(c));
  if (!terrain)
    return fmt::format("<polygon class=\"ground\" points=\"{}\" fill=\"{}\" "
                       "stroke=\"{}\" stroke-width=\"1.5\"/>\n",
                       pts, look::kGroundPlane, look::kGround);
  // The normal of the quad's diagonals' plane.
  const Vec a{q[2][0] - q[0][0], q[2][1] - q[0][1], q[2][2] - q[0][2]};
  const Vec b{q[3][0] - q[1][0], q[3][1] - q[1][1], q[3][2] - q[1][2]};
  const Vec nrm{a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
  const double len = std::sqrt(dot(nrm, nrm));
  const double lit = len > 0 ? std::fabs(dot(nrm, kLight)) / len : 1;
  const int shade = int(std::lround(150 + 80 * lit));
  return fmt::format("<polygon class=\"ground\" points=\"{}\" fill=\"rgb({},{},{})\" "
                     "stroke=\"{}\" stroke-width=\"0.6\" stroke-opacity=\"0.6\"/>\n",
                     pts, shade, shade * 9 / 10, shade * 3 / 4, look::kGround);
}

/// One thing to draw, and how near it is.
struct Item {
  double depth;
  int order; ///< ties: faces, then springs, then points
  std::string svg;
};

/// A part outline in frame `fr`: a face of 3 or 4 points shaded by its
/// normal, a larger point set drawn as its silhouette (X, Y: the panel's
/// projection).
template <class PX, class PY>
Item outlineItem(const PartOutline &o, const std::string &colour, const GaitFrame &fr,
                 const View &view, const PX &X, const PY &Y) {
  Vec c{0, 0, 0}, nrm{0, 0, 0};
  for (size_t a = 0; a < o.points.size(); ++a) {
    const Vec p = pointOf(fr, o.points[a]);
    const Vec q = pointOf(fr, o.points[(a + 1) % o.points.size()]);
    for (int d = 0; d < 3; ++d)
      c[size_t(d)] += p[size_t(d)] / double(o.points.size());
    // Newell's normal of the polygon.
    nrm[0] += (p[1] - q[1]) * (p[2] + q[2]);
    nrm[1] += (p[2] - q[2]) * (p[0] + q[0]);
    nrm[2] += (p[0] - q[0]) * (p[1] + q[1]);
  }
  std::string pts, fill = colour;
  double opacity = 0.2;
  if (o.points.size() <= 4) {
    // The part's colour (SvgLegend.cpp), darker the more a face turns from
    // the light.
    const double len = std::sqrt(dot(nrm, nrm));
    const double lit = len > 0 ? std::fabs(dot(nrm, kLight)) / len : 0.5;
    unsigned rgb = 0;
    std::sscanf(colour.c_str(), "#%6x", &rgb);
    const double shade = 0.55 + 0.45 * lit;
    fill = fmt::format("rgb({},{},{})", std::lround((rgb >> 16 & 255) * shade),
                       std::lround((rgb >> 8 & 255) * shade), std::lround((rgb & 255) * shade));
    opacity = 0.4;
    for (int p : o.points)
      pts += fmt::format("{}{:.2f},{:.2f}", pts.empty() ? "" : " ", X(pointOf(fr, p)),
                         Y(pointOf(fr, p)));
  } else {
    std::vector<std::array<double, 2>> proj;
    for (int p : o.points)
      proj.push_back({X(pointOf(fr, p)), Y(pointOf(fr, p))});
    for (const auto &q : hull(proj))
      pts += fmt::format("{}{:.2f},{:.2f}", pts.empty() ? "" : " ", q[0], q[1]);
  }
  return {view.depth(c), 0,
          fmt::format("<polygon class=\"part\" points=\"{}\" fill=\"{}\" "
                      "fill-opacity=\"{:.2f}\" stroke=\"{}\" "
                      "stroke-opacity=\"0.6\" stroke-width=\"1\"><title>{}</title>"
                      "</polygon>\n",
                      pts, fill, opacity, colour, escape(o.part))};
}

/// The frames' shared vertical range and the widest frame's horizontal
/// extent (each panel is that wide).
struct Extent {
  double vlo, vhi, width;
};
Extent extent(const std::vector<GaitFrame> &frames, size_t n, const GaitStyle &style,
              const View &view) {
  double vlo = std::numeric_limits<double>::infinity(), vhi = -vlo, width = 0;
  for (const auto &fr : frames) {
    double ulo = std::numeric_limits<double>::infinity(), uhi = -ulo;
    auto take = [&](const Vec &p) {
      ulo = std::min(ulo, view.u(p));
      uhi = std::max(uhi, view.u(p));
      vlo = std::min(vlo, view.v(p));
      vhi = std::max(vhi, view.v(p));
    };
    for (size_t i = 0; i < n; ++i)
      take(pointOf(fr, int(i)));
    const auto ground = groundQuads(fr, n, style);
    for (const Quad &q : ground)
      for (const Vec &c : q)
        take(c);
    for (const Quad &q : sceneFaces(style, ground, view))
      for (const Vec &c : q)
        take(c);
    width = std::max(width, uhi - ulo);
  }
  if (frames.empty())
    vlo = vhi = 0;
  return {vlo, vhi, width};
}

} // namespace

std::string renderGait3d(const runtime::Robot &robot, const std::vector<GaitFrame> &frames,
                         const GaitStyle &style, const std::vector<PartOutline> &outlines) {
  const View view;
  const size_t n = size_t(robot.numPoints());
  const bool terrain = style.terrain && !style.terrain->field.empty();
  const Extent ext = extent(frames, n, style, view);
  const double vlo = ext.vlo, vhi = ext.vhi, width = ext.width;
  // Under each panel: the frame's label and how far the points' mean x
  // (the walking direction) moved, as in 2D (Svg.cpp).
  const FrameLabels under = frameLabels(robot, frames);
  const double k = style.pixelsPerUnit, pad = 16, top = style.title.empty() ? 10 : 30;
  const double panelW = std::max(width * k + 2 * pad, under.width + 16);
  const double margin = (panelW - width * k) / 2;
  const double bodyH = (vhi - vlo) * k;
  const double panelH = bodyH + 2 * pad + 32;
  // A grammar body's parts, or a particle body's actuator groups.
  const bool particles = !robot.actuators.empty();
  const std::string heading = particles ? "particles:" : "parts:";
  const auto colours = particles ? particleColours(robot) : partColours(outlines);
  const std::string viewKey = "3D, seen from the right, ahead and above (+x to the right)";
  const std::string springKey = svg::springKey();
  const double W = std::max({520.0, std::max(1.0, double(frames.size())) * panelW,
                             textWidth(style.title, 14) + 20, textWidth(viewKey, 11) + 20,
                             textWidth(springKey, 11) + 20, textWidth(movedCaption(), 11) + 20,
                             partLegendWidth(colours, heading)});
  // The panels centred in a picture made wider by its text.
  const double strip = (W - double(frames.size()) * panelW) / 2;
  double legendH = 0;
  const std::string legend = partLegend(colours, W, top + panelH + 14, legendH, heading);
  const double H = panelH + top + legendH + 46;
  std::string out = pictureHead(W, H, style.title);
  out += legend;
  // Three key lines: the view, the colours (as in 2D), the figures.
  out += keyLines(W, H - 32, {viewKey, springKey, movedCaption()});
  for (size_t f = 0; f < frames.size(); ++f) {
    const auto &fr = frames[f];
    double ulo = std::numeric_limits<double>::infinity();
    auto ground = groundQuads(fr, n, style);
    for (size_t i = 0; i < n; ++i)
      ulo = std::min(ulo, view.u(pointOf(fr, int(i))));
    for (const Quad &q : ground)
      for (const Vec &c : q)
        ulo = std::min(ulo, view.u(c));
    const auto boxes = sceneFaces(style, ground, view);
    const auto objects = objectFaces(style, fr, view);
    for (const auto *faces : {&boxes, &objects})
      for (const Quad &q : *faces)
        for (const Vec &c : q)
          ulo = std::min(ulo, view.u(c));
    const double ox = strip + f * panelW + margin, oy = top + pad;
    auto X = [&](const Vec &p) { return ox + (view.u(p) - ulo) * k; };
    auto Y = [&](const Vec &p) { return oy + (vhi - view.v(p)) * k; };
    out += fmt::format("<g>\n<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
                       "height=\"{:.1f}\" fill=\"none\" stroke=\"#ddd\"/>\n",
                       strip + f * panelW + 2, top, panelW - 4, panelH - 2);
    // The ground (below everything above it, so drawn first, its quads far
    // to near) and the points' shadows on it.
    std::stable_sort(ground.begin(), ground.end(), [&](const Quad &a, const Quad &b) {
      return view.depth(a[0]) + view.depth(a[2]) < view.depth(b[0]) + view.depth(b[2]);
    });
    for (const Quad &q : ground)
      out += quadSvg(q, terrain, X, Y);
    for (size_t i = 0; i < n; ++i) {
      Vec p = pointOf(fr, int(i));
      p[2] = groundAt(style, p[0], p[1], 3);
      out += fmt::format("<circle class=\"shadow\" cx=\"{:.2f}\" cy=\"{:.2f}\" r=\"2\" "
                         "fill=\"{}\" fill-opacity=\"0.5\"/>\n",
                         X(p), Y(p), look::kShadow);
    }
    std::vector<Item> items;
    // The scene's boxes: their faces toward the viewer, in the painter's
    // order with the robot's faces.
    auto face = [&](const Quad &q, const char *cls, const look::BoxLook &box) {
      std::string pts;
      Vec mid{0, 0, 0};
      for (const Vec &c : q) {
        pts += fmt::format("{}{:.2f},{:.2f}", pts.empty() ? "" : " ", X(c), Y(c));
        for (int k = 0; k < 3; ++k)
          mid[size_t(k)] += c[size_t(k)] / 4;
      }
      items.push_back({view.depth(mid), 0,
                       fmt::format("<polygon class=\"{}\" points=\"{}\" fill=\"{}\" "
                                   "stroke=\"{}\" stroke-width=\"1.2\"/>\n",
                                   cls, pts, box.fill, box.stroke)});
    };
    for (const Quad &q : boxes)
      face(q, "scene-box", look::kSceneBox);
    for (const Quad &q : objects) // the movable objects, likewise
      face(q, "object", look::kObject);
    // Part outlines: a face of 3 or 4 points is shaded by its normal; a
    // part given as a point set is drawn as its silhouette.
    for (const auto &o : outlines)
      if (o.points.size() >= 3)
        items.push_back(outlineItem(o, colours.at(o.part), fr, view, X, Y));
    for (size_t s = 0; s < robot.springs.size(); ++s) {
      const auto &sp = robot.springs[s];
      const Vec a = pointOf(fr, sp.a), b = pointOf(fr, sp.b);
      const Vec mid{(a[0] + b[0]) / 2, (a[1] + b[1]) / 2, (a[2] + b[2]) / 2};
      items.push_back(
          {view.depth(mid), 1,
           springLine(X(a), Y(a), X(b), Y(b), springColour(robot, fr, s), sp.actuation != 0)});
    }
    for (size_t i = 0; i < n; ++i) {
      const Vec p = pointOf(fr, int(i));
      items.push_back(
          {view.depth(p), 2,
           particles ? particleDot(X(p), Y(p), pointColour(robot, i)) : pointDot(X(p), Y(p))});
    }
    std::stable_sort(items.begin(), items.end(), [](const Item &a, const Item &b) {
      return a.depth != b.depth ? a.depth < b.depth : a.order < b.order;
    });
    for (const auto &it : items)
      out += it.svg;
    out += panelCaption(strip + f * panelW + panelW / 2, top + panelH - 22, top + panelH - 8,
                        under.labels[f], under.moved[f]);
  }
  return out + "</svg>\n";
}

} // namespace evoc::evolve::svg
