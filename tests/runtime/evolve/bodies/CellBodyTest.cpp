// Fixed bodies of square and cube cells: the six 2D designs of
// stdlib/bodies/fang/ and the five 3D designs of stdlib/bodies/fang3d/
// (Fang et al. 2022) through the real checker and CellBody, against their
// point / spring / actuated counts (docs/multitask.md), Alpaca's first points and
// spring order, a cube's corner and spring order and templates, and the
// BodyModel contract of a body that does not evolve.
#include "evolve/bodies/CellBody.h"

#include "sema/Program.h"
#include "support/Diagnostics.h"
#include "support/Error.h"
#include "support/SourceManager.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <set>

using namespace evoc;

namespace {

/// Checks `text` as the file tests/runtime/evolve/bodies/fang.evo; fails the test on errors.
std::optional<sema::CheckedProgram> check(const std::string &text) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  sema::CheckOptions opts;
  opts.ignoreEnv = true;
  int f = sources.addBuffer(std::string(EVOC_SOURCE_DIR) + "/tests/runtime/evolve/bodies/fang.evo",
                            text);
  auto p = sema::checkBuffer(f, opts, sources, diags);
  for (const auto &l : diags.headlines())
    UNSCOPED_INFO(l);
  CHECK(diags.headlines().empty());
  return p;
}

/// The design `name` of stdlib/bodies/fang/`file`.evo as the checker builds it.
body::CellBodySpec fangBody(const std::string &name, const std::string &file) {
  auto p = check("import \"bodies/fang/" + file +
                 ".evo\";\n"
                 "world { dim = 2; ground = flat(height = 0.1, friction = 1.0); }\n");
  REQUIRE(p);
  REQUIRE(p->hasBody);
  CHECK(p->body.name == name);
  CHECK(p->body.kind == ast::BodyKind::Cells);
  REQUIRE(p->cellBody);
  return *p->cellBody;
}

int actuated(const runtime::Robot &r) {
  int n = 0;
  for (const auto &s : r.springs)
    n += s.actuation != 0;
  return n;
}

} // namespace

TEST_CASE("fang2d designs: points, springs and actuated springs as in the paper's code",
          "[cells]") {
  // stdlib/bodies/fang2d.evo declares all six and checks on its own.
  auto all = check("import \"bodies/fang2d.evo\";\n");
  REQUIRE(all);
  CHECK_FALSE(all->hasBody); // six bodies, none chosen without an evolve block
  struct Expect {
    const char *name, *file;
    int points, springs, actuated;
  };
  for (const Expect &e :
       {Expect{"Alpaca", "alpaca", 16, 36, 4}, Expect{"Monster", "monster", 24, 56, 9},
        Expect{"HugeStool", "huge_stool", 33, 92, 12}, Expect{"Stool", "stool", 14, 31, 9},
        Expect{"Snake", "snake", 14, 31, 19}, Expect{"SnakeA", "snake_a", 14, 31, 12}}) {
    INFO("design " << e.name);
    body::CellBodySpec spec = fangBody(e.name, e.file);
    CHECK(spec.stiffness == 3e3);
    CHECK(spec.actuation == 0.2);
    CHECK(spec.edge == 0.05);
    CHECK(spec.origin == std::vector<double>{0.5, 0.1});
    evolve::CellBody body(spec, 0.1);
    const runtime::Robot &r = body.robot();
    CHECK(r.dim == 2);
    CHECK(r.numPoints() == e.points);
    CHECK(r.numSprings() == e.springs);
    CHECK(actuated(r) == e.actuated);
    std::set<std::pair<int, int>> seen;
    for (const auto &s : r.springs) {
      CHECK(s.stiffness == 3e3);
      CHECK((s.actuation == 0 || s.actuation == 0.2));
      CHECK(seen.emplace(std::min(s.a, s.b), std::max(s.a, s.b)).second); // no duplicates
      const double dx = r.points[size_t(2 * s.a)] - r.points[size_t(2 * s.b)];
      const double dy = r.points[size_t(2 * s.a + 1)] - r.points[size_t(2 * s.b + 1)];
      CHECK(s.rest == std::sqrt(dx * dx + dy * dy));
      CHECK((std::abs(s.rest - 0.05) < 1e-12 || std::abs(s.rest - 0.05 * std::sqrt(2.0)) < 1e-12));
    }
  }
}

