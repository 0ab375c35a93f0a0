// Issue 31's language features end to end. Voxel bodies pinned against the
// grammar they are sugar for: an arch of seven voxels written by hand as a
// grammar of the stdlib voxel parts and as a `body voxel`
// (tests/data/voxel/arch.evo) builds the same robot (the same points, the
// same springs in the same order) and simulates alike at T = 1000 through
// the CPU back end (loss and every gradient); evoc run on voxel bodies; and
// fns applied element by element to fields, in a controller and a loss,
// against the same expressions written out.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "EvocProcess.h"
#include "JsonFiles.h"
#include "app/BodyModels.h"
#include "app/Pipeline.h"
#include "codegen/cpu/CpuBackend.h"
#include "core/Layout.h"
#include "core/Population.h"
#include "core/Rollout.h"
#include "evolve/engine/EvoRng.h"

using namespace evoc;
using namespace evoc::runtime;

namespace {

const std::string kArch = std::string(EVOC_SOURCE_DIR) + "/tests/data/voxel/arch.evo";

/// The robot of `body` in the arch file, with the compiled module.
struct Built {
  app::CompiledFile file;
  Robot robot;
};

Built build(const std::string &body, const nlohmann::json *genome) {
  Built b{app::compileFile(kArch, {{"evolve.body", body}}), {}};
  auto model = app::bodyModel(b.file.program);
  evolve::EvoRng rng(1);
  auto g = genome ? model->fromJson(*genome) : model->sample(rng);
  auto ph = model->express(*g);
  INFO(ph.reason);
  REQUIRE(ph.valid);
  b.robot = ph.robot;
  return b;
}

/// Loss and gradient of one rollout of `robot` through `file`'s module.
struct Outcome {
  double loss = 0;
  std::vector<double> grad;
};

Outcome simulate(const app::CompiledFile &file, const Robot &robot, int64_t steps) {
  const ir::Module &m = file.module;
  ModuleInfo info(m);
  auto exe = codegen::cpu::compileCpu(m, {});
  Population pop(info, {robot});
  pop.initParams(0, 7, 0);
  RolloutConfig c;
  c.steps = steps;
  c.upAxis = robot.dim - 1;
  Rollout ro(info, *exe);
  const RolloutOutcome out = ro.run(pop, 0, c, true);
  INFO(out.error);
  REQUIRE(out.valid);
  const auto *g = reinterpret_cast<const double *>(pop.arena(0, Arena::Grad));
  return {out.loss, {g, g + pop.layout(0).paramCount}};
}

double largest(const double *g, int64_t n) {
  double m = 0;
  for (int64_t i = 0; i < n; ++i)
    m = std::max(m, std::abs(g[i]));
  return m;
}

/// Two rollouts agree: the loss to `lossTol` of b's and every gradient entry
/// to `gradTol` of b's largest.
void checkSameOutcome(const Outcome &a, const Outcome &b, double lossTol = 1e-12,
                      double gradTol = 1e-12) {
  CHECK(std::abs(a.loss - b.loss) <= lossTol * std::abs(b.loss));
  REQUIRE(a.grad.size() == b.grad.size());
  const double scale = largest(b.grad.data(), int64_t(b.grad.size()));
  REQUIRE(scale > 0);
  for (size_t i = 0; i < a.grad.size(); ++i) {
    INFO("gradient " << i);
    CHECK(std::abs(a.grad[i] - b.grad[i]) <= gradTol * scale);
  }
}

} // namespace

TEST_CASE("a voxel body builds and simulates as the same body written as a voxel grammar",
          "[voxel][e2e]") {
  // Grid order, bottom row first: h_act . h_act / v_act . v_act / rigid soft rigid.
  const nlohmann::json genome = {{"kind", "voxel"},
                                 {"size", {3, 3}},
                                 {"materials", {"rigid", "soft", "h_act", "v_act"}},
                                 {"cells", {3, 0, 3, 4, 0, 4, 1, 2, 1}}};
  Built voxel = build("ArchVoxel", &genome);
  Built grammar = build("ArchGrammar", nullptr);
  const Robot &v = voxel.robot, &g = grammar.robot;
  REQUIRE(v.numPoints() == g.numPoints());
  REQUIRE(v.numSprings() == g.numSprings());
  CHECK(v.numPoints() == 16);
  CHECK(v.numSprings() == 7 * 6 - 6); // six edges shared
  // The grammar places its root voxel at x = 0, the voxel body its box's
  // corner: the same points up to that shift.
  const double dx = v.points[0] - g.points[0];
  CHECK(std::abs(dx) < 1e-12); // the root voxel is the box's corner cell here
  for (int i = 0; i < v.numPoints(); ++i) {
    INFO("point " << i);
    CHECK(std::abs(v.points[size_t(2 * i)] - g.points[size_t(2 * i)] - dx) < 1e-12);
    CHECK(std::abs(v.points[size_t(2 * i + 1)] - g.points[size_t(2 * i + 1)]) < 1e-12);
  }
  int actuated = 0;
  for (int s = 0; s < v.numSprings(); ++s) {
    const Spring &a = v.springs[size_t(s)], &b = g.springs[size_t(s)];
    INFO("spring " << s);
    CHECK(a.a == b.a);
    CHECK(a.b == b.b);
    CHECK(a.stiffness == b.stiffness);
    CHECK(a.actuation == b.actuation);
    CHECK(std::abs(a.rest - b.rest) < 1e-12);
    actuated += a.actuation > 0;
  }
  // Two per actuator voxel but the right foot's top edge: the v_act voxel
  // above it is placed first and makes that edge passive (docs/grammars.md,
  // Voxel bodies: a shared edge is the earlier voxel's spring).
  CHECK(actuated == 7);

  // The same controller weights through the same compiled rollout.
  const Outcome a = simulate(voxel.file, v, 1000), b = simulate(grammar.file, g, 1000);
  CHECK(std::abs(a.loss) > 1e-4); // it moved
  checkSameOutcome(a, b, 1e-9, 1e-7);
}

