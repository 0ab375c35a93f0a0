// Pictures: the gait strip (2D side views, 3D oblique views) and the fitness
// plot are well-formed SVG with the expected elements.
#include "TestSupport.h"

#include "evolve/bodies/CellBody.h"
#include "evolve/bodies/Lattice.h"
#include "evolve/record/RunDir.h"
#include "evolve/record/Svg.h"
#include "support/Error.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace evoc::evolve;

static size_t count(const std::string &s, const std::string &what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1))
    ++n;
  return n;
}

/// A 2D robot in the x-z plane of 3D, at y = 0.1.
static evoc::runtime::Robot lifted(const evoc::runtime::Robot &r) {
  evoc::runtime::Robot robot = r;
  robot.dim = 3;
  robot.points.clear();
  for (size_t i = 0; i < r.points.size(); i += 2)
    robot.points.insert(robot.points.end(), {r.points[i], 0.1, r.points[i + 1]});
  return robot;
}

TEST_CASE("svg: gait frames side by side", "[svg]") {
  LatticeBody b({6, 10});
  EvoRng rng(4);
  LatticeGenome g = b.sample(rng);
  auto robot = b.express(g);
  std::vector<GaitFrame> frames;
  for (int f = 0; f < 4; ++f) {
    GaitFrame fr{robot.points, {}, fmt::format("t = {}", f * 100)};
    for (int i = 0; i < robot.numPoints(); ++i) {
      fr.points[2 * i] += 0.03 * f + 0.01 * std::sin(f + i);
      fr.points[2 * i + 1] += 0.005 * std::cos(f * i);
    }
    if (f == 3)
      for (int s = 0; s < robot.numSprings(); ++s)
        fr.activation.push_back(std::sin(double(s)));
    frames.push_back(fr);
  }
  GaitStyle style;
  style.title = "a <gait>";
  std::string svg = renderGait(robot, frames, style);
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(count(svg, "<circle") == size_t(4 * robot.numPoints()));
  // springs + one ground line per frame
  CHECK(count(svg, "<line") == size_t(4 * robot.numSprings() + 4));
  CHECK(svg.find("t = 300") != std::string::npos);
  CHECK(svg.find("a &lt;gait&gt;") != std::string::npos);
  // Actuated springs at rest length are orange; the jittered frames are not.
  std::string rest = renderGait(robot, {GaitFrame{robot.points, {}, "rest"}});
  CHECK(count(rest, "rgb(230,140,20)") ==
        size_t(std::count_if(robot.springs.begin(), robot.springs.end(),
                             [](const auto &s) { return s.actuation != 0; })));
  CHECK(count(svg, "rgb(230,140,20)") < count(rest, "rgb(230,140,20)") * 4);
  frames[0].points.pop_back();
  CHECK_THROWS_AS(renderGait(robot, frames), evoc::Error);
  if (const char *out = std::getenv("EVOC_SVG_OUT")) { // for looking at it
    frames[0].points.push_back(robot.points.back());
    writeFileAtomic(std::string(out) + "/gait.svg", renderGait(robot, frames, style));
  }
}

