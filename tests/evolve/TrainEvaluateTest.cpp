// The engine with the real trainer: lattice bodies learn a controller through
// runtime::train (the runtime tests' spring-chain module, interpreter back
// end), and the run directory, pictures and resume work end to end.
#include "TestSupport.h"

#include "../runtime/Fixtures.h"
#include "evolve/RunDir.h"
#include "evolve/TrainEvaluate.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cmath>

using namespace evoc::evolve;
using json = nlohmann::json;

namespace {

struct Setup {
  evoc::ir::Module module = evoc::testing::chainModuleWithAdjoints();
  evoc::runtime::ModuleInfo info{module};
  std::unique_ptr<evoc::codegen::Executable> exe = evoc::testing::interp(module);
  evoc::runtime::TrainOptions opts;
  EvolutionConfig config;
  Setup() {
    opts.steps = 12;
    opts.iterations = 3;
    opts.optimizer = {evoc::runtime::OptimizerKind::NormalizedStep, 0.2};
    opts.seed = 5;
    opts.threads = 2;
    config = test::smallConfig(4, 3, 5);
    spec.rows = 3;
    spec.cols = 4;
    spec.stiffness = 100; // stable at the fixture's dt = 0.01
    config.body = std::make_shared<LatticeModel>(spec);
  }
  LatticeSpec spec;
  RunOptions run(const std::filesystem::path &dir, bool resume = false) {
    RunOptions o;
    o.dir = dir;
    o.resume = resume;
    o.progress = nullptr;
    o.gait = trainGait(info, *exe, opts, {0, 5, 11});
    return o;
  }
};

} // namespace

TEST_CASE("train evaluate: evolution with the real trainer", "[train]") {
  Setup s;
  auto root = test::scratchDir("train");
  auto summary = runEvolution(s.config, trainEvaluate(s.info, *s.exe, s.opts), s.run(root / "a"));
  CHECK(summary.lastGeneration == 2);
  auto log = RunDir::open(root / "a").readLog();
  REQUIRE(log.size() == 3);
  CHECK(log[0]["robot_steps_per_second"].get<double>() > 0);
  json best = json::parse(readTextFile(root / "a" / "best.json"));
  // The fixture's controller: "w" [spring, input], "b" [spring].
  REQUIRE(best["params"].contains("w"));
  CHECK(best["params"]["w"].size() == best["springs"].size());
  CHECK(best["params"]["b"].size() == best["springs"].size());
  CHECK(best["losses"].size() == 4); // 3 updates, then the final weights once more
  double bestNegLoss = -INFINITY;
  for (const auto &l : best["losses"])
    bestNegLoss = std::max(bestNegLoss, -l.get<double>());
  CHECK(best["fitness"].get<double>() == bestNegLoss);
  // The gait picture holds the three requested moments.
  std::string svg = readTextFile(root / "a" / "best.svg");
  CHECK(svg.find("t = 0") != std::string::npos);
  CHECK(svg.find("t = 11") != std::string::npos);
  CHECK(svg.find("rest pose") == std::string::npos);
  // The trained parameters reproduce themselves through JSON.
  auto ps = paramsFromJson(best["params"]);
  CHECK(ps.at("w").shape[0] == int64_t(best["springs"].size()));

  // With the invalid rules as early-stop rules nothing changes here (every
  // curve is valid), and a tiny LossAbove stops every body after one loss.
  auto rules = test::smallConfig(4, 3, 5).fitness;
  EvalBatch batch;
  batch.ids = {0, 1};
  LatticeBody body(s.spec);
  EvoRng rng(2);
  batch.robots = {body.express(body.sample(rng)), body.express(body.sample(rng))};
  auto plain = trainEvaluate(s.info, *s.exe, s.opts)(batch);
  auto early = trainEvaluate(s.info, *s.exe, s.opts, rules)(batch);
  CHECK(plain[0].losses == early[0].losses);
  rules.invalid = {{InvalidRule::Kind::LossAbove, 0.0}};
  auto stopped = trainEvaluate(s.info, *s.exe, s.opts, rules)(batch);
  CHECK(stopped[0].losses.size() == 1);
  CHECK(stopped[1].losses.size() == 1);
  CHECK_FALSE(judge(stopped[0].losses, rules).valid);

  // Resume with the real trainer: 2 generations + 1 equals 3.
  auto two = s.config;
  two.generations = 2;
  runEvolution(two, trainEvaluate(s.info, *s.exe, s.opts), s.run(root / "b"));
  runEvolution(s.config, trainEvaluate(s.info, *s.exe, s.opts), s.run(root / "b", true));
  CHECK(test::logWithoutTiming(root / "a") == test::logWithoutTiming(root / "b"));
  CHECK(readTextFile(root / "a" / "best.json") == readTextFile(root / "b" / "best.json"));
}
