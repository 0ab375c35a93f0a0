// Rollouts: whole-rollout gradients against finite differences,
// checkpointed == full tape, memory accounting, NaN detection, back ends.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>

#include "ChainFixture.h"
#include "Close.h"
#include "core/Rollout.h"
#include "support/Error.h"

using namespace evoc;
using namespace evoc::runtime;
using namespace evoc::test;

namespace {

struct Setup {
  ir::Module m;
  ModuleInfo info;
  std::unique_ptr<codegen::Executable> exe;
  Population pop;
  explicit Setup(const ChainOptions &o, std::vector<Robot> robots = {ladderRobot(3)},
                 codegen::BackendKind kind = codegen::BackendKind::Interp)
      : m(chainModuleWithAdjoints(o)), info(m), exe(codegen::compile(m, kind)),
        pop(info, std::move(robots)) {
    for (int r = 0; r < pop.size(); ++r) {
      pop.initParams(r, 3, uint64_t(r));
      // Non-zero biases, so their gradients are exercised too.
      int b = m.findBuffer("ctrl.b");
      for (int64_t i = 0; i < pop.layout(r).count[b]; ++i)
        reinterpret_cast<double *>(pop.buffer(r, b))[i] = 0.1 * std::sin(double(i));
    }
  }
  std::vector<double> grad(int r) {
    const double *g = reinterpret_cast<const double *>(pop.arena(r, Arena::Grad));
    return {g, g + pop.layout(r).paramCount};
  }
};

RolloutConfig config(int64_t T, int64_t K = 0, bool full = false) {
  RolloutConfig c;
  c.steps = T;
  c.checkpointK = K;
  c.fullTape = full;
  c.fullTapeBudget = 0; // checkpointed unless K or full say otherwise, whatever the robot's size
  c.groundHeight = 0.0;
  return c;
}

} // namespace

TEST_CASE("Whole-rollout gradient matches central finite differences", "[rollout][gradcheck]") {
  ChainOptions o;
  o.lossStep = true;
  o.lossStepBegin = 5;
  o.carryField = true;
  o.gravity = -1.0;
  o.fixedTime = GENERATE(-1, 0, 17, 39);
  Setup s(o);
  Rollout ro(s.info, *s.exe);
  const int64_t T = 40;
  auto out = ro.run(s.pop, 0, config(T), true);
  REQUIRE(out.valid);
  auto g = s.grad(0);
  double gmax = 0;
  for (double x : g)
    gmax = std::max(gmax, std::abs(x));
  REQUIRE(gmax > 0);
  double *p = reinterpret_cast<double *>(s.pop.arena(0, Arena::Param));
  const int64_t n = s.pop.layout(0).paramCount;
  // The central difference of the loss in parameter i.
  auto centralDiff = [&](int64_t i) {
    double h = 1e-6, keep = p[i];
    p[i] = keep + h;
    double lp = ro.run(s.pop, 0, config(T), false).loss;
    p[i] = keep - h;
    double lm = ro.run(s.pop, 0, config(T), false).loss;
    p[i] = keep;
    return (lp - lm) / (2 * h);
  };
  double worst = 0;
  for (int64_t i = 0; i < n; i += 7) { // every 7th weight, and all biases (the tail)
    double fd = centralDiff(i);
    worst = std::max(worst, std::abs(fd - g[i]) / gmax);
    INFO("param " << i << " fd " << fd << " adjoint " << g[i]);
    CHECK(std::abs(fd - g[i]) <= 1e-6 * gmax + 1e-7 * std::abs(fd));
  }
  for (int64_t i = n - s.pop.layout(0).count[s.m.findBuffer("ctrl.b")]; i < n; ++i)
    CHECK(std::abs(centralDiff(i) - g[i]) <= 1e-6 * gmax);
  WARN("gradcheck: worst |fd - adjoint| / max|grad| = " << worst);
}

