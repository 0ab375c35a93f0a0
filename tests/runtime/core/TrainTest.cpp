// Optimisers, the learning loop, thread-count determinism, `evoc sim`.
#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>

#include "ChainFixture.h"
#include "InitKernel.h"
#include "autodiff/Differentiate.h"
#include "core/JsonIO.h"
#include "core/ThreadPool.h"
#include "core/Train.h"
#include "support/Error.h"

using namespace evoc;
using namespace evoc::runtime;
using namespace evoc::test;

TEST_CASE("Normalised step moves by step / (||g|| + 1e-6) * g", "[optim]") {
  OptimizerConfig c;
  c.step = 0.2;
  Optimizer opt(c, 2);
  double p[2] = {1.0, -1.0}, g[2] = {3.0, 4.0};
  opt.update(p, g, false);
  double s = 0.2 / (5.0 + 1e-6);
  CHECK(p[0] == 1.0 - s * 3.0);
  CHECK(p[1] == -1.0 - s * 4.0);
  float pf[2] = {1.0f, -1.0f}, gf[2] = {3.0f, 4.0f};
  Optimizer optf(c, 2);
  optf.update(pf, gf, true);
  CHECK(pf[0] == Approx(1.0 - s * 3.0).epsilon(1e-6));
}

TEST_CASE("Adam: bias-corrected first steps", "[optim]") {
  OptimizerConfig c;
  c.kind = OptimizerKind::Adam;
  c.lr = 0.01;
  Optimizer opt(c, 2);
  double p[2] = {0.5, 0.5}, g[2] = {2.0, -1e-3};
  opt.update(p, g, false);
  // Step 1: m^ = g, v^ = g^2, so each parameter moves by lr * sign(g).
  CHECK(p[0] == Approx(0.5 - 0.01).epsilon(1e-9));
  CHECK(p[1] == Approx(0.5 + 0.01).epsilon(1e-6));
  double p1 = 0.5 - 0.01 * 2.0 / (2.0 + 1e-8);
  CHECK(p[0] == p1);
  double g2[2] = {-2.0, 0.0};
  opt.update(p, g2, false);
  double m = 0.9 * 0.1 * 2.0 + 0.1 * -2.0, v = 0.999 * 0.001 * 4 + 0.001 * 4;
  double mh = m / (1 - 0.81), vh = v / (1 - 0.999 * 0.999);
  CHECK(p[0] == Approx(p1 - 0.01 * mh / (std::sqrt(vh) + 1e-8)).epsilon(1e-14));
  CHECK(opt.steps() == 2);
  CHECK(parseOptimizerKind("adam") == OptimizerKind::Adam);
  CHECK_THROWS_AS(parseOptimizerKind("rmsprop"), Error);
}