TEST_CASE("fang2d Alpaca: points numbered by first use, springs ab ac ad bc bd cd per cell",
          "[cells]") {
  evolve::CellBody body(fangBody("Alpaca", "alpaca"), 0.1);
  const runtime::Robot &r = body.robot();
  // Cell (0, 0): a b c d = points 0 1 2 3; cell (0, 1): a = 1, b = 4 (new),
  // c = 3, d = 5 (new).
  const double pts[6][2] = {{0.5, 0.1},   {0.5, 0.15}, {0.55, 0.1},
                            {0.55, 0.15}, {0.5, 0.2},  {0.55, 0.2}};
  REQUIRE(r.numPoints() >= 6);
  for (int p = 0; p < 6; ++p) {
    INFO("point " << p);
    CHECK(r.points[size_t(2 * p)] == Approx(pts[p][0]).margin(1e-15));
    CHECK(r.points[size_t(2 * p + 1)] == Approx(pts[p][1]).margin(1e-15));
  }
  // Cell (0, 0) is vertical: ab and cd actuated. Cell (0, 1) is passive and
  // its ac = (1, 3) is cell (0, 0)'s bd, skipped.
  struct S {
    int a, b;
    double actuation;
  };
  const S springs[] = {{0, 1, 0.2}, {0, 2, 0}, {0, 3, 0}, {1, 2, 0}, {1, 3, 0}, {2, 3, 0.2},
                       {1, 4, 0},   {1, 5, 0}, {4, 3, 0}, {4, 5, 0}, {3, 5, 0}};
  REQUIRE(r.numSprings() >= 11);
  for (size_t k = 0; k < std::size(springs); ++k) {
    INFO("spring " << k);
    CHECK(r.springs[k].a == springs[k].a);
    CHECK(r.springs[k].b == springs[k].b);
    CHECK(r.springs[k].actuation == springs[k].actuation);
  }
  // Cell (2, 0), vertical, is the other actuated one: its ab and cd.
  std::vector<std::pair<double, double>> act;
  for (const auto &s : r.springs)
    if (s.actuation != 0)
      act.push_back({r.points[size_t(2 * s.a)], r.points[size_t(2 * s.b)]});
  REQUIRE(act.size() == 4);
  CHECK(act[2].first == Approx(0.6));
  CHECK(act[2].second == Approx(0.6));
  CHECK(act[3].first == Approx(0.65));
  CHECK(act[3].second == Approx(0.65));
}

TEST_CASE("a fixed body: one genotype, placed as written, never varied", "[cells]") {
  evolve::CellBody body(fangBody("Stool", "stool"), 0.1);
  CHECK(body.kind() == "cells");
  CHECK(body.groundY() == 0.1);
  evolve::EvoRng rng(1), other(2);
  auto g = body.sample(rng);
  CHECK(g == body.sample(other));
  evolve::Phenotype ph = body.express(*g);
  CHECK(ph.valid);
  CHECK(ph.robot.points == body.robot().points); // not lifted onto the ground
  CHECK(ph.pointKeys.size() == size_t(ph.robot.numPoints()));
  CHECK(ph.springKeys.size() == size_t(ph.robot.numSprings()));
  REQUIRE(ph.outlines.size() == 6); // one square per cell
  CHECK(ph.outlines[0].points == std::vector<int>{0, 2, 3, 1});
  CHECK_THROWS_AS(body.vary(*g, {}, rng), Error);
  CHECK_THROWS_WITH(body.vary(*g, {}, rng), Catch::Contains("fixed body"));
  auto j = body.toJson(*g);
  CHECK(body.fromJson(j) == g);
  CHECK_THROWS_AS(body.fromJson(nlohmann::json{{"kind", "lattice"}}), Error);
  CHECK(body.fingerprint()["cells"].size() == 6);
  CHECK(body.fingerprint()["cells"][0] == nlohmann::json{0, 0, "vertical"});
}