TEST_CASE("a fn applied to fields works element by element, in a controller and a loss",
          "[fn][field][e2e]") {
  auto program = [](const std::string &name, const std::string &input, const std::string &loss) {
    const auto dir = test::freshDir("field_fn_" + name);
    std::filesystem::create_directories(dir);
    const auto path = dir / name;
    std::ofstream(path) << "import \"physics/mass_spring.evo\";\n"
                           "import \"bodies/fang/alpaca.evo\";\n"
                           "world { steps = 300; physics = mass_spring_friction; ground = "
                           "flat(height = 0.1, friction = 1.0); }\n"
                           "fn sq(x: scalar) -> scalar { return x * x; }\n"
                           "fn f(d: vec2) -> scalar { return d.x * d.x + 0.5 * abs(d.y); }\n"
                           "controller c { inputs = "
                        << input
                        << ", point.v; hidden = 8 tanh; outputs = spring.act tanh; }\n"
                           "loss l = "
                        << loss << ";\n";
    return path.string();
  };
  auto run = [](const std::string &path) {
    auto file = app::compileFile(path);
    auto model = app::bodyModel(file.program);
    evolve::EvoRng rng(1);
    const Robot robot = model->express(*model->sample(rng)).robot;
    return simulate(file, robot, 300);
  };
  const Outcome fns = run(program("fns.evo", "sq(point.x.x)", "mean(f(point.x[T] - point.x[0]))"));
  const Outcome plain = run(program("plain.evo", "point.x.x * point.x.x",
                                    "mean((point.x[T].x - point.x[0].x) * (point.x[T].x - "
                                    "point.x[0].x) + 0.5 * abs(point.x[T].y - point.x[0].y))"));
  checkSameOutcome(fns, plain);
}

TEST_CASE("evoc run evolves voxel bodies, resumes them bit for bit and draws their materials",
          "[voxel][e2e][run]") {
  const std::string example = std::string(EVOC_SOURCE_DIR) + "/examples/voxel_walker.evo";
  auto run = [&](const std::filesystem::path &dir, const char *generations, bool resume) {
    return test::runEvoc({"run", example, resume ? "--resume" : "--out", dir.string(), "--set",
                          std::string("evolve.generations=") + generations, "--set",
                          "evolve.population=6", "--set", "world.steps=120", "--set",
                          "evolve.learn.iterations=3", "--threads", "2"});
  };
  const auto whole = test::freshDir("voxel_run_whole"), parts = test::freshDir("voxel_run_parts");
  REQUIRE(run(whole, "3", false) == 0);
  REQUIRE(run(parts, "2", false) == 0);
  REQUIRE(run(parts, "3", true) == 0); // resumed for one more generation
  const auto best = test::readJson((whole / "best.json").string());
  const auto resumed = test::readJson((parts / "best.json").string());
  CHECK(best.at("genome").at("kind") == "voxel");
  CHECK(best.at("genome").at("cells").size() == 25);
  CHECK(best.at("genome") == resumed.at("genome"));
  CHECK(best.at("fitness") == resumed.at("fitness"));
  CHECK(best.at("params") == resumed.at("params"));
  CHECK(test::logOf(whole).size() == 3);
  CHECK(test::logOf(parts).size() == 3);
  const std::string svg = test::readText(whole / "best.svg");
  CHECK(svg.find("class=\"part\"") != std::string::npos);
  // The best body's voxels are drawn in their materials' colours.
  const char *colours[] = {"#262626", "#bfbfbf", "#fd8d3c", "#6baed6"};
  for (int v : best.at("genome").at("cells"))
    if (v > 0)
      CHECK(svg.find(colours[v - 1]) != std::string::npos);
  // evoc sim reads the best body back through the voxel model.
  CHECK(test::runEvoc({"sim", example, "--robots", (whole / "best.json").string(), "--out",
                       (whole / "sim.json").string(), "--steps", "50"}) == 0);
}