TEST_CASE("Checkpointed gradients equal full-tape gradients bit for bit", "[rollout]") {
  ChainOptions o;
  o.lossStep = true;
  o.lossStepBegin = 3;
  o.carryField = true;
  o.fixedTime = 4;
  Setup s(o, {ladderRobot(3), ladderRobot(2)});
  Rollout ro(s.info, *s.exe);
  for (int64_t T : {5, 6, 37}) {
    for (int r = 0; r < 2; ++r) {
      auto full = ro.run(s.pop, r, config(T, 0, true), true);
      REQUIRE(full.valid);
      auto gFull = s.grad(r);
      for (int64_t K : {1, 2, 3, 6, 7, 0, 36, 100}) {
        auto ck = ro.run(s.pop, r, config(T, K), true);
        REQUIRE(ck.valid);
        auto g = s.grad(r);
        INFO("T " << T << " K " << K << " robot " << r);
        CHECK(ck.loss == full.loss);
        CHECK(std::memcmp(g.data(), gFull.data(), g.size() * sizeof(double)) == 0);
      }
    }
  }
}

TEST_CASE("Checkpointed memory is at most 10% of a full tape at T = 1000", "[rollout][memory]") {
  Setup s(ChainOptions{}, {ladderRobot(2)});
  Rollout ro(s.info, *s.exe);
  auto ck = ro.run(s.pop, 0, config(1000), true);
  auto gck = s.grad(0);
  auto full = ro.run(s.pop, 0, config(1000, 0, true), true);
  REQUIRE(ck.valid);
  REQUIRE(full.valid);
  CHECK(resolveCheckpointK(config(1000)) == 32);
  CHECK(ck.memory.fullTapeBytes == 1000 * ck.memory.stateBytes);
  CHECK(full.memory.stateStoreBytes >= full.memory.fullTapeBytes);
  double ratio = double(ck.memory.stateStoreBytes) / double(full.memory.stateStoreBytes);
  WARN("checkpointed / full-tape state memory at T = 1000: "
       << ratio << " (" << ck.memory.storedStates << " vs " << full.memory.storedStates
       << " states)");
  CHECK(ratio <= 0.10);
  CHECK(std::memcmp(gck.data(), s.grad(0).data(), gck.size() * sizeof(double)) == 0);
}

TEST_CASE("The state check finds the first value beyond the limit, NaN and infinity included",
          "[rollout][nan]") {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double limit = 1e6;
  for (int64_t n : {0, 1, 2, 3, 63, 64, 65, 130}) {
    std::vector<double> v(static_cast<size_t>(n));
    std::vector<float> f(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) { // in bounds, the limit itself included
      v[size_t(i)] = (i % 3 == 0 ? limit : -0.5 * limit) * (i % 2 ? -1 : 1);
      f[size_t(i)] = float(v[size_t(i)]);
    }
    CHECK(firstBeyondLimit(v.data(), n, limit) == -1);
    CHECK(firstBeyondLimit(f.data(), n, float(limit)) == -1);
    for (int64_t at = 0; at < n; ++at)
      for (double bad : {nan, -nan, inf, -inf, 1.0000001 * limit, -1.0000001 * limit}) {
        std::vector<double> w = v;
        std::vector<float> g = f;
        w[size_t(at)] = bad;
        g[size_t(at)] = float(bad);
        if (at + 1 < n) { // a later bad value does not hide the first
          w[size_t(n - 1)] = nan;
          g[size_t(n - 1)] = float(nan);
        }
        INFO("n = " << n << ", at " << at << ": " << bad);
        CHECK(firstBeyondLimit(w.data(), n, limit) == at);
        CHECK(firstBeyondLimit(g.data(), n, float(limit)) == at);
      }
  }
}

TEST_CASE("A rollout whose whole tape fits the budget keeps it", "[rollout][memory]") {
  Setup s(ChainOptions{}, {ladderRobot(2)});
  Rollout ro(s.info, *s.exe);
  RolloutConfig c = config(1000);
  c.fullTapeBudget = kFullTapeBudgetBytes;
  auto chosen = ro.run(s.pop, 0, c, true);
  auto g = s.grad(0);
  REQUIRE(chosen.valid);
  CHECK(chosen.memory.windowSteps == 999);
  CHECK(chosen.memory.stateStoreBytes >= chosen.memory.fullTapeBytes);
  // Just above the tape's size it checkpoints, with the same gradient.
  const int64_t tape = 1000 * (chosen.memory.stateBytes + chosen.memory.tapeBytes);
  c.fullTapeBudget = tape - 1;
  auto ck = ro.run(s.pop, 0, c, true);
  REQUIRE(ck.valid);
  CHECK(ck.memory.windowSteps == 32);
  CHECK(std::memcmp(g.data(), s.grad(0).data(), g.size() * sizeof(double)) == 0);
  c.fullTapeBudget = tape;
  CHECK(ro.run(s.pop, 0, c, true).memory.windowSteps == 999);
  // An explicit window length wins over the budget.
  c.checkpointK = 10;
  CHECK(ro.run(s.pop, 0, c, true).memory.windowSteps == 10);
  CHECK(resolveCheckpointK(c, 8, 0) == 10);
  c.checkpointK = 0;
  CHECK(resolveCheckpointK(c, 0, 0) == 32); // sizes unknown: sqrt(T - 1)
}