TEST_CASE("svg: part outlines are light polygons under the springs", "[svg]") {
  // Two triangles sharing an edge, as two parts of a grammar body.
  evoc::runtime::Robot r;
  r.dim = 2;
  r.points = {0, 0.1, 0.1, 0.1, 0.05, 0.18, 0.15, 0.18};
  r.springs = {{0, 1, 0.1, 1e4, 0.1},
               {1, 2, 0.1, 1e4, 0},
               {0, 2, 0.1, 1e4, 0},
               {1, 3, 0.1, 1e4, 0},
               {2, 3, 0.1, 1e4, 0}};
  std::vector<GaitFrame> frames = {{r.points, {}, "a"}, {r.points, {}, "b"}};
  std::string plain = renderGait(r, frames);
  CHECK(count(plain, "<polygon") == 0);
  std::vector<PartOutline> parts = {{"left", {0, 1, 2}}, {"right<&>", {1, 3, 2}}};
  std::string svg = renderGait(r, frames, {}, parts);
  CHECK(count(svg, "<polygon class=\"part\"") == 4); // 2 parts x 2 frames
  CHECK(svg.find("<title>right&lt;&amp;&gt;</title>") != std::string::npos);
  // Under the springs: every polygon of a panel comes before its first line.
  size_t firstPolygon = svg.find("<polygon"), lastSpring = svg.rfind("stroke-width=\"2.5\"");
  CHECK(firstPolygon < svg.find("stroke-width=\"1.2\""));
  CHECK(svg.rfind("<polygon") < lastSpring);
  // The polygon's first vertex is point 0 where the panel draws it.
  double cx = 0, cy = 0;
  REQUIRE(std::sscanf(svg.c_str() + svg.find("<circle"), "<circle cx=\"%lf\" cy=\"%lf\"", &cx,
                      &cy) == 2);
  CHECK(svg.find(fmt::format("<polygon class=\"part\" points=\"{:.2f},{:.2f} ", cx, cy)) !=
        std::string::npos);
  // An outline naming a point the robot lacks is an error, not a crash.
  parts[1].points.push_back(7);
  CHECK_THROWS_WITH(renderGait(r, frames, {}, parts), Catch::Contains("names point 7"));
}

namespace {

/// A text element of a picture: its anchor position, font size and text.
struct Text {
  double x = 0, y = 0, size = 12;
  std::string anchor, text;
};

std::vector<Text> texts(const std::string &svg) {
  std::vector<Text> out;
  for (size_t at = svg.find("<text "); at != std::string::npos; at = svg.find("<text ", at + 1)) {
    const size_t close = svg.find('>', at), end = svg.find("</text>", at);
    const std::string tag = svg.substr(at, close - at);
    auto attr = [&](const std::string &name) {
      size_t p = tag.find(" " + name + "=\"");
      return p == std::string::npos
                 ? std::string()
                 : tag.substr(p + name.size() + 3,
                              tag.find('"', p + name.size() + 3) - (p + name.size() + 3));
    };
    Text t;
    t.x = std::stod(attr("x"));
    t.y = std::stod(attr("y"));
    if (!attr("font-size").empty())
      t.size = std::stod(attr("font-size"));
    t.anchor = attr("text-anchor");
    t.text = svg.substr(close + 1, end - close - 1);
    out.push_back(t);
  }
  return out;
}

/// The horizontal extent of a text at 0.58 em per character (sans-serif
/// digits are 0.556 em; lower case narrower).
std::pair<double, double> extent(const Text &t) {
  const double w = 0.58 * t.size * double(t.text.size());
  const double left = t.anchor == "middle" ? t.x - w / 2 : t.anchor == "end" ? t.x - w : t.x;
  return {left, left + w};
}

double svgWidth(const std::string &svg) { return std::stod(svg.substr(svg.find("width=\"") + 7)); }

/// A 2D triangle with these corners: one actuated spring, two passive.
evoc::runtime::Robot triangle(std::vector<double> points) {
  evoc::runtime::Robot r;
  r.dim = 2;
  r.points = std::move(points);
  r.springs = {{0, 1, 0.05, 1e4, 0.1}, {1, 2, 0.05, 1e4, 0}, {0, 2, 0.05, 1e4, 0}};
  return r;
}

} // namespace