TEST_CASE("part_mean: a loss that names a part reads the mean of its points", "[part][e2e]") {
  const auto dir = test::freshDir("part_mean");
  std::filesystem::create_directories(dir);
  auto program = [&](const std::string &name, const std::string &loss) {
    const auto path = dir / name;
    std::ofstream(path)
        << "import \"physics/mass_spring.evo\";\n"
           "import \"materials/evogym.evo\";\n"
           "import \"controllers/mlp.evo\";\n"
           "world { steps = 300; gravity = -4.8; damping = 15; physics = "
           "mass_spring_friction; ground = flat(height = 0.1, friction = 1.0); }\n"
           "body voxel V { materials = rigid, soft, h_act, v_act; size = (3, 3); }\n"
           "loss l = "
        << loss << ";\n";
    return app::compileFile(path.string());
  };
  // The arch (bottom row first): h_act . h_act / v_act . v_act / rigid soft rigid.
  const nlohmann::json arch = {{"kind", "voxel"},
                               {"size", {3, 3}},
                               {"materials", {"rigid", "soft", "h_act", "v_act"}},
                               {"cells", {3, 0, 3, 4, 0, 4, 1, 2, 1}}};
  auto robotOf = [](const app::CompiledFile &f, const nlohmann::json &genome) {
    auto model = app::bodyModel(f.program);
    return model->express(*model->fromJson(genome)).robot;
  };
  // At t = 0: the rigid voxels' corners (the top row's outer cells).
  auto start =
      program("start.evo", "part_mean(rigid, point.x[0]).y + part_mean(h_act, point.x[0]).x");
  const Robot r = robotOf(start, arch);
  REQUIRE(r.hasParts);
  auto mean = [&](const std::string &part, int axis) {
    double s = 0;
    for (int q : r.partPoints.at(part))
      s += r.points[size_t(2 * q + axis)];
    return s / double(r.partPoints.at(part).size());
  };
  CHECK(r.partPoints.at("rigid").size() == 8);
  CHECK(r.partPoints.at("h_act").size() == 8);
  const Outcome s = simulate(start, r, 300);
  CHECK(std::abs(s.loss - (mean("rigid", 1) + mean("h_act", 0))) < 1e-12);
  CHECK(std::abs(mean("rigid", 1) - (0.1 + 2.5 * 0.05)) < 1e-12);

  // A body of one material: part_mean over it is mean over every point,
  // loss and gradients, at T.
  const nlohmann::json block = {{"kind", "voxel"},
                                {"size", {3, 3}},
                                {"materials", {"rigid", "soft", "h_act", "v_act"}},
                                {"cells", {3, 3, 3, 3, 3, 3, 0, 0, 0}}};
  auto part = program("part.evo", "-part_mean(h_act, point.x[T]).x");
  auto all = program("all.evo", "-mean(point.x[T]).x");
  const Outcome a = simulate(part, robotOf(part, block), 300);
  const Outcome b = simulate(all, robotOf(all, block), 300);
  checkSameOutcome(a, b);
  // A body without the part: 0, not a division by zero.
  auto none = program("none.evo", "part_mean(soft, point.x[T]).x");
  CHECK(simulate(none, robotOf(none, block), 300).loss == 0);
}

TEST_CASE("the stdlib tasks' examples evolve voxel bodies and draw their scenes and objects",
          "[tasks][e2e][run]") {
  struct Task {
    const char *name;
    bool scene, objects;
  };
  const Task tasks[] = {{"walker", false, false},     {"bridge", true, false},
                        {"climber", true, false},     {"obstacles", true, false},
                        {"stairs", true, false},      {"walker3d", false, false},
                        {"obstacles3d", true, false}, {"pusher", false, true},
                        {"carrier", false, true},     {"thrower", false, true}};
  for (const auto &[name, scene, objects] : tasks) {
    INFO(name);
    const auto dir = test::freshDir(std::string("task_") + name);
    const std::string example = std::string(EVOC_SOURCE_DIR) + "/examples/tasks/" + name + ".evo";
    REQUIRE(test::runEvoc({"run", example, "--out", dir.string(), "--set", "evolve.generations=2",
                           "--set", "evolve.population=4", "--set", "world.steps=80", "--set",
                           "evolve.learn.iterations=2", "--threads", "2"}) == 0);
    const auto best = test::readJson((dir / "best.json").string());
    CHECK(best.at("genome").at("kind") == "voxel");
    CHECK(test::logOf(dir).size() == 2);
    // The pictures draw the scene's boxes, in 2D and 3D.
    const std::string svg = test::readText(dir / "best.svg");
    CHECK((svg.find("class=\"scene-box\"") != std::string::npos) == scene);
    // And the objects, where each frame has them; the report moves them.
    CHECK((svg.find("class=\"object\"") != std::string::npos) == objects);
    if (objects)
      CHECK(test::readText(dir / "report.html").find("\"o\":[[") != std::string::npos);
    CHECK(svg.find("class=\"part\"") != std::string::npos);
  }
}