TEST_CASE("Learning lowers the loss; one seed, same numbers for any thread count",
          "[train][threads]") {
  ir::Module m = chainModuleWithAdjoints();
  ModuleInfo info(m);
  auto exe = interp(m);
  std::vector<Robot> robots = {ladderRobot(3), ladderRobot(2), ladderRobot(4), ladderRobot(3, 150),
                               ladderRobot(2, 80)};
  TrainOptions o;
  o.steps = 60;
  o.iterations = 6;
  o.optimizer.step = 0.1;
  o.seed = 9;
  std::vector<std::vector<TrainResult>> runs;
  for (int threads : {1, 2, 3}) {
    o.threads = threads;
    runs.push_back(train(info, *exe, robots, o));
  }
  for (size_t r = 0; r < robots.size(); ++r) {
    const auto &a = runs[0][r];
    REQUIRE(a.valid);
    // 6 updates: 6 forward + backward passes, then the final weights once
    // more, forward only (docs/evolution.md, "ELDiR controller, learning and fitness").
    REQUIRE(a.losses.size() == 7);
    CHECK(a.gradNorms.size() == 6);
    CHECK(*std::min_element(a.losses.begin(), a.losses.end()) < a.losses[0]);
    CHECK(a.robotSteps == 7 * 59);
    for (size_t k = 1; k < runs.size(); ++k) {
      CHECK(runs[k][r].losses == a.losses); // bit-identical
      CHECK(runs[k][r].grad.at("w").data == a.grad.at("w").data);
      CHECK(runs[k][r].params.at("b").data == a.params.at("b").data);
    }
  }
  // Leaving out the large result copies changes nothing else.
  TrainOptions lean = o;
  lean.keepGrad = lean.keepParams = lean.keepBestParams = false;
  auto leanRes = train(info, *exe, robots, lean);
  CHECK(leanRes[0].losses == runs[0][0].losses);
  CHECK(leanRes[0].grad.empty());
  CHECK(leanRes[0].params.empty());
  CHECK(leanRes[0].bestParams.empty());
  // Held in slices of one robot each (a population larger than the memory
  // for one): the same numbers, the ids the same.
  TrainOptions sliced = o;
  sliced.threads = 2;
  sliced.sliceBytes = 1;
  auto slices = train(info, *exe, robots, sliced);
  for (size_t r = 0; r < robots.size(); ++r) {
    CHECK(slices[r].losses == runs[0][r].losses);
    CHECK(slices[r].params.at("w").data == runs[0][r].params.at("w").data);
    CHECK(slices[r].bestParams.at("w").data == runs[0][r].bestParams.at("w").data);
  }
  std::vector<ParamSet> given;
  for (const auto &res : runs[0])
    given.push_back(res.params);
  TrainOptions givenOnce = o;
  givenOnce.iterations = 0;
  auto whole = train(info, *exe, robots, givenOnce, nullptr, &given);
  givenOnce.sliceBytes = 1;
  auto slicedGiven = train(info, *exe, robots, givenOnce, nullptr, &given);
  for (size_t r = 0; r < robots.size(); ++r)
    CHECK(slicedGiven[r].losses == whole[r].losses);
  // Ids, not batch positions, seed the weights.
  o.threads = 2;
  std::vector<uint64_t> ids = {2};
  auto single = train(info, *exe, {robots[2]}, o, &ids);
  CHECK(single[0].losses == runs[0][2].losses);
  // Adam also learns.
  o.optimizer.kind = OptimizerKind::Adam;
  o.optimizer.lr = 0.05;
  auto adam = train(info, *exe, {robots[0]}, o);
  CHECK(adam[0].losses.back() < adam[0].losses.front());
  // bestParams are those of the lowest loss: re-evaluating them reproduces it.
  auto best = std::min_element(adam[0].losses.begin(), adam[0].losses.end());
  TrainOptions once = o;
  once.iterations = 0;
  std::vector<ParamSet> init = {adam[0].bestParams};
  auto re = train(info, *exe, {robots[0]}, once, nullptr, &init);
  CHECK(re[0].losses.size() == 1);
  CHECK(re[0].losses[0] == *best);
  // The last entry is the final weights: re-evaluating them reproduces it,
  // and when it is the lowest loss, bestParams are the final weights.
  std::vector<ParamSet> fin = {adam[0].params};
  auto reFinal = train(info, *exe, {robots[0]}, once, nullptr, &fin);
  CHECK(reFinal[0].losses[0] == adam[0].losses.back());
  CHECK((adam[0].bestParams.at("w").data == adam[0].params.at("w").data) ==
        (adam[0].losses.back() == *best));
}

TEST_CASE("Invalid robots are reported in the batch, the others train", "[train]") {
  ir::Module m = chainModuleWithAdjoints();
  ModuleInfo info(m);
  auto exe = interp(m);
  TrainOptions o;
  o.steps = 100;
  o.iterations = 3;
  o.threads = 2;
  auto res = train(info, *exe, {ladderRobot(2), ladderRobot(3, 1e9), ladderRobot(3)}, o);
  CHECK(res[0].valid);
  CHECK_FALSE(res[1].valid);
  CHECK(res[1].error.find("robot 1") != std::string::npos);
  CHECK(std::isnan(res[1].loss));
  CHECK(res[2].valid);
  CHECK(res[2].losses.size() == 4); // 3 updates + the final weights
  REQUIRE(res[2].gradNorms.size() == 3);
  double ss = 0;
  for (double g : res[2].grad.at("w").data)
    ss += g * g;
  for (double g : res[2].grad.at("b").data)
    ss += g * g;
  CHECK(res[2].gradNorms[2] == Approx(std::sqrt(ss)).epsilon(1e-12));
  // Early stop: a threshold below the first |loss| ends the curve there.
  o.stopAbove = std::abs(res[2].losses[0]) * 0.5;
  std::vector<uint64_t> id2 = {2};
  auto stopped = train(info, *exe, {ladderRobot(3)}, o, &id2);
  CHECK(stopped[0].stoppedEarly);
  CHECK(stopped[0].losses.size() == 1);
  CHECK(stopped[0].valid);
  o.stopAbove = 1e9;
  o.stopJump = std::abs(res[2].losses[1] - res[2].losses[0]) * 0.5;
  stopped = train(info, *exe, {ladderRobot(3)}, o, &id2);
  CHECK(stopped[0].losses.size() == 2);
  CHECK(stopped[0].losses == std::vector<double>(res[2].losses.begin(), res[2].losses.begin() + 2));
}

