// Terrain grounds and scenes (docs/language.md, "The world"): a profile read
// from CSV or drawn from a seed, checked with located errors; the ELDiR
// friction contact on a slope and at a kink, and both contact models at a
// scene's box sides and tops, differentiated (central differences, the
// interpreter against the CPU back end); the initial lift rests the body on
// the terrain (out of the boxes) and no point sinks into either.
#include "Close.h"
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>

#include "EvocProcess.h"
#include "TestBodies.h"
#include "app/Driver.h"
#include "app/Pipeline.h"
#include "core/Population.h"
#include "core/Rollout.h"
#include "core/Train.h"
#include "sema/Program.h"
#include "sema/Terrain.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

using namespace evoc;
using namespace evoc::runtime;
namespace fs = std::filesystem;

namespace {

// A 2 x 3 ladder straddling the profile's kink at x = 0.5.
Robot ladder() { return test::ladder(0.44, 0.0); }

// The first error headline of checking `text` (a world with this ground).
std::string groundError(const std::string &ground, int dim = 2) {
  fs::path dir = fs::temp_directory_path() / "evoc-terrain";
  fs::create_directories(dir);
  fs::path f = dir / "t.evo";
  std::ofstream(f) << "world { dim = " << dim << "; ground = " << ground << "; }\n";
  SourceManager sources;
  DiagnosticEngine diags(sources);
  sema::CheckOptions o;
  o.ignoreEnv = true;
  auto p = sema::checkFile(f.string(), o, sources, diags);
  auto lines = diags.headlines();
  return lines.empty() ? "" : lines[0];
}

void writeFile(const std::string &name, const std::string &text) {
  fs::path dir = fs::temp_directory_path() / "evoc-terrain";
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << text;
}

} // namespace

TEST_CASE("terrain files: bad ones are located errors, good ones and random ones check",
          "[terrain]") {
  writeFile("empty.csv", "");
  writeFile("one.csv", "0, 0.1\n");
  writeFile("unsorted.csv", "0, 0.1\n0.5, 0.2\n0.4, 0.1\n");
  writeFile("nan.csv", "0, 0.1\n0.5, nan\n");
  writeFile("binary.csv", std::string("0, 0.1\n\0\x01\x02", 10));
  writeFile("bad.csv", "x, height\n0, 0.1\n0.5; 0.2\n");
  writeFile("good.csv", "# comment\nx, height\n0, 0.1\n\n0.5, 0.2\n");
  CHECK(groundError("terrain(\"missing.csv\")").find("cannot read the terrain file") !=
        std::string::npos);
  CHECK(groundError("terrain(\"empty.csv\")").find("at least two rows") != std::string::npos);
  CHECK(groundError("terrain(\"one.csv\")").find("(it has 1)") != std::string::npos);
  CHECK(
      groundError("terrain(\"unsorted.csv\")").find("unsorted.csv:3: x = 0.4 does not increase") !=
      std::string::npos);
  CHECK(groundError("terrain(\"nan.csv\")").find("nan.csv:2:") != std::string::npos);
  CHECK(groundError("terrain(\"binary.csv\")").find("is not text") != std::string::npos);
  CHECK(groundError("terrain(\"bad.csv\")").find("bad.csv:3: expected a row 'x, height'") !=
        std::string::npos);
  CHECK(groundError("terrain(\"good.csv\", friction = 0.5)").empty());
  CHECK(groundError("terrain(\"good.csv\")", 3).find("good.csv:3: expected a row 'x, y, height'") !=
        std::string::npos);
  CHECK(groundError("terrain_random(seed = 4, roughness = 0.02, segments = 0)")
            .find("segments must be a whole number") != std::string::npos);
  CHECK(groundError("terrain_random(seed = 4, roughness = 0.02, slope = 1)")
            .find("unknown argument 'slope'") != std::string::npos);
  CHECK(groundError("terrain_random(seed = 4, roughness = 0.02)").empty());
}

