// Finite-difference checks of the adjoints of what irgen makes of the stdlib:
// the physics steps (mass_spring_noslip / _friction / _fang, in and out of
// contact; _fang also against its formulas),
// the MLP controller, the displacement loss, and windowed / max / min losses;
// and examples/eldir.evo against the reference vectors.
#include "Close.h"
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "EldirVectors.h"
#include "GradCheck.h"
#include "StdlibChecks.h"
#include "autodiff/Differentiate.h"
#include "ir/Verifier.h"
#include "irgen/IRGen.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

using namespace evoc;
using namespace evoc::ir;

namespace {

using test::lowerText;

Module lower(const std::string &physics, const std::string &loss) {
  return lowerText(physics,
                   "import \"physics/mass_spring.evo\";\n"
                   "import \"controllers/mlp.evo\";\n"
                   "world { dim = 2; dt = 0.004; steps = 50; gravity = -4.8; damping = 15;\n"
                   "  ground = flat(height = 0.1, friction = 1.0); physics = " +
                       physics + "; }\n" + loss + "\n");
}

// A 6-point strip; the even points 0.5 mm above the ground moving down
// (they hit it this step, > 1e-3 from switching), the odd ones 4 cm higher.
test::Data robot(const Module &m, bool contact) {
  test::Data d(m, {{"point", 6}, {"spring", 9}});
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  d.randomize(Role::Param, -0.3, 0.3, rng);
  auto &x = d.F("point.x"), &v = d.F("point.v");
  for (int p = 0; p < 6; ++p) {
    x[2 * p] = 0.025 * p;
    x[2 * p + 1] = (contact ? 0.1005 : 0.3) + (p % 2) * 0.043;
    v[2 * p] = u(rng);
    v[2 * p + 1] = p % 2 ? 0.5 * u(rng) : -1.0 + 0.3 * u(rng);
  }
  d.I("spring.a") = {0, 1, 2, 3, 4, 0, 1, 2, 3};
  d.I("spring.b") = {1, 2, 3, 4, 5, 2, 3, 4, 5};
  for (int s = 0; s < 9; ++s) {
    int a = d.I("spring.a")[s], b = d.I("spring.b")[s];
    double dx = x[2 * a] - x[2 * b], dy = x[2 * a + 1] - x[2 * b + 1];
    d.F("spring.rest")[s] = std::sqrt(dx * dx + dy * dy) * (1 + 0.1 * u(rng));
    d.F("spring.stiffness")[s] = 3e4;
    d.F("spring.actuation")[s] = s % 2 ? 0.1 : 0.0;
  }
  test::randomizeTimedStates(m, d, rng, u);
  return d;
}

} // namespace

TEST_CASE("stdlib physics steps and the MLP controller: adjoint vs finite differences",
          "[autodiff][stdlib]") {
  for (std::string physics : {"mass_spring_noslip", "mass_spring_friction"})
    for (bool contact : {true, false}) {
      INFO(physics << (contact ? " in contact" : " in flight"));
      Module m = lower(physics, "import \"losses/displacement.evo\";");
      test::Data d = robot(m, contact);
      CHECK_GRAD(test::gradCheck(m, m.findKernel("step"), d, 7, 3));
    }
}

TEST_CASE("stdlib loss and windowed / max / min losses: adjoint vs finite differences",
          "[autodiff][stdlib]") {
  Module m = lower("mass_spring_friction", "import \"losses/displacement.evo\";");
  test::Data d = robot(m, false);
  CHECK_GRAD(test::gradCheck(m, m.findKernel("loss"), d, 49, 3));
  Module w = lower("mass_spring_noslip",
                   "loss lift = -mean(t in 10..T: mean(point.x[t].y)) + max(point.x[T].y)"
                   " - min(point.x[0].x) + 0.5 * mean(point.x[T].x - point.x[0].x);");
  test::Data dw = robot(w, false);
  int k = w.findKernel("loss.w0");
  REQUIRE(k >= 0);
  CHECK(w.kernels[w.findKernel("loss.w0.adj")].kind == KernelKind::LossStepAdj);
  CHECK_GRAD(test::gradCheck(w, k, dw, 20, 3));
  CHECK_GRAD(test::gradCheck(w, w.findKernel("loss"), dw, 49, 3));
}