TEST_CASE("buildCellRobot refuses what sema refuses", "[cells]") {
  body::CellBodySpec spec;
  spec.name = "B";
  CHECK_THROWS_AS(evolve::buildCellRobot(spec), Error); // no cells
  spec.cells = {{0, 0, body::CellTemplate::All}, {0, 0, body::CellTemplate::None}};
  CHECK_THROWS_WITH(evolve::buildCellRobot(spec), Catch::Contains("given twice"));
  spec.cells.pop_back();
  runtime::Robot r = evolve::buildCellRobot(spec);
  CHECK(r.numPoints() == 4);
  CHECK(r.numSprings() == 6);
  CHECK(actuated(r) == 6);
  spec.origin = {0, 0, 0}; // 3 numbers for a 2D body
  CHECK_THROWS_AS(evolve::buildCellRobot(spec), Error);
  spec.dim = 4;
  spec.origin = {0, 0, 0, 0};
  CHECK_THROWS_AS(evolve::buildCellRobot(spec), Error);
}

namespace {

/// The 3D design `name` of stdlib/bodies/fang3d/`file`.evo as the checker builds it.
body::CellBodySpec fang3dBody(const std::string &name, const std::string &file) {
  auto p = check("import \"bodies/fang3d/" + file +
                 ".evo\";\n"
                 "world { dim = 3; ground = flat(height = 0.1, friction = 0.4); }\n");
  REQUIRE(p);
  REQUIRE(p->hasBody);
  CHECK(p->body.name == name);
  REQUIRE(p->cellBody);
  return *p->cellBody;
}

} // namespace

TEST_CASE("fang3d designs: points, springs and actuated springs as docs/multitask.md gives them",
          "[cells][3d]") {
  auto all = check("import \"bodies/fang3d.evo\";\nworld { dim = 3; }\n");
  REQUIRE(all);
  CHECK_FALSE(all->hasBody);
  struct Expect {
    const char *name, *file;
    int points, springs, actuated;
    double stiffness, actuation;
  };
  for (const Expect &e :
       {Expect{"Quad3D", "quad", 48, 272, 48, 1e3, 0.25},
        Expect{"X3D", "x", 40, 222, 44, 1e3, 0.25}, Expect{"Y3D", "y", 40, 204, 36, 1e3, 0.25},
        Expect{"Spider3D", "spider", 56, 292, 48, 2e3, 0.2}, // not 39/175/12: see its file
        Expect{"Snake3D", "snake", 28, 138, 96, 1e3, 0.25}}) {
    INFO("design " << e.name);
    body::CellBodySpec spec = fang3dBody(e.name, e.file);
    CHECK(spec.dim == 3);
    CHECK(spec.stiffness == e.stiffness);
    CHECK(spec.actuation == e.actuation);
    CHECK(spec.origin == std::vector<double>{0.1, 0.1, 0.1});
    evolve::CellBody body(spec, 0.1);
    const runtime::Robot &r = body.robot();
    CHECK(r.dim == 3);
    CHECK(r.numPoints() == e.points);
    CHECK(r.numSprings() == e.springs);
    CHECK(actuated(r) == e.actuated);
    std::set<std::pair<int, int>> seen;
    double lowest = 1e300;
    for (int i = 0; i < r.numPoints(); ++i)
      lowest = std::min(lowest, r.points[size_t(3 * i + 2)]);
    CHECK(lowest == Approx(0.1)); // resting on the ground
    for (const auto &s : r.springs) {
      CHECK(seen.emplace(std::min(s.a, s.b), std::max(s.a, s.b)).second);
      double d2 = 0;
      for (int c = 0; c < 3; ++c) {
        const double d = r.points[size_t(3 * s.a + c)] - r.points[size_t(3 * s.b + c)];
        d2 += d * d;
      }
      CHECK(s.rest == std::sqrt(d2));
      const double q = s.rest / 0.05; // edge, face or body diagonal
      CHECK((std::abs(q - 1) < 1e-12 || std::abs(q - std::sqrt(2.0)) < 1e-12 ||
             std::abs(q - std::sqrt(3.0)) < 1e-12));
    }
  }
}