TEST_CASE("3D height fields: bad grids are located errors, good and random ones check",
          "[terrain][3d]") {
  writeFile("hole.csv", "x, y, height\n0, 0, 0.1\n1, 0, 0.1\n0, 1, 0.2\n");
  writeFile("twice.csv", "0, 0, 0.1\n1, 0, 0.1\n0, 1, 0.2\n1, 1, 0.2\n0, 0, 0.3\n");
  writeFile("line.csv", "0, 0, 0.1\n1, 0, 0.1\n2, 0, 0.2\n");
  writeFile("grid.csv", "# any order\n1, 1, 0.2\n0, 0, 0.1\n0, 1, 0.2\n1, 0, 0.1\n");
  std::string big;
  for (int i = 0; i < 70; ++i)
    for (int j = 0; j < 70; ++j)
      big += std::to_string(i) + ", " + std::to_string(j) + ", 0\n";
  writeFile("big.csv", big);
  CHECK(groundError("terrain(\"hole.csv\")", 3).find("no height at (x, y) = (1, 1)") !=
        std::string::npos);
  CHECK(groundError("terrain(\"twice.csv\")", 3).find("twice.csv:5: a second height") !=
        std::string::npos);
  CHECK(groundError("terrain(\"line.csv\")", 3).find("3 x and 1 y") != std::string::npos);
  CHECK(groundError("terrain(\"big.csv\")", 3).find("70 x 70 points is more than 4096") !=
        std::string::npos);
  CHECK(groundError("terrain(\"grid.csv\", friction = 0.5)", 3).empty());
  CHECK(groundError("terrain_random(seed = 3, segments = 64)", 3).find("segments = 63 or fewer") !=
        std::string::npos);
  CHECK(groundError("terrain_random(seed = 3, roughness = 0.01)", 3).empty());
  // The same seed draws the same field; heights never below the base.
  HeightField a = sema::randomHeightField(5, 0.02, 2, 8, 0.1);
  HeightField b = sema::randomHeightField(5, 0.02, 2, 8, 0.1);
  CHECK(a.h == b.h);
  CHECK(a.nx() == 9);
  CHECK(*std::min_element(a.h.begin(), a.h.end()) == 0.1);
  CHECK(*std::max_element(a.h.begin(), a.h.end()) > 0.1);
}

TEST_CASE("terrain: a physics that reads the flat height is refused, located", "[terrain]") {
  fs::path dir = fs::temp_directory_path() / "evoc-terrain";
  writeFile("fang.evo", "import \"physics/mass_spring_fang.evo\";\n"
                        "world { dim = 2; ground = terrain_random(seed = 1);\n"
                        "  physics = mass_spring_fang; }\n");
  std::string err;
  CHECK(test::runEvocErr({"check", (dir / "fang.evo").string()}, err) != 0);
  CHECK(err.find("mass_spring_fang.evo:") != std::string::npos);
  CHECK(err.find("world.ground.height is a flat ground's height") != std::string::npos);
  writeFile("h3.evo", "import \"physics/mass_spring3.evo\";\n"
                      "world { dim = 3; ground = terrain_random(seed = 1); }\n"
                      "fn f(x: scalar) -> scalar { return ground_height(x); }\n");
  CHECK(test::runEvocErr({"check", (dir / "h3.evo").string()}, err) != 0);
  CHECK(err.find("in 3D reads the ground under a vec2 (x, y), not scalar") != std::string::npos);
}