TEST_CASE("NaN/inf rollouts mark the robot invalid without crashing", "[rollout]") {
  Robot bad = ladderRobot(3, 1e9); // far too stiff for dt: explodes
  Robot nanPoint = ladderRobot(2);
  nanPoint.points[3] = std::nan("");
  Setup s(ChainOptions{}, {ladderRobot(3), bad, nanPoint});
  Rollout ro(s.info, *s.exe);
  auto ok = ro.run(s.pop, 0, config(200), true);
  CHECK(ok.valid);
  RolloutConfig unbounded = config(200); // so that it runs on to inf and NaN
  unbounded.stateLimit = std::numeric_limits<double>::infinity();
  auto b = ro.run(s.pop, 1, unbounded, true);
  CHECK_FALSE(b.valid);
  CHECK(b.error.find("robot 1") != std::string::npos);
  CHECK(b.error.find("NaN or infinite") != std::string::npos);
  CHECK(b.stepsRun < 199);
  auto n = ro.run(s.pop, 2, config(200), true);
  CHECK_FALSE(n.valid);
  CHECK(n.error.find("at t = 0") != std::string::npos);
  // The workspace is still usable afterwards.
  auto again = ro.run(s.pop, 0, config(200), true);
  CHECK(again.valid);
  CHECK(again.loss == ok.loss);
}

TEST_CASE("Trajectory records the state at the requested times", "[rollout]") {
  Setup s(ChainOptions{});
  Rollout ro(s.info, *s.exe);
  auto tr = ro.trajectory(s.pop, 0, config(30), "point.x", {0, 10, 29});
  REQUIRE(tr.size() == 3);
  CHECK(tr[0][0] == 0.0);
  CHECK(tr[0].size() == 12);
  CHECK(tr[2] != tr[1]);
  CHECK_THROWS_AS(ro.trajectory(s.pop, 0, config(30), "point.q", {0}), Error);
}

TEST_CASE("f32 modules run and agree with f64 roughly", "[rollout]") {
  ChainOptions o32;
  o32.precision = ir::Precision::F32;
  ir::Module m = chainModuleWithAdjoints(o32);
  ModuleInfo info(m);
  auto exe = interp(m);
  Population pop(info, {ladderRobot(3)});
  pop.initParams(0, 3, 0);
  Rollout ro(info, *exe);
  auto out = ro.run(pop, 0, config(40), true);
  REQUIRE(out.valid);
  Setup s64(ChainOptions{});
  s64.pop.initParams(0, 3, 0);
  Rollout ro64(s64.info, *s64.exe);
  auto out64 = ro64.run(s64.pop, 0, config(40), true);
  CHECK(out.loss == Approx(out64.loss).epsilon(1e-3));
  test::Gap gap;
  test::widen(gap, s64.pop.grads(0).at("w").data, pop.grads(0).at("w").data);
  CHECK(gap.worst <= 1e-3 * gap.scale);
}

TEST_CASE("Every back end gives the interpreter's loss and gradient", "[rollout][backends]") {
  ChainOptions o;
  o.lossStep = true;
  Setup ref(o);
  Rollout rref(ref.info, *ref.exe);
  auto want = rref.run(ref.pop, 0, config(100), true);
  REQUIRE(want.valid);
  auto gwant = ref.grad(0);
  for (auto kind : {codegen::BackendKind::Cpu, codegen::BackendKind::Cuda}) {
    std::unique_ptr<Setup> s;
    try {
      s = std::make_unique<Setup>(o, std::vector<Robot>{ladderRobot(3)}, kind);
    } catch (const Error &e) {
      WARN("back end skipped: " << e.what());
      continue;
    }
    Rollout ro(s->info, *s->exe);
    auto got = ro.run(s->pop, 0, config(100), true);
    REQUIRE(got.valid);
    CHECK(got.loss == Approx(want.loss).epsilon(1e-9));
    test::Gap gap;
    test::widen(gap, gwant, s->grad(0));
    CHECK(gap.worst <= 1e-7 * gap.scale);
  }
}