namespace {

// mass_spring_fang (docs/multitask.md, "Simulation") with a controller whose linear
// outputs reach past the clamp to [-1, 1] on some springs.
Module lowerFang() {
  return lowerText("mass_spring_fang",
                   "import \"physics/mass_spring_fang.evo\";\n"
                   "import \"losses/displacement.evo\";\n"
                   "world { dim = 2; dt = 0.004; steps = 50; gravity = -1.8; dashpot = 0.2;\n"
                   "  ground = flat(height = 0.1, friction = 1.0); physics = mass_spring_fang; }\n"
                   "controller c { inputs = 10 * point.x, point.v; hidden = 16 tanh;\n"
                   "  outputs = spring.act linear; }\n");
}

// One step of the formulas of docs/multitask.md ("Simulation"), written out
// here independently of the .evo file, from the state and actuations in `d`.
void fangStep(test::Data &d, std::vector<double> &x1, std::vector<double> &v1) {
  const double dt = 0.004, g = -1.8, zeta = 0.2, ground = 0.1;
  const auto &x = d.F("point.x"), &v = d.F("point.v"), &act = d.F("spring.act");
  std::vector<double> dv(x.size(), 0.0);
  for (size_t s = 0; s < d.I("spring.a").size(); ++s) {
    const int a = d.I("spring.a")[s], b = d.I("spring.b")[s];
    const double dx = x[2 * a] - x[2 * b], dy = x[2 * a + 1] - x[2 * b + 1];
    const double L = std::sqrt(dx * dx + dy * dy + 1e-8) + 1e-4, n = std::sqrt(dx * dx + dy * dy);
    const double ux = dx / n, uy = dy / n;
    const double target =
        d.F("spring.rest")[s] * (1 + d.F("spring.actuation")[s] * std::clamp(act[s], -1.0, 1.0));
    const double k = dt * (L - target) * d.F("spring.stiffness")[s] / L;
    const double rel = (v[2 * a] - v[2 * b]) * ux + (v[2 * a + 1] - v[2 * b + 1]) * uy;
    const double jx = k * dx + zeta * rel * ux, jy = k * dy + zeta * rel * uy;
    dv[2 * a] -= jx, dv[2 * a + 1] -= jy;
    dv[2 * b] += jx, dv[2 * b + 1] += jy;
  }
  x1.assign(x.size(), 0.0);
  v1.assign(x.size(), 0.0);
  for (size_t p = 0; 2 * p < x.size(); ++p) {
    const double vx = v[2 * p] + dv[2 * p], vy = v[2 * p + 1] + dt * g + dv[2 * p + 1];
    if (x[2 * p + 1] + dt * vy < ground && vy < -1e-4) {
      const double toi = -(x[2 * p + 1] - ground) / vy;
      x1[2 * p] = x[2 * p] + toi * vx, x1[2 * p + 1] = x[2 * p + 1] + toi * vy;
    } else {
      x1[2 * p] = x[2 * p] + dt * vx, x1[2 * p + 1] = x[2 * p + 1] + dt * vy;
      v1[2 * p] = vx, v1[2 * p + 1] = vy;
    }
  }
}

} // namespace

TEST_CASE("mass_spring_fang: one step equals docs/multitask.md's formulas; adjoint vs finite "
          "differences",
          "[autodiff][stdlib][fang]") {
  Module m = lowerFang();
  for (bool contact : {true, false}) {
    INFO((contact ? "in contact" : "in flight"));
    test::Data d = robot(m, contact);
    std::mt19937 prng(11);
    d.randomize(Role::Param, -0.6, 0.6, prng);
    d.zero(Role::Temp);
    d.run(m.findKernel("step"), 0);
    int clamped = 0, hits = 0;
    for (double a : d.F("spring.act"))
      clamped += std::fabs(a) > 1;
    std::vector<double> x1, v1;
    fangStep(d, x1, v1);
    for (size_t p = 0; 2 * p < x1.size(); ++p)
      hits += v1[2 * p] == 0 && v1[2 * p + 1] == 0;
    CHECK(clamped > 0);
    CHECK(clamped < int(d.F("spring.act").size()));
    CHECK((contact ? hits > 0 : hits == 0)); // sticky contact: those stop dead
    for (size_t i = 0; i < x1.size(); ++i) {
      INFO("entry " << i);
      CHECK(d.F("point.x.next")[i] == Approx(x1[i]).epsilon(1e-13).margin(1e-15));
      CHECK(d.F("point.v.next")[i] == Approx(v1[i]).epsilon(1e-12).margin(1e-14));
    }
    CHECK_GRAD(test::gradCheck(m, m.findKernel("step"), d, 7, 3));
  }
}