TEST_CASE("cube cells: corners a .. h by first use, the 28 springs ab .. gh, templates",
          "[cells][3d]") {
  body::CellBodySpec spec;
  spec.name = "C";
  spec.dim = 3;
  spec.origin = {0, 0, 0};
  spec.edge = 1;
  spec.actuation = 0.5;
  spec.cells = {{0, 0, body::CellTemplate::Leg, 0}};
  runtime::Robot r = evolve::buildCellRobot(spec);
  REQUIRE(r.numPoints() == 8);
  const double corner[8][3] = {{0, 0, 0}, {0, 0, 1}, {1, 0, 0}, {1, 0, 1},
                               {0, 1, 0}, {0, 1, 1}, {1, 1, 0}, {1, 1, 1}};
  for (int p = 0; p < 8; ++p)
    for (int c = 0; c < 3; ++c)
      CHECK(r.points[size_t(3 * p + c)] == corner[p][c]);
  REQUIRE(r.numSprings() == 28);
  int k = 0;
  for (int a = 0; a < 8; ++a)
    for (int b = a + 1; b < 8; ++b, ++k) {
      INFO("spring " << k);
      CHECK(r.springs[size_t(k)].a == a);
      CHECK(r.springs[size_t(k)].b == b);
    }
  // Leg: the 4 vertical edges and the 8 side-face diagonals.
  const std::set<int> leg = {0, 2, 4, 7, 9, 13, 17, 20, 22, 24, 25, 27};
  for (int s = 0; s < 28; ++s)
    CHECK((r.springs[size_t(s)].actuation != 0) == (leg.count(s) > 0));
  struct T {
    body::CellTemplate t;
    int count;
  };
  for (T t : {T{body::CellTemplate::None, 0}, T{body::CellTemplate::Vertical, 4},
              T{body::CellTemplate::Horizontal, 8}, T{body::CellTemplate::Diagonal, 16},
              T{body::CellTemplate::All, 28}, T{body::CellTemplate::AlongX, 16},
              T{body::CellTemplate::AlongY, 16}}) {
    spec.cells[0].actuated = t.t;
    CHECK(actuated(evolve::buildCellRobot(spec)) == t.count);
  }
  // Two cubes side by side along y share the face e f g h / a b c d: 12
  // points, 28 + 22 springs; the second's shared springs keep the first's
  // actuation (none).
  spec.cells = {{0, 0, body::CellTemplate::None, 0}, {0, 1, body::CellTemplate::All, 0}};
  runtime::Robot two = evolve::buildCellRobot(spec);
  CHECK(two.numPoints() == 12);
  CHECK(two.numSprings() == 50);
  CHECK(actuated(two) == 22);
  spec.cells.push_back({0, 1, body::CellTemplate::None, 0});
  CHECK_THROWS_WITH(evolve::buildCellRobot(spec), Catch::Contains("(0, 1, 0) is given twice"));
  // The body's surface: 2 cubes, 12 faces, 2 of them shared.
  spec.cells.pop_back();
  evolve::CellBody body(spec, 0);
  CHECK(body.express(*body.sample(*std::make_unique<evolve::EvoRng>(1))).outlines.size() == 10);
  CHECK(body.fingerprint()["cells"][1] == nlohmann::json{0, 1, 0, "all"});
}