TEST_CASE("svg: a frame's figure is how far the points' mean x moved, as the loss measures",
          "[svg]") {
  // A triangle whose top corner moves 0.03 to the right: the leftmost point
  // stays (it said "dx = +0.000"), the mean x moves 0.01.
  evoc::runtime::Robot r = triangle({0, 0.1, 0.05, 0.1, 0.025, 0.14});
  GaitFrame moved{r.points, {}, "t = 10"};
  moved.points[4] += 0.03;
  for (int dim : {2, 3}) {
    evoc::runtime::Robot robot = r;
    std::vector<GaitFrame> frames = {{r.points, {}, "t = 0"}, moved};
    if (dim == 3) { // the same, lifted into 3D (y = 0.1 for every point)
      robot.dim = 3;
      robot.points.clear();
      for (auto &fr : frames) {
        std::vector<double> p3;
        for (size_t i = 0; i < fr.points.size(); i += 2)
          p3.insert(p3.end(), {fr.points[i], 0.1, fr.points[i + 1]});
        fr.points = p3;
      }
      robot.points = frames[0].points;
    }
    std::string svg = renderGait(robot, frames);
    INFO(dim << "D");
    CHECK(svg.find(">moved +0.0000</text>") != std::string::npos);
    CHECK(svg.find(">moved +0.0100</text>") != std::string::npos);
    CHECK(svg.find("points' mean x") != std::string::npos); // the caption says what it is
  }
}

TEST_CASE("svg: a small robot's labels neither overlap nor leave the picture", "[svg]") {
  // One triangle (0.05 wide, 45 px): narrower than its frames' labels.
  evoc::runtime::Robot r = triangle({0.1, 0.1, 0.15, 0.1, 0.125, 0.143});
  std::vector<GaitFrame> frames;
  for (int f = 0; f < 4; ++f) {
    GaitFrame fr{r.points, {}, fmt::format("t = {}", f * 133)};
    for (size_t i = 0; i < fr.points.size(); i += 2)
      fr.points[i] += 0.01 * f;
    frames.push_back(fr);
  }
  GaitStyle style;
  style.title = "generation 12: best design 345 (fitness 0.060123 = max(-loss))";
  std::vector<PartOutline> parts = {{"voxel_rigid", {0, 1, 2}}};
  for (bool withParts : {false, true}) {
    std::string svg = renderGait(r, frames, style, withParts ? parts : std::vector<PartOutline>{});
    const double W = svgWidth(svg);
    std::vector<Text> all = texts(svg);
    REQUIRE(all.size() >= 8);
    for (size_t i = 0; i < all.size(); ++i) {
      auto [l, rr] = extent(all[i]);
      INFO(all[i].text);
      CHECK(l >= 0);
      CHECK(rr <= W);
      for (size_t j = i + 1; j < all.size(); ++j) {
        if (std::fabs(all[i].y - all[j].y) > 0.9 * std::max(all[i].size, all[j].size))
          continue; // different lines
        auto [l2, r2] = extent(all[j]);
        INFO(all[j].text);
        CHECK((rr <= l2 || r2 <= l));
      }
    }
  }
}

TEST_CASE("svg: each part kind has its own colour, named in a legend", "[svg]") {
  // Three squares side by side: rigid, soft, rigid.
  evoc::runtime::Robot r;
  r.dim = 2;
  r.points = {0, 0.1, 0.05, 0.1, 0.1, 0.1, 0.15, 0.1, 0, 0.15, 0.05, 0.15, 0.1, 0.15, 0.15, 0.15};
  for (int c = 0; c < 3; ++c)
    r.springs.push_back({c, c + 1, 0.05, 1e4, 0});
  std::vector<PartOutline> parts = {
      {"voxel_rigid", {0, 1, 5, 4}}, {"voxel_soft", {1, 2, 6, 5}}, {"voxel_rigid", {2, 3, 7, 6}}};
  for (int dim : {2, 3}) {
    const evoc::runtime::Robot robot = dim == 3 ? lifted(r) : r;
    std::string svg = renderGait(robot, {GaitFrame{robot.points, {}, "rest"}}, {}, parts);
    INFO(dim << "D");
    // The part polygons' stroke colours, in order.
    std::vector<std::string> colours;
    for (size_t at = svg.find("<polygon class=\"part\""); at != std::string::npos;
         at = svg.find("<polygon class=\"part\"", at + 1)) {
      size_t p = svg.find("stroke=\"", at) + 8;
      colours.push_back(svg.substr(p, svg.find('"', p) - p));
    }
    REQUIRE(colours.size() == 3);
    CHECK(colours[0] != colours[1]); // rigid and soft differ
    CHECK(colours[0] == colours[2]); // the same kind, the same colour
    CHECK(count(svg, "class=\"part-key\"") == 2);
    CHECK(svg.find(">voxel_rigid</text>") != std::string::npos);
    CHECK(svg.find(">voxel_soft</text>") != std::string::npos);
  }
}

