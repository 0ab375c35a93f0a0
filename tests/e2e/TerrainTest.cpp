// Terrain grounds (docs/language.md, "The world"): a profile read from CSV
// or drawn from a seed, checked with located errors; the ELDiR friction
// contact on a slope and at a kink, differentiated (central differences, the
// interpreter against the CPU back end); the initial lift rests the body on
// the terrain and no point sinks into it.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "EvocProcess.h"
#include "TestBodies.h"
#include "core/Population.h"
#include "core/Rollout.h"
#include "core/Train.h"
#include "driver/Driver.h"
#include "driver/Pipeline.h"
#include "sema/Program.h"
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
  CHECK(groundError("terrain(\"good.csv\")", 3).find("3D height field is not implemented") !=
        std::string::npos);
  CHECK(groundError("terrain_random(seed = 4, roughness = 0.02, segments = 0)")
            .find("segments must be a whole number") != std::string::npos);
  CHECK(groundError("terrain_random(seed = 4, roughness = 0.02, slope = 1)")
            .find("unknown argument 'slope'") != std::string::npos);
  CHECK(groundError("terrain_random(seed = 4, roughness = 0.02)").empty());
}

TEST_CASE("terrain: gradients on a slope and at a kink; the body rests on it, never in it",
          "[terrain][gradcheck]") {
  driver::CommonOptions o;
  o.file = std::string(EVOC_SOURCE_DIR) + "/tests/data/terrain/hills.evo";
  SourceManager sources;
  DiagnosticEngine diags(sources);
  auto prog = driver::loadChecked(o, sources, diags);
  REQUIRE(prog);
  REQUIRE(prog->world.ground.profile.size() == 5);
  auto m = driver::buildModule(*prog, sources, diags);
  diags.flush(std::cerr);
  REQUIRE(m);
  ModuleInfo info(*m);
  auto cpu = codegen::compile(*m, codegen::BackendKind::Cpu);
  auto interp = codegen::compile(*m, codegen::BackendKind::Interp);
  const GroundProfile profile = prog->world.ground.profile;
  CHECK(groundHeightAt(profile, -1) == 0.1);
  CHECK(std::abs(groundHeightAt(profile, 0.4) - 0.13) < 1e-15);
  CHECK(groundHeightAt(profile, 9) == 0.12);

  Population pop(info, {ladder()});
  pop.initParams(0, 7, 0);
  {
    Rollout ro(info, *cpu);
    ro.runInit(pop, 0);
  }
  RolloutConfig rc;
  rc.steps = prog->world.steps;
  rc.groundHeight = prog->world.ground.height;
  rc.groundProfile = &profile;
  rc.checkpointK = 6;

  // The body starts on the terrain and stays above it (to rounding).
  Rollout ro(info, *cpu);
  std::vector<int64_t> times;
  for (int64_t t = 0; t < rc.steps; ++t)
    times.push_back(t);
  auto xs = ro.trajectory(pop, 0, rc, "point.x", times);
  double gap0 = 1e9, worst = 1e9, xmin = 1e9, xmax = -1e9;
  for (size_t i = 0; i < xs[0].size(); i += 2)
    gap0 = std::min(gap0, xs[0][i + 1] - groundHeightAt(profile, xs[0][i]));
  CHECK(std::abs(gap0) < 1e-12);
  for (const auto &x : xs)
    for (size_t i = 0; i < x.size(); i += 2) {
      worst = std::min(worst, x[i + 1] - groundHeightAt(profile, x[i]));
      xmin = std::min(xmin, x[i]);
      xmax = std::max(xmax, x[i]);
    }
  CHECK(worst > -1e-9);
  CHECK(xmin < 0.5);
  CHECK(xmax > 0.5); // the kink lies under the body

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
  CHECK(std::abs(iloss - loss) <= 1e-12 * std::abs(loss));
  double gmax = 0;
  for (double g : grad)
    gmax = std::max(gmax, std::abs(g));
  REQUIRE(gmax > 0);
  for (size_t i = 0; i < grad.size(); ++i)
    CHECK(std::abs(igrad[i] - grad[i]) <= 1e-9 * gmax);
  std::byte *p = pop.arena(0, Arena::Param);
  int checked = 0;
  for (int64_t i = 0; i < pop.layout(0).paramCount; i += 5) {
    double x0 = loadF(p, i, false), h = 1e-6;
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

TEST_CASE("evoc run: a lattice experiment on a random terrain runs end to end", "[terrain][run]") {
  fs::path dir = test::freshDir("terrain-run");
  REQUIRE(test::runEvoc({"run", std::string(EVOC_SOURCE_DIR) + "/examples/eldir_small.evo", "--out",
                         dir.string(), "--set",
                         "world.ground=terrain_random(seed = 2, roughness = 0.01, friction = 1)",
                         "--set", "evolve.population=4", "--set", "evolve.generations=2", "--set",
                         "world.steps=200", "--set", "evolve.learn.iterations=3", "--threads",
                         "2"}) == 0);
  auto log = test::logOf(dir);
  REQUIRE(log.size() == 2);
  CHECK(std::isfinite(log.back()["best_fitness"].get<double>()));
  std::ifstream in(dir / "resolved.evo");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("terrain_random(seed = 2") != std::string::npos);
}
