// Finite-difference checks of the ELDiR step (both contact models, away from
// contact switching), its MLP controller, the loss, and a whole rollout.
#include <catch2/catch.hpp>

#include <cmath>
#include <tuple>

#include "CheckGrad.h"
#include "EldirFixture.h"
#include "Rollout.h"
#include "autodiff/Differentiate.h"
#include "ir/Verifier.h"

using namespace evoc;
using namespace evoc::ir;

namespace {

// A state where the even points hit the ground this step (margin > 1e-3)
// and the odd ones fly free, with random horizontal velocities.
test::Data contactState(const Module &m, std::mt19937 &rng) {
  test::Data d = test::eldirRobot(m, 6, 0.1005, rng);
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  auto &v = d.F("point.v");
  for (size_t p = 0; p < v.size() / 2; ++p) {
    v[2 * p] = u(rng);
    v[2 * p + 1] = p % 2 ? 0.5 * u(rng) : -1.0 + 0.3 * u(rng);
  }
  return d;
}

} // namespace

TEST_CASE("ELDiR step adjoint vs finite differences, both contact models",
          "[autodiff][eldir][gradcheck]") {
  for (auto contact : {test::Contact::NoSlip, test::Contact::Friction}) {
    for (bool bodyDiff : {false, true}) {
      INFO((contact == test::Contact::NoSlip ? "noslip" : "friction")
           << (bodyDiff ? ", body differentiable" : ""));
      test::EldirOptions o;
      o.contact = contact;
      o.bodyDifferentiable = bodyDiff;
      Module m = test::eldirModule(o);
      autodiff::differentiate(m);
      REQUIRE(verify(m).empty());
      CHECK((m.findBuffer("spring.rest.adj") >= 0) == bodyDiff);
      std::mt19937 rng(11);
      test::Data d = contactState(m, rng);
      CHECK_GRAD(test::gradCheck(m, m.findKernel("step"), d, 3, 17));
    }
  }
}

TEST_CASE("ELDiR loss adjoint vs finite differences", "[autodiff][eldir][gradcheck]") {
  Module m = test::eldirModule({});
  autodiff::differentiate(m);
  std::mt19937 rng(2);
  test::Data d = test::eldirRobot(m, 5, 0.2, rng);
  d.randomize(Role::State, 0, 1, rng);
  CHECK_GRAD(test::gradCheck(m, m.findKernel("loss"), d, 0, 4));
}

TEST_CASE("whole rollout (T = 50): adjoint vs finite differences", "[autodiff][eldir][rollout]") {
  for (auto contact : {test::Contact::NoSlip, test::Contact::Friction}) {
    INFO((contact == test::Contact::NoSlip ? "noslip" : "friction"));
    test::EldirOptions o;
    o.contact = contact;
    o.hidden = 6;
    Module m = test::eldirModule(o);
    autodiff::differentiate(m);
    std::mt19937 rng(23);
    // Starts 2 cm above the ground: falls, lands and walks within 50 steps.
    test::Data d = test::eldirRobot(m, 5, 0.12, rng);
    const int T = 50;
    test::Data g = d;
    double L = test::rolloutGradient(m, g, T);
    CHECK(std::isfinite(L));
    // Relative error per entry, entries below 1e-3 of the largest measured
    // against 1e-3 of the largest (finite-difference noise floor).
    std::vector<std::tuple<std::string, size_t, double, double>> rows;
    double largest = 0;
    for (const char *name : {"mlp.w1", "mlp.b1", "mlp.w2", "mlp.b2", "point.x", "point.v"}) {
      auto &p = d.F(name);
      const auto &ad = g.F(std::string(name) + ".adj");
      for (size_t e = 0; e < p.size(); e += (std::string(name) == "mlp.w1" ? 5 : 1)) {
        double x = p[e], h = 1e-6 * (1 + std::fabs(x)), v[4];
        const double off[4] = {-2, -1, 1, 2};
        for (int s = 0; s < 4; ++s) {
          test::Data f = d;
          f.F(name)[e] = x + off[s] * h;
          v[s] = test::rolloutLoss(m, f, T);
        }
        double fd = (v[0] - 8 * v[1] + 8 * v[2] - v[3]) / (12 * h);
        largest = std::max(largest, std::fabs(fd));
        rows.emplace_back(name, e, fd, ad[e]);
      }
    }
    double worst = 0;
    std::string where;
    int checked = 0;
    for (auto &[name, e, fd, ad] : rows) {
      double err = std::fabs(fd - ad) / std::max({std::fabs(fd), std::fabs(ad), 1e-3 * largest});
      ++checked;
      if (err > worst) {
        worst = err;
        where = name + "[" + std::to_string(e) + "] fd " + std::to_string(fd) + " ad " +
                std::to_string(ad);
      }
    }
    INFO("checked " << checked << ", worst at " << where);
    CHECK(checked > 50);
    CHECK(largest > 1e-4);
    CHECK(worst < 1e-5);
  }
}
