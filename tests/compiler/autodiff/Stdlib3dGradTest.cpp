// Finite-difference checks of the adjoints of the 3D stdlib physics
// (mass_spring3_noslip / _friction, mass_spring_fang3), in and out of
// contact, and one step of each against its formulas written out here.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>

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

/// The ELDiR world in 3D with `physics`, or Fang's 3D world for the fang
/// model; the controller reaches past the clamp to [-1, 1] for the latter.
Module lower3(const std::string &physics) {
  const bool fang = physics == "mass_spring_fang3";
  std::string text =
      fang ? "import \"physics/mass_spring_fang3.evo\";\n"
             "world { dim = 3; dt = 0.004; steps = 50; gravity = -1.8; dashpot = 0.1;\n"
             "  ground = flat(height = 0.1, friction = 0.4); physics = mass_spring_fang3; }\n"
             "controller c { inputs = 10 * point.x, point.v; hidden = 16 tanh;\n"
             "  outputs = spring.act linear; }\n"
           : "import \"physics/mass_spring3.evo\";\n"
             "import \"controllers/mlp.evo\";\n"
             "world { dim = 3; dt = 0.004; steps = 50; gravity = -4.8; damping = 15;\n"
             "  ground = flat(height = 0.1, friction = 1.0); physics = " +
                 physics + "; }\n";
  return lowerText(physics, text + "import \"losses/displacement.evo\";\n");
}

constexpr int kPoints = 6, kSprings = 11;

// A 6-point 3D ribbon; the even points 0.5 mm above the ground moving down
// (they hit it this step, > 1e-3 from switching), the odd ones 4 cm higher;
// horizontal velocities in both x and y, so friction acts on both.
test::Data robot3(const Module &m, bool contact, bool fang) {
  test::Data d(m, {{"point", kPoints}, {"spring", kSprings}});
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  d.randomize(Role::Param, -0.3, 0.3, rng);
  auto &x = d.F("point.x"), &v = d.F("point.v");
  for (int p = 0; p < kPoints; ++p) {
    x[3 * p] = 0.025 * (p / 2) + 0.004 * u(rng);
    x[3 * p + 1] = 0.03 * (p % 2) + 0.004 * u(rng);
    x[3 * p + 2] = (contact ? 0.1005 : 0.3) + (p % 2) * 0.043;
    v[3 * p] = 2 * u(rng);
    v[3 * p + 1] = 2 * u(rng);
    v[3 * p + 2] = p % 2 ? 0.5 * u(rng) : -0.4 + 0.1 * u(rng);
  }
  d.I("spring.a") = {0, 2, 4, 1, 3, 0, 2, 0, 1, 2, 3};
  d.I("spring.b") = {2, 4, 1, 3, 5, 1, 3, 3, 4, 5, 4};
  for (int s = 0; s < kSprings; ++s) {
    int a = d.I("spring.a")[s], b = d.I("spring.b")[s];
    double d2 = 0;
    for (int c = 0; c < 3; ++c)
      d2 += (x[3 * a + c] - x[3 * b + c]) * (x[3 * a + c] - x[3 * b + c]);
    d.F("spring.rest")[s] = std::sqrt(d2) * (1 + 0.1 * u(rng));
    d.F("spring.stiffness")[s] = fang ? 1e3 : 1e4;
    d.F("spring.actuation")[s] = s % 2 ? 0.1 : 0.0;
  }
  test::randomizeTimedStates(m, d, rng, u);
  return d;
}

using V3 = std::array<double, 3>;