TEST_CASE("svg: a particle body's particles in their actuator group's colour", "[svg]") {
  // Six particles: two passive, two of actuator 0, two of actuator 2.
  evoc::runtime::Robot r;
  r.dim = 2;
  r.points = {0, 0.1, 0.02, 0.1, 0, 0.12, 0.02, 0.12, 0.04, 0.1, 0.04, 0.12};
  r.actuators = {-1, -1, 0, 0, 2, 2};
  for (int dim : {2, 3}) {
    const evoc::runtime::Robot robot = dim == 3 ? lifted(r) : r;
    INFO(dim << "D");
    std::string svg = renderGait(robot, {GaitFrame{robot.points, {}, "rest"}});
    std::vector<std::string> fills;
    for (size_t at = svg.find("<circle"); at != std::string::npos;
         at = svg.find("<circle", at + 1)) {
      size_t p = svg.find("fill=\"", at) + 6;
      fills.push_back(svg.substr(p, svg.find('"', p) - p));
    }
    // Each group's swatch colour fills exactly its two particles.
    std::vector<std::string> swatches;
    for (size_t at = svg.find("class=\"part-key\""); at != std::string::npos;
         at = svg.find("class=\"part-key\"", at + 1)) {
      size_t p = svg.find("fill=\"", at) + 6;
      swatches.push_back(svg.substr(p, svg.find('"', p) - p));
    }
    REQUIRE(swatches.size() == 3);
    for (const auto &c : swatches)
      CHECK(std::count(fills.begin(), fills.end(), c) == 2);
    CHECK(svg.find(">particles:</text>") != std::string::npos);
    CHECK(count(svg, "class=\"part-key\"") == 3);
    for (const char *name : {">passive</text>", ">actuator 0</text>", ">actuator 2</text>"})
      CHECK(svg.find(name) != std::string::npos);
  }
}

TEST_CASE("svg: animated gait", "[svg]") {
  LatticeBody b({6, 10});
  EvoRng rng(8);
  auto robot = b.express(b.sample(rng));
  std::vector<GaitFrame> frames;
  for (int f = 0; f < 30; ++f) {
    GaitFrame fr{robot.points, {}, ""};
    for (int i = 0; i < robot.numPoints(); ++i)
      fr.points[2 * i] += 0.004 * f + 0.004 * std::sin(0.5 * f + i);
    frames.push_back(fr);
  }
  std::string svg = renderGaitAnimation(robot, frames, 3);
  CHECK(count(svg, "<line") == size_t(robot.numSprings() + 1));
  CHECK(count(svg, "<circle") == size_t(robot.numPoints()));
  // Per spring: x1, y1, x2, y2, stroke; per point: cx, cy; 30 values each.
  CHECK(count(svg, "<animate ") == size_t(5 * robot.numSprings() + 2 * robot.numPoints()));
  auto at = svg.find("attributeName=\"x1\" values=\"");
  REQUIRE(at != std::string::npos);
  auto end = svg.find('"', at + 28);
  CHECK(std::count(svg.begin() + long(at), svg.begin() + long(end), ';') == 29);
  CHECK(svg.find("dur=\"3.000s\"") != std::string::npos);
  CHECK_THROWS_AS(renderGaitAnimation(robot, {}), evoc::Error);
  if (const char *out = std::getenv("EVOC_SVG_OUT"))
    writeFileAtomic(std::string(out) + "/gait_anim.svg", svg);
}

