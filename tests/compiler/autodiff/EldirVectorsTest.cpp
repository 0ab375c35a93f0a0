// The interpreter on the hand-built ELDiR kernels reproduces the reference
// losses and gradients of the reference vectors (docs/evolution.md, "The
// reference vectors"; T = 100).
#include <catch2/catch.hpp>

#include "EldirFixture.h"
#include "EldirVectors.h"
#include "Rollout.h"
#include "autodiff/Differentiate.h"

using namespace evoc;
using namespace evoc::ir;

namespace {
void checkVectors(int steps) {
  auto robots = test::eldirVectors("robots.json")["robots"];
  auto params = test::eldirVectors("params.json")["params"];
  for (auto contact : {test::Contact::Friction, test::Contact::NoSlip}) {
    std::string cname = contact == test::Contact::Friction ? "friction" : "noslip";
    auto expected =
        test::eldirVectors("expected_" + cname + "_T" + std::to_string(steps) + ".json")["results"];
    test::EldirOptions o;
    o.contact = contact;
    o.hidden = 32;
    Module m = test::eldirModule(o);
    autodiff::differentiate(m);
    for (size_t r = 0; r < robots.size(); ++r) {
      INFO(cname << " robot " << r);
      test::Data d = test::eldirVectorsData(m, robots[r], params[r]);
      double L = test::rolloutGradient(m, d, steps);
      test::checkEldirResult(L, d, expected[r]);
    }
  }
}
} // namespace

TEST_CASE("ELDiR reference vectors: loss and gradients, T = 100", "[autodiff][eldir]") {
  checkVectors(100);
}

// About 3 s: run with `evoc_autodiff_tests "[slow]"`.
TEST_CASE("ELDiR reference vectors: loss and gradients, T = 1000", "[.][slow][eldir]") {
  checkVectors(1000);
}