V3 at(const std::vector<double> &f, int i) { return {f[3 * i], f[3 * i + 1], f[3 * i + 2]}; }
double dot3(const V3 &a, const V3 &b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/// Velocity increments of every point from the springs: the ELDiR impulse,
/// plus Fang's clamp and dashpot when `fang`.
std::vector<double> springImpulses(test::Data &d, bool fang, double dt, double zeta) {
  const auto &x = d.F("point.x"), &v = d.F("point.v"), &act = d.F("spring.act");
  std::vector<double> dv(x.size(), 0.0);
  for (size_t s = 0; s < d.I("spring.a").size(); ++s) {
    const int a = d.I("spring.a")[s], b = d.I("spring.b")[s];
    V3 dd, rel;
    for (int c = 0; c < 3; ++c)
      dd[c] = x[3 * a + c] - x[3 * b + c], rel[c] = v[3 * a + c] - v[3 * b + c];
    const double n = std::sqrt(dot3(dd, dd));
    const double L = fang ? std::sqrt(dot3(dd, dd) + 1e-8) + 1e-4 : n + 1e-4;
    const double a_ = fang ? std::clamp(act[s], -1.0, 1.0) : act[s];
    const double target = d.F("spring.rest")[s] * (1 + d.F("spring.actuation")[s] * a_);
    const double k = dt * (L - target) * d.F("spring.stiffness")[s] / L;
    const double proj = fang ? dot3(rel, dd) / n : 0;
    for (int c = 0; c < 3; ++c) {
      const double j = k * dd[c] + (fang ? zeta * proj * dd[c] / n : 0);
      dv[3 * a + c] -= j;
      dv[3 * b + c] += j;
    }
  }
  return dv;
}

/// One step of the 3D laws written out from docs/evolution.md ("ELDiR
/// simulation step") and docs/multitask.md ("Simulation"), independently of
/// the .evo files.
void step3(const std::string &physics, test::Data &d, std::vector<double> &x1,
           std::vector<double> &v1) {
  const bool fang = physics == "mass_spring_fang3";
  const double dt = 0.004, ground = 0.1;
  const double g = fang ? -1.8 : -4.8, mu = fang ? 0.4 : 1.0;
  const auto &x = d.F("point.x"), &v = d.F("point.v");
  const std::vector<double> dv = springImpulses(d, fang, dt, 0.1);
  x1.assign(x.size(), 0.0);
  v1.assign(x.size(), 0.0);
  const double decay = fang ? 1.0 : std::exp(-dt * 15);
  for (int p = 0; p < kPoints; ++p) {
    V3 w, q = at(x, p);
    for (int c = 0; c < 3; ++c)
      w[c] = decay * v[3 * p + c] + (c == 2 ? dt * g : 0) + dv[3 * p + c];
    V3 xn = q, vn = w;
    if (physics == "mass_spring3_friction") {
      if (q[2] + dt * w[2] < ground) {
        const double toi =
            std::clamp(std::fabs(q[2] - ground) / (std::fabs(w[2]) + 1e-10), 0.0, dt);
        const double speed = std::hypot(w[0], w[1]);
        const double cut = speed > 0 ? mu * std::min(std::fabs(w[2]), speed) / speed : 0;
        vn = {w[0] - w[0] * cut, w[1] - w[1] * cut, 0};
        for (int c = 0; c < 3; ++c)
          xn[c] = q[c] + toi * w[c] + (toi < dt ? (dt - toi) * vn[c] : 0);
        xn[2] = std::max(xn[2], ground);
      } else {
        for (int c = 0; c < 3; ++c)
          xn[c] = q[c] + dt * w[c];
      }
    } else if (q[2] + dt * w[2] < ground && w[2] < -1e-4) {
      const double toi = -(q[2] - ground) / w[2];
      vn = {0, 0, 0};
      if (fang) // each horizontal component toward 0 by mu |v_z|, not past it
        for (int c = 0; c < 2; ++c)
          vn[c] = w[c] < 0 ? std::min(0.0, w[c] + mu * -w[2]) : std::max(0.0, w[c] - mu * -w[2]);
      for (int c = 0; c < 3; ++c)
        xn[c] = q[c] + toi * w[c] + (fang ? (dt - toi) * vn[c] : 0);
    } else {
      for (int c = 0; c < 3; ++c)
        xn[c] = q[c] + dt * w[c];
    }
    for (int c = 0; c < 3; ++c)
      x1[3 * p + c] = xn[c], v1[3 * p + c] = vn[c];
  }
}

} // namespace

TEST_CASE("3D stdlib physics: one step equals the laws written out; adjoint vs finite "
          "differences, in contact and in flight",
          "[autodiff][stdlib][3d]") {
  for (std::string physics : {"mass_spring3_noslip", "mass_spring3_friction", "mass_spring_fang3"})
    for (bool contact : {true, false}) {
      INFO(physics << (contact ? " in contact" : " in flight"));
      Module m = lower3(physics);
      test::Data d = robot3(m, contact, physics == "mass_spring_fang3");
      std::mt19937 prng(11);
      d.randomize(Role::Param, -0.6, 0.6, prng);
      d.zero(Role::Temp);
      d.run(m.findKernel("step"), 0);
      std::vector<double> x1, v1;
      step3(physics, d, x1, v1);
      int hits = 0;
      for (int p = 0; p < kPoints; ++p)
        hits += v1[3 * p + 2] == 0;
      CHECK((contact ? hits > 0 : hits == 0));
      for (size_t i = 0; i < x1.size(); ++i) {
        INFO("entry " << i);
        CHECK(d.F("point.x.next")[i] == Approx(x1[i]).epsilon(1e-13).margin(1e-15));
        CHECK(d.F("point.v.next")[i] == Approx(v1[i]).epsilon(1e-12).margin(1e-14));
      }
      if (contact && physics != "mass_spring3_noslip") {
        // Friction acted: some point in contact kept horizontal speed, less
        // than it came in with.
        int slid = 0;
        for (int p = 0; p < kPoints; ++p)
          slid += v1[3 * p + 2] == 0 && (v1[3 * p] != 0 || v1[3 * p + 1] != 0);
        CHECK(slid > 0);
      }
      d.zero(Role::Temp);
      CHECK_GRAD(test::gradCheck(m, m.findKernel("step"), d, 7, 3));
    }
}