namespace {

/// A 3D robot of two springs, one 0.1 toward the viewer's side (-y) and
/// actuated, one 0.1 away from it (+y) and passive (`swap` exchanges sides).
evoc::runtime::Robot twoBars(bool swap) {
  evoc::runtime::Robot r;
  r.dim = 3;
  const double nearY = swap ? 0.1 : -0.1, farY = -nearY;
  r.points = {0, nearY, 0.1, 0.05, nearY, 0.1, 0, farY, 0.1, 0.05, farY, 0.1};
  r.springs = {{0, 1, 0.05, 1e4, 0.1}, {2, 3, 0.05, 1e4, 0}};
  return r;
}

} // namespace

TEST_CASE("svg: 3D gaits in an oblique view, drawn far to near over the ground plane",
          "[svg][3d]") {
  // Two cube cells: 12 points, 50 springs, 10 faces on the surface.
  evoc::body::CellBodySpec spec;
  spec.name = "Two";
  spec.dim = 3;
  spec.origin = {0.1, 0.1, 0.1};
  spec.cells = {{0, 0, evoc::body::CellTemplate::Leg, 0},
                {1, 0, evoc::body::CellTemplate::None, 0}};
  CellBody body(spec, 0.1);
  EvoRng rng(1);
  Phenotype ph = body.express(*body.sample(rng));
  const auto &robot = ph.robot;
  std::vector<GaitFrame> frames;
  for (int f = 0; f < 3; ++f) {
    GaitFrame fr{robot.points, {}, fmt::format("t = {}", f)};
    for (int i = 0; i < robot.numPoints(); ++i) {
      fr.points[size_t(3 * i)] += 0.02 * f;
      fr.points[size_t(3 * i + 2)] += 0.004 * std::sin(f + i);
    }
    frames.push_back(fr);
  }
  GaitStyle style;
  style.title = "cubes";
  std::string svg = renderGait(robot, frames, style, ph.outlines);
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(count(svg, "class=\"ground\"") == 3); // one ground plane per frame
  CHECK(count(svg, "<line") == size_t(3 * robot.numSprings()));
  CHECK(count(svg, "class=\"shadow\"") == size_t(3 * robot.numPoints()));
  CHECK(count(svg, "<circle") == size_t(6 * robot.numPoints()));
  CHECK(count(svg, "<polygon class=\"part\"") == 3 * 10);
  CHECK(svg.find("3D, seen from") != std::string::npos);
  CHECK(svg.find(">moved +0.0400</text>") != std::string::npos);
  // A vertical edge stays vertical on screen, its top above its bottom.
  evoc::runtime::Robot post;
  post.dim = 3;
  post.points = {0.3, 0.2, 0.1, 0.3, 0.2, 0.2};
  post.springs = {{0, 1, 0.1, 1e4, 0}};
  std::string p = renderGait(post, {GaitFrame{post.points, {}, ""}});
  double x1 = 0, y1 = 0, x2 = 0, y2 = 0;
  REQUIRE(std::sscanf(p.c_str() + p.find("<line"),
                      "<line x1=\"%lf\" y1=\"%lf\" x2=\"%lf\" y2=\"%lf\"", &x1, &y1, &x2,
                      &y2) == 4);
  CHECK(x1 == Approx(x2));
  CHECK(y2 < y1);
  // Painter's order: the far (+y) spring is drawn before the near one.
  for (bool swap : {false, true}) {
    evoc::runtime::Robot r = twoBars(swap);
    std::string two = renderGait(r, {GaitFrame{r.points, {}, ""}});
    size_t passive = two.find("stroke=\"#999\""), actuated = two.find("stroke=\"rgb(230,140,20)\"");
    REQUIRE(passive != std::string::npos);
    REQUIRE(actuated != std::string::npos);
    CHECK((passive < actuated) == !swap);
  }
  // A frame of the wrong size, and animations (2D only), are errors.
  frames[1].points.pop_back();
  CHECK_THROWS_AS(renderGait(robot, frames), evoc::Error);
  frames[1].points.push_back(0);
  CHECK_THROWS_WITH(renderGaitAnimation(robot, frames), Catch::Contains("2D robots only"));
  if (const char *out = std::getenv("EVOC_SVG_OUT"))
    writeFileAtomic(std::string(out) + "/gait3d.svg", svg);
}