namespace {

// How a trajectory meets a scene's boxes: the deepest any point gets inside
// one, and how many (time, point) pairs lie on a box's side face or on its
// top (within 1e-9 of the plane, inside the face).
struct BoxTouches {
  double deepest = 0;
  int sides = 0, tops = 0;
};

BoxTouches boxTouches(const std::vector<SceneBox> &boxes,
                      const std::vector<std::vector<double>> &xs, int dim) {
  BoxTouches t;
  for (const auto &x : xs)
    for (size_t i = 0; i < x.size(); i += size_t(dim))
      for (const SceneBox &b : boxes) {
        double depth = 1e9;
        int onFace = -1; // the axis of a face the point lies on
        bool within = true;
        for (int k = 0; k < dim; ++k) {
          const double lo = x[i + size_t(k)] - b.lo[size_t(k)],
                       hi = b.hi[size_t(k)] - x[i + size_t(k)];
          depth = std::min({depth, lo, hi});
          if (std::abs(lo) < 1e-9 || std::abs(hi) < 1e-9)
            onFace = k;
          else if (lo < 0 || hi < 0)
            within = false;
        }
        t.deepest = std::max(t.deepest, depth);
        if (within && onFace >= 0)
          ++(onFace == dim - 1 ? t.tops : t.sides);
      }
  return t;
}

// Checks tests/data/terrain/FILE with `body` (and world.physics = `physics`
// when given): the body starts resting on the terrain (or, in a scene, out
// of every box) and never sinks into it (nor into a box, whose sides and
// tops it meets); `spans` says the trajectory passes over the kinks it
// should; `objects`, when given, checks the world's objects' centres at
// every step; the interpreter agrees with the CPU back end, and the adjoint
// with central differences of the loss at step h.
using ObjectsFn = std::function<void(const std::vector<std::vector<double>> &)>;
void checkOnTerrain(const std::string &file, const Robot &body, const std::string &physics,
                    const std::function<void(double, double, double, double)> &spans,
                    const ObjectsFn &objects = {}, double h = 1e-6) {
  std::vector<std::pair<std::string, std::string>> overrides;
  if (!physics.empty())
    overrides.push_back({"world.physics", physics});
  app::CompiledFile c =
      app::compileFile(std::string(EVOC_SOURCE_DIR) + "/tests/data/terrain/" + file, overrides);
  const auto *prog = &c.program;
  const ir::Module *m = &c.module;
  ModuleInfo info(*m);
  auto cpu = codegen::compile(*m, codegen::BackendKind::Cpu);
  auto interp = codegen::compile(*m, codegen::BackendKind::Interp);
  const GroundShape terrain = prog->world.ground.shape();
  REQUIRE(!terrain.empty());
  const int dim = body.dim;

  Population pop(info, {body});
  pop.initParams(0, 7, 0);
  {
    Rollout ro(info, *cpu);
    ro.runInit(pop, 0);
  }
  RolloutConfig rc;
  rc.steps = prog->world.steps;
  rc.groundHeight = prog->world.ground.height;
  rc.terrain = &terrain;
  rc.upAxis = dim - 1;
  rc.checkpointK = 6;

  // The body starts on the terrain and stays above it (to rounding).
  Rollout ro(info, *cpu);
  std::vector<int64_t> times;
  for (int64_t t = 0; t < rc.steps; ++t)
    times.push_back(t);
  auto xs = ro.trajectory(pop, 0, rc, "point.x", times);
  auto gap = [&](const std::vector<double> &x, size_t i) {
    return x[i + size_t(dim) - 1] - terrain.heightUnder(&x[i], dim, rc.groundHeight);
  };
  double gap0 = 1e9, worst = 1e9, xmin = 1e9, xmax = -1e9, ymin = 1e9, ymax = -1e9;
  for (size_t i = 0; i < xs[0].size(); i += size_t(dim))
    gap0 = std::min(gap0, gap(xs[0], i));
  if (terrain.boxes.empty()) {
    CHECK(std::abs(gap0) < 1e-12);
  } else {
    CHECK(boxTouches(terrain.boxes, {xs[0]}, dim).deepest <= 0);
    const BoxTouches all = boxTouches(terrain.boxes, xs, dim);
    CHECK(all.deepest < 1e-9);
    CHECK(all.sides > 0);
    CHECK(all.tops > 0);
  }
  for (const auto &x : xs)
    for (size_t i = 0; i < x.size(); i += size_t(dim)) {
      worst = std::min(worst, gap(x, i));
      xmin = std::min(xmin, x[i]);
      xmax = std::max(xmax, x[i]);
      ymin = std::min(ymin, x[i + 1]);
      ymax = std::max(ymax, x[i + 1]);
    }
  // On a 2D profile the contact is exact to rounding; a bilinear cell is
  // curved, and noslip stops a point at its tangent plane, up to
  // curvature x (dt v)^2 ~ 1e-8 below the surface.
  CHECK(worst > (dim == 2 ? -1e-9 : -1e-7));
  spans(xmin, xmax, ymin, ymax);
  if (objects)
    objects(ro.trajectory(pop, 0, rc, "object.x", times));

  auto run = [&](const codegen::Executable &exe, bool backward) {
    Rollout r(info, exe);
    RolloutOutcome out = r.run(pop, 0, rc, backward);
    REQUIRE(out.valid);
    std::vector<double> g;
    if (backward) {
      const double *gp = reinterpret_cast<const double *>(pop.arena(0, Arena::Grad));
      g.assign(gp, gp + pop.layout(0).paramCount);
    }
    return std::make_pair(out.loss, g);
  };
  auto [loss, grad] = run(*cpu, true);
  auto [iloss, igrad] = run(*interp, true);
  CHECK(test::close(iloss, loss, 1e-12, 1e-15));
  double gmax = 0;
  for (double g : grad)
    gmax = std::max(gmax, std::abs(g));
  REQUIRE(gmax > 0);
  for (size_t i = 0; i < grad.size(); ++i)
    CHECK(std::abs(igrad[i] - grad[i]) <= 1e-9 * gmax);
  std::byte *p = pop.arena(0, Arena::Param);
  int checked = 0;
  for (int64_t i = 0; i < pop.layout(0).paramCount; i += 5) {
    double x0 = loadF(p, i, false);
    storeF(p, i, x0 + h, false);
    double lp = run(*cpu, false).first;
    storeF(p, i, x0 - h, false);
    double lm = run(*cpu, false).first;
    storeF(p, i, x0, false);
    double fd = (lp - lm) / (2 * h);
    INFO("param " << i << ": fd " << fd << ", adjoint " << grad[size_t(i)]);
    CHECK(std::abs(fd - grad[size_t(i)]) <= 1e-5 * gmax + 1e-4 * std::abs(fd));
    ++checked;
  }
  CHECK(checked > 10);
}

} // namespace

