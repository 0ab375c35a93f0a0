// Randomised finite-difference checks: random smooth expressions placed in
// random loop structures (gathers, scatter-adds, temps, nested reductions,
// values used across loop levels) must all get correct adjoints.
#include <catch2/catch.hpp>

#include "GradCheck.h"
#include "RandomKernel.h"
#include "autodiff/Differentiate.h"
#include "ir/Builder.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

using namespace evoc;
using namespace evoc::ir;

TEST_CASE("random smooth kernels: adjoint vs finite differences", "[autodiff][random]") {
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    Module m = test::RandomKernel(seed).build();
    autodiff::differentiate(m);
    auto errs = verify(m);
    INFO("seed " << seed << (errs.empty() ? "" : ": " + errs[0]));
    REQUIRE(errs.empty());
    std::mt19937 rng(seed);
    test::Data d = test::RandomKernel::data(m, rng);
    auto rep = test::gradCheck(m, 0, d, 0, seed);
    INFO(rep.where << "; normwise " << rep.normErr);
    CHECK(rep.finite);
    // Random kernels span many orders of magnitude: the gradient as a whole
    // must agree to 1e-6 (normwise), every entry to 1e-3 relative.
    CHECK(rep.normErr < 1e-6);
    CHECK(rep.maxRelErr < 1e-3);
  }
}