namespace {

// examples/eldir.evo lowered by irgen with `world.physics` overridden.
Module lowerExample(const std::string &physics) {
  return test::lowerFile(std::string(EVOC_SOURCE_DIR) + "/examples/eldir.evo",
                         {{"world.physics", physics}});
}

// A rollout and its adjoint over whatever state fields the module has
// (runtime protocol of docs/architecture.md); returns the loss.
double rolloutGradient(const Module &m, test::Data &d, int steps) {
  std::vector<std::pair<int, int>> state; // (State current, NextState) per field
  for (size_t n = 0; n < m.buffers.size(); ++n)
    if (m.buffers[n].role == Role::NextState)
      for (size_t s = 0; s < m.buffers.size(); ++s)
        if (m.buffers[s].role == Role::State && m.buffers[s].time == TimeRef::Current &&
            m.buffers[s].field == m.buffers[n].field)
          state.emplace_back(static_cast<int>(s), static_cast<int>(n));
  auto adj = [&](int b) { return m.findBuffer(m.buffers[b].name + ".adj"); };
  std::vector<std::vector<std::vector<double>>> traj(state.size());
  for (size_t i = 0; i < state.size(); ++i)
    traj[i].push_back(d.f[state[i].first]);
  for (int t = 0; t + 1 < steps; ++t) {
    d.zero(Role::Temp);
    d.run(m.findKernel("step"), t);
    for (size_t i = 0; i < state.size(); ++i) {
      d.f[state[i].first] = d.f[state[i].second];
      traj[i].push_back(d.f[state[i].first]);
    }
  }
  // Loss inputs: states at fixed times, by field.
  auto timed = [&](auto fn) {
    for (size_t b = 0; b < m.buffers.size(); ++b) {
      const Buffer &buf = m.buffers[b];
      if (buf.role != Role::State || buf.time == TimeRef::Current)
        continue;
      int64_t t = buf.time == TimeRef::First  ? 0
                  : buf.time == TimeRef::Last ? steps - 1
                                              : buf.fixedTime;
      for (size_t i = 0; i < state.size(); ++i)
        if (m.buffers[state[i].first].field == buf.field)
          fn(static_cast<int>(b), i, t);
    }
  };
  timed([&](int b, size_t i, int64_t t) { d.f[b] = traj[i][t]; });
  d.zero(Role::Temp);
  d.run(m.findKernel("loss"), steps - 1);
  double L = d.F("loss")[0];
  d.zero(Role::Adjoint);
  d.F("loss.adj") = {1.0};
  d.zero(Role::Temp);
  d.run(m.findKernel("loss.adj"), steps - 1);
  std::vector<std::vector<double>> a(state.size());
  for (size_t i = 0; i < state.size(); ++i)
    a[i].assign(d.f[state[i].first].size(), 0.0);
  timed([&](int b, size_t i, int64_t t) {
    if (t == steps - 1)
      a[i] = d.f[adj(b)];
  });
  for (int t = steps - 2; t >= 0; --t) {
    for (size_t i = 0; i < state.size(); ++i) {
      d.f[state[i].first] = traj[i][t];
      d.f[adj(state[i].second)] = a[i];
      std::fill(d.f[adj(state[i].first)].begin(), d.f[adj(state[i].first)].end(), 0.0);
    }
    d.zero(Role::Temp);
    d.zeroAdjointsOf(Role::Temp);
    d.run(m.findKernel("step.adj"), t);
    for (size_t i = 0; i < state.size(); ++i)
      a[i] = d.f[adj(state[i].first)];
  }
  return L;
}

} // namespace

TEST_CASE("examples/eldir.evo through irgen, autodiff and the interpreter reproduces "
          "eldir-vectors (T = 100)",
          "[autodiff][stdlib][eldir]") {
  auto robots = test::eldirVectors("robots.json")["robots"];
  auto params = test::eldirVectors("params.json")["params"];
  for (std::string contact : {"noslip", "friction"}) {
    Module m = lowerExample("mass_spring_" + contact);
    auto expected = test::eldirVectors("expected_" + contact + "_T100.json")["results"];
    for (size_t r = 0; r < robots.size(); ++r) {
      INFO(contact << " robot " << r);
      test::Data d = test::eldirVectorsData(m, robots[r], params[r]);
      double L = rolloutGradient(m, d, 100);
      test::checkEldirResult(L, d, expected[r]);
    }
  }
}