TEST_CASE("terrain: gradients on a slope and at a kink; the body rests on it, never in it",
          "[terrain][gradcheck]") {
  const TerrainProfile profile = {{0.0, 0.1}, {0.3, 0.1}, {0.5, 0.16}, {0.7, 0.12}, {2.0, 0.12}};
  CHECK(profileHeightAt(profile, -1) == 0.1);
  CHECK(std::abs(profileHeightAt(profile, 0.4) - 0.13) < 1e-15);
  CHECK(profileHeightAt(profile, 9) == 0.12);
  checkOnTerrain("hills.evo", ladder(), "", [](double xmin, double xmax, double, double) {
    CHECK(xmin < 0.5);
    CHECK(xmax > 0.5); // the kink lies under the body
  });
}

TEST_CASE("3D terrain: both contact models on a height field's slopes and kinks",
          "[terrain][gradcheck][3d]") {
  HeightField f;
  f.xs = {0, 1};
  f.ys = {0, 2};
  f.h = {0, 1, 2, 4}; // h(x, y) = x + y + x y / 2
  CHECK(fieldHeightAt(f, 0.5, 1) == 0.5 + 1 + 0.25);
  CHECK(fieldHeightAt(f, -3, -1) == 0);
  CHECK(fieldHeightAt(f, 5, 0.5) == 1 + 0.5 + 0.5 / 2); // the x = 1 edge continued
  for (const char *physics : {"mass_spring3_friction", "mass_spring3_noslip"}) {
    INFO(physics);
    checkOnTerrain("field3d.evo", test::cube(0.46, 0.0, 0.0), physics,
                   [](double xmin, double xmax, double ymin, double ymax) {
                     CHECK(xmin < 0.5); // across the kink at x = 0.5
                     CHECK(xmax > 0.5);
                     CHECK(ymin < 0.025); // and the one at y = 0.025
                     CHECK(ymax > 0.025);
                   });
  }
}

TEST_CASE("scenes: gradients where a body tips off a box against a wall", "[scene][gradcheck]") {
  // The ladder's left column starts inside the platform (lifted onto its
  // top); the rest hangs over its edge and tips, its top right point into
  // the wall's side.
  for (const char *physics : {"mass_spring_friction", "mass_spring_noslip"}) {
    INFO(physics);
    checkOnTerrain("boxes.evo", ladder(), physics, [](double, double xmax, double ymin, double) {
      CHECK(xmax > 0.45); // over the platform's edge
      CHECK(ymin < 0.2);  // and below its top
    });
  }
}

TEST_CASE("3D scenes: both contact models where a cube tips off a box", "[scene][gradcheck][3d]") {
  for (const char *physics : {"mass_spring3_friction", "mass_spring3_noslip"}) {
    INFO(physics);
    checkOnTerrain("boxes3d.evo", test::cube(0.46, 0.0, 0.0), physics,
                   [](double, double xmax, double, double) { CHECK(xmax > 0.47); });
  }
}