TEST_CASE("svg: terrain under the gait, a profile in 2D and a shaded field in 3D",
          "[svg][terrain]") {
  // 2D: a ladder on a hill; the ground is the profile's polyline, its rows
  // inside the panel drawn at their heights.
  evoc::runtime::Robot r = triangle({0.2, 0.1, 0.25, 0.1, 0.225, 0.14});
  evoc::runtime::GroundShape terrain;
  terrain.profile = {{0, 0.1}, {0.22, 0.1}, {0.24, 0.3}, {0.5, 0.1}};
  GaitStyle style;
  style.terrain = &terrain;
  style.pixelsPerUnit = 100; // 1 px = 0.01
  std::string svg = renderGait(r, {GaitFrame{r.points, {}, ""}}, style);
  CHECK(count(svg, "<polyline class=\"ground\"") == 1);
  CHECK(count(svg, "<polygon class=\"terrain\"") == 1);
  // The hill's top (0.3) is in view: the picture's height covers it.
  double h = 0;
  REQUIRE(std::sscanf(svg.c_str() + svg.find("height=\""), "height=\"%lf\"", &h) == 1);
  CHECK(h > (0.3 - 0.1) * 100);
  std::string anim = renderGaitAnimation(r, {GaitFrame{r.points, {}, ""}}, 2, style);
  CHECK(count(anim, "<polyline class=\"ground\"") == 1);
  // Without the terrain: the flat line as before.
  CHECK(count(renderGait(r, {GaitFrame{r.points, {}, ""}}), "<polyline") == 0);

  // 3D: a cube over a field sloping up in x; the ground is 8 x 8 quads,
  // shaded, higher (nearer the top of the picture) where the field is.
  evoc::runtime::Robot c;
  c.dim = 3;
  for (int k = 0; k < 8; ++k)
    for (double v : {0.1 + 0.05 * (k & 1), 0.1 + 0.05 * ((k >> 1) & 1), 0.2 + 0.05 * (k >> 2)})
      c.points.push_back(v);
  c.springs = {{0, 7, 0.087, 1e4, 0}};
  evoc::runtime::GroundShape field;
  field.field.xs = {0, 1};
  field.field.ys = {0, 1};
  field.field.h = {0.1, 0.4, 0.1, 0.4};
  GaitStyle s3;
  s3.terrain = &field;
  std::string f3 = renderGait(c, {GaitFrame{c.points, {}, ""}}, s3);
  CHECK(count(f3, "class=\"ground\"") == 64);
  CHECK(count(f3, "class=\"shadow\"") == 8);
  std::string flat = renderGait(c, {GaitFrame{c.points, {}, ""}});
  CHECK(count(flat, "class=\"ground\"") == 1);
  CHECK(f3 != flat);
  if (const char *out = std::getenv("EVOC_SVG_OUT")) {
    writeFileAtomic(std::string(out) + "/terrain2d.svg", svg);
    writeFileAtomic(std::string(out) + "/terrain3d.svg", f3);
  }
}

TEST_CASE("svg: fitness plot", "[svg]") {
  std::vector<FitnessPoint> pts;
  for (int g = 0; g < 30; ++g)
    pts.push_back({g, 0.01 * g, 0.02 * g + 0.1, 0.03 * g + 0.2 + 0.01 * std::sin(g)});
  std::string svg = renderFitnessPlot(pts, "fitness");
  CHECK(count(svg, "<path") == 3);
  CHECK(count(svg, "<circle") == 90);
  CHECK(svg.find(">median<") != std::string::npos);
  // Degenerate inputs still render.
  CHECK(renderFitnessPlot({}).find("</svg>") != std::string::npos);
  CHECK(renderFitnessPlot({{0, 1, 1, 1}}).find("<path") != std::string::npos);
  if (const char *out = std::getenv("EVOC_SVG_OUT"))
    writeFileAtomic(std::string(out) + "/fitness.svg", svg);
}