TEST_CASE("A body with nothing to learn stops after one pass when asked; others train as before",
          "[train]") {
  ir::Module m = chainModuleWithAdjoints();
  ModuleInfo info(m);
  auto exe = interp(m);
  Robot passive = ladderRobot(3);
  for (auto &s : passive.springs)
    s.actuation = 0; // the controller drives nothing
  const std::vector<Robot> robots = {passive, ladderRobot(3)};
  for (OptimizerKind kind : {OptimizerKind::NormalizedStep, OptimizerKind::Adam}) {
    TrainOptions o;
    o.steps = 40;
    o.iterations = 4;
    o.optimizer.kind = kind;
    o.optimizer.step = 0.1;
    o.seed = 2;
    auto plain = train(info, *exe, robots, o);
    // Without the stop: the same loss 5 times over, a zero gradient every time.
    REQUIRE(plain[0].losses.size() == 5);
    for (double l : plain[0].losses)
      CHECK(l == plain[0].losses[0]);
    CHECK(plain[0].gradNorms[0] == 0);
    CHECK_FALSE(plain[0].nothingToLearn);
    o.stopWithoutGradient = true;
    auto stopped = train(info, *exe, robots, o);
    REQUIRE(stopped[0].losses.size() == 1);
    CHECK(stopped[0].losses[0] == plain[0].losses[0]);
    CHECK(stopped[0].nothingToLearn);
    CHECK(stopped[0].valid);
    CHECK(stopped[0].robotSteps * 4 < plain[0].robotSteps);
    CHECK(stopped[0].bestParams.at("w").data == plain[0].bestParams.at("w").data);
    CHECK(stopped[1].losses == plain[1].losses);
    CHECK_FALSE(stopped[1].nothingToLearn);
  }
}

TEST_CASE("simulate: PARAMS.json in, OUT.json out, bad params named", "[train][sim]") {
  ir::Module m = chainModuleWithAdjoints();
  auto exe = interp(m);
  std::vector<Robot> robots = {ladderRobot(2), ladderRobot(3)};
  SimOptions o;
  o.steps = 50;
  o.threads = 2;
  SimResult first = simulate(m, *exe, robots, std::nullopt, o);
  REQUIRE(first.results.size() == 2);
  CHECK(first.results[0].losses.size() == 1);
  CHECK(first.robotStepsPerSecond > 0);
  // Feed the seeded parameters back through PARAMS.json: the same loss.
  nlohmann::json pj = {
      {"params",
       {paramSetToJson(first.results[0].params), paramSetToJson(first.results[1].params)}}};
  auto params = parseParamsJson(pj.dump());
  SimResult again = simulate(m, *exe, robots, params, o);
  CHECK(again.results[1].loss == first.results[1].loss);
  CHECK(again.results[1].grad.at("w").data == first.results[1].grad.at("w").data);
  auto out = simResultToJson(again);
  CHECK(out["results"][1]["grad"]["w"].size() == size_t(robots[1].numSprings()));
  CHECK(out["results"][1]["grad"]["w"][0].size() == size_t(2 + 2 * robots[1].numPoints()));
  // Parameters for the wrong robot: an error naming robot and field.
  std::swap(params[0], params[1]);
  CHECK_THROWS_WITH(simulate(m, *exe, robots, params, o), Catch::Contains("robot 0, field"));
  params.pop_back();
  CHECK_THROWS_WITH(simulate(m, *exe, robots, params, o), Catch::Contains("1 robots"));
}

TEST_CASE("Thread pool: every item once, exceptions reach the caller", "[threads]") {
  ThreadPool pool(3);
  CHECK(pool.size() == 3);
  for (int n : {0, 1, 7, 100}) {
    std::vector<int> hits(size_t(n), 0);
    std::vector<std::atomic<int>> workers(3);
    pool.parallelFor(n, [&](int i, int w) {
      ++hits[size_t(i)];
      ++workers[size_t(w)];
    });
    for (int h : hits)
      CHECK(h == 1);
  }
  CHECK_THROWS_WITH(pool.parallelFor(50,
                                     [](int i, int) {
                                       if (i == 13)
                                         throw Error("item 13 failed");
                                     }),
                    "item 13 failed");
  int count = 0;
  pool.parallelFor(5, [&](int, int) { __atomic_add_fetch(&count, 1, __ATOMIC_SEQ_CST); });
  CHECK(count == 5);
}

TEST_CASE("Init kernels run after seeding, before given parameters", "[train]") {
  ir::Module m = chainModule();
  appendInitKernel(m, "ctrl.b"); // b[s] = rest[s] + x-coordinate of point 1
  autodiff::differentiate(m);
  ModuleInfo info(m);
  REQUIRE(info.init.size() == 1);
  auto exe = interp(m);
  Robot r = ladderRobot(3);
  TrainOptions o;
  o.steps = 10;
  auto res = train(info, *exe, {r}, o);
  const auto &bias = res[0].params.at("b").data;
  for (int s = 0; s < r.numSprings(); ++s)
    CHECK(bias[size_t(s)] == r.springs[size_t(s)].rest + r.points[2]);
  std::vector<ParamSet> given = {res[0].params};
  given[0]["b"].data.assign(given[0]["b"].data.size(), 0.5);
  auto res2 = train(info, *exe, {r}, o, nullptr, &given);
  CHECK(res2[0].params.at("b").data == given[0]["b"].data);
}