TEST_CASE("Loss times outside the rollout and late per-step reads are errors", "[rollout]") {
  ChainOptions o;
  o.fixedTime = 50;
  Setup s(o);
  Rollout ro(s.info, *s.exe);
  CHECK_THROWS_WITH(ro.run(s.pop, 0, config(20), true), Catch::Contains("t = 50"));
  ChainOptions ls;
  ls.lossStep = true;
  ir::Module m2 = chainModule(ls);
  ir::Buffer late = m2.buffers[m2.findBuffer("point.x@T")];
  late.name = "point.x@late";
  int lb = int(m2.buffers.size());
  m2.buffers.push_back(late);
  // Make the per-step loss read the last state.
  auto &k = m2.kernels.back();
  for (auto &inst : k.body.insts)
    if (inst->body)
      for (auto &in2 : inst->body->insts)
        if (in2->op == ir::Op::Load)
          in2->buffer = lb;
  CHECK_THROWS_WITH(ModuleInfo(m2), Catch::Contains("last or a fixed time"));
}

TEST_CASE("Short rollouts: one and two states", "[rollout]") {
  Setup s(ChainOptions{});
  Rollout ro(s.info, *s.exe);
  auto one = ro.run(s.pop, 0, config(1), true);
  REQUIRE(one.valid);
  CHECK(one.loss == 0.0); // x[T-1] == x[0]
  CHECK(one.stepsRun == 0);
  auto two = ro.run(s.pop, 0, config(2), true);
  REQUIRE(two.valid);
  CHECK(two.stepsRun == 1);
  CHECK_THROWS_AS(ro.run(s.pop, 0, config(0), true), Error);
}

TEST_CASE("A rollout that blows up but stays finite is invalid, with the reason", "[rollout]") {
  // Too stiff for dt = 0.01: it diverges by a constant factor per step, and
  // 200 steps end at a loss of about -1e73, every number finite.
  Robot blowsUp = ladderRobot(2, 1.2e4);
  Setup s(ChainOptions{}, {ladderRobot(2), blowsUp});
  Rollout ro(s.info, *s.exe);
  RolloutConfig unbounded = config(200);
  unbounded.stateLimit = std::numeric_limits<double>::infinity();
  // Without the bound it is "valid" and its loss would win any selection.
  auto hazard = ro.run(s.pop, 1, unbounded, true);
  REQUIRE(hazard.valid);
  CHECK(hazard.loss < -1e60);
  // With the default bound (world.state_limit = 1e6) it is invalid, and says why.
  CHECK(config(200).stateLimit == 1e6);
  auto b = ro.run(s.pop, 1, config(200), true);
  CHECK_FALSE(b.valid);
  INFO(b.error);
  CHECK(b.error.find("robot 1: the simulation blew up: the state 'point.") != std::string::npos);
  CHECK(b.error.find("beyond world.state_limit = 1e+06") != std::string::npos);
  CHECK(b.error.find("NaN") == std::string::npos);
  CHECK(b.stepsRun < 100); // stopped where it crossed the bound
  // A stable robot is untouched by the bound: same loss, same gradient.
  auto stable = ro.run(s.pop, 0, unbounded, true);
  auto g = s.grad(0);
  auto bounded = ro.run(s.pop, 0, config(200), true);
  REQUIRE(stable.valid);
  REQUIRE(bounded.valid);
  CHECK(bounded.loss == stable.loss);
  CHECK(s.grad(0) == g);
  // A lower bound catches it earlier; the message gives that bound.
  RolloutConfig tight = config(200);
  tight.stateLimit = 10;
  auto t = ro.run(s.pop, 1, tight, true);
  CHECK_FALSE(t.valid);
  CHECK(t.stepsRun < b.stepsRun);
  CHECK(t.error.find("beyond world.state_limit = 10") != std::string::npos);
}
