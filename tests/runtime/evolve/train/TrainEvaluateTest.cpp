// The engine with the real trainer: lattice bodies learn a controller through
// runtime::train (the runtime tests' spring-chain module, interpreter back
// end), and the run directory, pictures and resume work end to end.
#include "TestSupport.h"

#include "ChainFixture.h"
#include "evolve/record/RunDir.h"
#include "evolve/train/TrainEvaluate.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

using namespace evoc::evolve;
using json = nlohmann::json;

namespace {

struct Setup {
  evoc::ir::Module module = evoc::test::chainModuleWithAdjoints();
  evoc::runtime::ModuleInfo info{module};
  std::unique_ptr<evoc::codegen::Executable> exe = evoc::test::interp(module);
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

namespace {

// The fixture's input vector: 2 fixed entries, then 2 per point (what
// ControllerGen records for a compiled controller).
void setInputLayout(evoc::ir::Module &m) {
  m.sets[size_t(m.findSet("input"))].layout = {{-1, 2}, {m.findSet("point"), 2}};
}

} // namespace

TEST_CASE("train evaluate: a child of an unchanged body starts from its parent's weights",
          "[train][inherit]") {
  Setup s;
  setInputLayout(s.module);
  EvoRng rng(3);
  Phenotype ph = s.config.body->express(*s.config.body->sample(rng));
  EvalBatch parent;
  parent.ids = {0};
  parent.robots = {ph.robot};
  auto pe = trainEvaluate(s.info, *s.exe, s.opts)(parent);
  const json trained = pe[0].paramsFn();
  // iterations = 0: one forward pass of the initial weights (then its params).
  auto once = s.opts;
  once.iterations = 0;
  EvalBatch child;
  child.ids = {1};
  child.robots = {ph.robot};
  child.inherit = {Inheritance{trained, ph.pointKeys, ph.springKeys, ph.pointKeys, ph.springKeys}};
  auto ce = trainEvaluate(s.info, *s.exe, once)(child);
  CHECK(ce[0].paramsFn() == trained);
  const int64_t springs = ph.robot.numSprings(), inputs = 2 + 2 * ph.robot.numPoints();
  CHECK(ce[0].inherited == springs * inputs + springs);
  // Its first loss is its parent's best: the loss of the very same weights.
  REQUIRE(ce[0].losses.size() == 1);
  CHECK(ce[0].losses[0] == *std::min_element(pe[0].losses.begin(), pe[0].losses.end()));

  // Nothing to inherit (generation 0): seeded exactly as without inheritance.
  child.inherit[0].parentParams = nullptr;
  EvalBatch plain = child;
  plain.inherit.clear();
  auto a = trainEvaluate(s.info, *s.exe, s.opts)(child);
  auto b = trainEvaluate(s.info, *s.exe, s.opts)(plain);
  CHECK(a[0].losses == b[0].losses);
  CHECK(a[0].paramsFn() == b[0].paramsFn());
  CHECK(a[0].inherited == 0);
  CHECK(a[0].losses[0] != ce[0].losses[0]);
}

TEST_CASE("train evaluate: inherit = weights through the engine, and its resume",
          "[train][inherit]") {
  Setup s;
  setInputLayout(s.module);
  s.config.inheritWeights = true;
  s.config.generations = 5;
  // Every body's trained weights and what it was given to inherit.
  std::map<uint64_t, json> trainedOf;
  std::map<uint64_t, Inheritance> given;
  EvaluateFn inner = trainEvaluate(s.info, *s.exe, s.opts);
  EvaluateFn spy = [&](const EvalBatch &batch) {
    REQUIRE(batch.inherit.size() == batch.robots.size());
    auto evals = inner(batch);
    for (size_t i = 0; i < evals.size(); ++i) {
      evals[i].params = evals[i].paramsFn();
      trainedOf[batch.ids[i]] = evals[i].params;
      given[batch.ids[i]] = batch.inherit[i];
    }
    return evals;
  };
  auto root = test::scratchDir("train_inherit");
  runEvolution(s.config, spy, s.run(root / "a"));
  int withParent = 0, sharedMost = 0;
  for (int g = 0; g < s.config.generations; ++g) {
    json pop =
        json::parse(readTextFile(root / "a" / fmt::format("gen_{:04d}", g) / "population.json"));
    for (const auto &k : pop["offspring"]) {
      const uint64_t id = k["id"].get<uint64_t>();
      if (!given.count(id))
        continue; // reused: never trained
      const Inheritance &in = given.at(id);
      const int64_t parent = k["parent"].get<int64_t>();
      INFO("generation " << g << ", child " << id << " of " << parent);
      CHECK(k.contains("first_loss"));
      // The child's own measures, from its curve: gain = first - min.
      REQUIRE(k.contains("metrics"));
      CHECK(k["metrics"]["learning_gain"].get<double>() >= 0);
      CHECK(k["metrics"]["grad_norm_cv"].is_number());
      if (g == 0 || !trainedOf.count(uint64_t(parent))) {
        CHECK(in.parentParams.is_null());
        continue;
      }
      // The parent's trained weights (the best of its curve), nothing else.
      CHECK(in.parentParams == trainedOf.at(uint64_t(parent)));
      ++withParent;
      // Every lattice child flips a cell; the rows of its kept springs, and
      // in them the columns of its kept points and the fixed inputs, are
      // its parent's.
      auto shared = [](const std::vector<uint64_t> &a, const std::vector<uint64_t> &b) {
        std::set<uint64_t> in(a.begin(), a.end());
        return int64_t(std::count_if(b.begin(), b.end(), [&](uint64_t k) { return in.count(k); }));
      };
      const int64_t sp = shared(in.parentSpringKeys, in.springKeys),
                    pt = shared(in.parentPointKeys, in.pointKeys);
      CHECK(k["inherited"].get<int64_t>() == sp * (2 + 2 * pt) + sp);
      sharedMost += sp * 2 > int64_t(in.springKeys.size());
    }
  }
  CHECK(withParent > 0);
  CHECK(sharedMost > 0);
  json state = json::parse(readTextFile(root / "a" / "state.json"));
  CHECK(state["config"]["inherit"] == "weights");
  for (const auto &m : state["population"])
    CHECK(m.contains("params"));

  // A split run (3 generations, then resumed to 5) ends as the whole one.
  auto three = s.config;
  three.generations = 3;
  runEvolution(three, inner, s.run(root / "b"));
  runEvolution(s.config, inner, s.run(root / "b", true));
  CHECK(test::logWithoutTiming(root / "a") == test::logWithoutTiming(root / "b"));
  CHECK(readTextFile(root / "a" / "best.json") == readTextFile(root / "b" / "best.json"));
  CHECK(readTextFile(root / "a" / "gen_0004" / "population.json") ==
        readTextFile(root / "b" / "gen_0004" / "population.json"));
  // The resume cannot switch inheritance off.
  auto off = s.config;
  off.inheritWeights = false;
  off.generations = 6;
  CHECK_THROWS_WITH(runEvolution(off, inner, s.run(root / "b", true)), Catch::Contains("inherit"));
}

TEST_CASE("train evaluate: a body whose simulation blows up but stays finite is invalid, not "
          "the winner",
          "[train]") {
  Setup s;
  s.opts.steps = 200;
  s.opts.iterations = 2;
  // Too stiff for the fixture's dt = 0.01: diverges to a loss of about -1e73
  // within 200 steps, every number finite (tests/runtime/core/RolloutTest.cpp).
  EvalBatch batch;
  batch.ids = {0, 1};
  batch.seeds = {designSeed(5, 0), designSeed(5, 1)};
  batch.robots = {evoc::test::ladderRobot(2), evoc::test::ladderRobot(2, 1.2e4)};
  FitnessSpec nonfiniteOnly; // what `invalid = nonfinite();` (examples/jump.evo) asks for
  auto judged = [&](const Evaluation &e) {
    return e.valid ? judge(e.losses, nonfiniteOnly) : Verdict{false, 0, e.reason};
  };
  // Without the bound the blown-up body is "valid" and by far the fittest.
  auto unbounded = s.opts;
  unbounded.stateLimit = std::numeric_limits<double>::infinity();
  auto hazard = trainEvaluate(s.info, *s.exe, unbounded, nonfiniteOnly)(batch);
  REQUIRE(hazard.size() == 2);
  Verdict sane = judged(hazard[0]), exploded = judged(hazard[1]);
  REQUIRE(sane.valid);
  REQUIRE(exploded.valid);
  CHECK(exploded.fitness > 1e60);
  CHECK(exploded.fitness > sane.fitness);
  // With the default bound it is invalid with the reason, and the sane body
  // is judged exactly as before.
  auto evals = trainEvaluate(s.info, *s.exe, s.opts, nonfiniteOnly)(batch);
  REQUIRE(evals.size() == 2);
  Verdict a = judged(evals[0]), b = judged(evals[1]);
  CHECK(a.valid);
  CHECK(a.fitness == sane.fitness);
  CHECK_FALSE(b.valid);
  INFO(b.reason);
  CHECK(b.reason.find("the simulation blew up") != std::string::npos);
  CHECK(b.reason.find("world.state_limit") != std::string::npos);
}