TEST_CASE("objects: gradients where boxes fall onto a body and lie against it",
          "[objects][gradcheck]") {
  // The ladder spans x 0.44 .. 0.54, y 0.1 .. 0.15 on the ground.
  // Central differences at h = 1e-7: at 1e-6 a perturbation moves a point
  // across an exit-axis switch (a box's diagonal, where the push turns from
  // one axis to the other) within the 150 steps, and the difference quotient
  // jumps; at 1e-7 and 1e-8 every entry agrees with the adjoint.
  checkOnTerrain(
      "objects.evo", ladder(), "", [](double, double, double, double) {},
      [](const std::vector<std::vector<double>> &c) {
        REQUIRE(c.size() == 150);
        REQUIRE(c[0].size() == 4);
        CHECK(c[0][1] == 0.22); // the dropped box starts where the world puts it
        // It falls, then rests on the ladder: above the ground's
        // 0.1 + its half height 0.02, near the ladder's top.
        const double y = c.back()[1];
        CHECK(y < 0.2);
        CHECK(y > 0.15);
        // The other box is pushed: it moves right, stays on the ground.
        CHECK(c.back()[2] > c[0][2] + 1e-4);
        CHECK(std::abs(c.back()[3] - 0.13) < 1e-9);
      },
      1e-7);
}

TEST_CASE("3D objects: gradients where boxes fall onto a cube and lie against it",
          "[objects][gradcheck][3d]") {
  checkOnTerrain(
      "objects3d.evo", test::cube(0.46, 0.0, 0.0), "", [](double, double, double, double) {},
      [](const std::vector<std::vector<double>> &c) {
        REQUIRE(c[0].size() == 6);
        const double z = c.back()[2]; // on the cube's top (0.15), not the ground
        CHECK(z < 0.22);
        CHECK(z > 0.15);
        CHECK(c.back()[3] > c[0][3] + 1e-4);
      },
      1e-7);
}

TEST_CASE("evoc run: a lattice experiment on a random terrain runs end to end", "[terrain][run]") {
  fs::path dir = test::freshDir("terrain-run");
  REQUIRE(test::runEvoc({"run", std::string(EVOC_SOURCE_DIR) + "/examples/eldir_small.evo", "--out",
                         dir.string(), "--set",
                         "world.ground=terrain_random(seed = 2, roughness = 0.01, friction = 1)",
                         "--set", "evolve.population=4", "--set", "evolve.generations=2", "--set",
                         "world.steps=200", "--set", "evolve.learn.iterations=3", "--threads",
                         "2"}) == 0);
  test::finishedLog(dir, 2);
  CHECK(test::readText(dir / "resolved.evo").find("terrain_random(seed = 2") != std::string::npos);
}

TEST_CASE("evoc run: examples/obstacles.evo evolves among its boxes and draws them",
          "[scene][run]") {
  fs::path dir = test::freshDir("scene-run");
  REQUIRE(
      test::runEvoc({"run", std::string(EVOC_SOURCE_DIR) + "/examples/obstacles.evo", "--out",
                     dir.string(), "--set", "evolve.population=4", "--set", "evolve.generations=2",
                     "--set", "evolve.learn.iterations=3", "--threads", "2"}) == 0);
  test::finishedLog(dir, 2);
  CHECK(test::readText(dir / "report.html").find("\"boxes\":[[[0.3,0.1],[0.6,0.115]]") !=
        std::string::npos);
  // A scene set on the command line, a box under the body's start: every
  // frame of best.svg draws it.
  fs::path under = test::freshDir("scene-run-under");
  REQUIRE(test::runEvoc({"run", std::string(EVOC_SOURCE_DIR) + "/examples/obstacles.evo", "--out",
                         under.string(), "--set", "world.scene=[box(0.1, 0.1, 0.2, 0.12)]", "--set",
                         "evolve.population=2", "--set", "evolve.generations=1", "--set",
                         "evolve.learn.iterations=1", "--threads", "2"}) == 0);
  CHECK(test::countOf(test::readText(under / "best.svg"), "class=\"scene-box\"") >= 4);
}

TEST_CASE("evoc run: 3D walkers on a random height field run end to end and draw it",
          "[terrain][run][3d]") {
  fs::path dir = test::freshDir("terrain-run-3d");
  REQUIRE(test::runEvoc({"run", std::string(EVOC_SOURCE_DIR) + "/examples/walker3d.evo", "--out",
                         dir.string(), "--set",
                         "world.ground=terrain_random(seed = 2, roughness = 0.01, segments = 12, "
                         "length = 2, friction = 1)",
                         "--set", "evolve.population=4", "--set", "evolve.generations=2", "--set",
                         "world.steps=200", "--set", "evolve.learn.iterations=2", "--threads",
                         "2"}) == 0);
  test::finishedLog(dir, 2);
  // best.svg draws the field as 8 x 8 shaded quads under each of its frames.
  CHECK(test::countOf(test::readText(dir / "best.svg"), "class=\"ground\"") == 4 * 64);
}
