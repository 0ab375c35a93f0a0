// The pass pipeline on random kernels and their adjoints: the IR stays
// valid and the interpreter's results do not change (to the last bit, up to
// the sign of zero that x + 0 -> x may flip).
#include <catch2/catch.hpp>

#include "GradCheck.h"
#include "RandomKernel.h"
#include "autodiff/Differentiate.h"
#include "ir/Verifier.h"
#include "opt/Passes.h"

using namespace evoc;
using namespace evoc::ir;

TEST_CASE("passes preserve results on random kernels and adjoints", "[opt][random]") {
  for (uint32_t seed = 1; seed <= 60; ++seed) {
    INFO("seed " << seed);
    Module m = test::RandomKernel(seed).build();
    autodiff::differentiate(m);
    Module o = clone(m);
    opt::runPasses(o);
    REQUIRE(verify(o).empty());
    auto run = [&](const Module &mod) {
      std::mt19937 rng(seed);
      test::Data d = test::RandomKernel::data(mod, rng);
      for (const char *b : {"out.adj", "loss.adj"})
        for (double &v : d.F(b))
          v = std::uniform_real_distribution<double>(-1, 1)(rng);
      d.run(mod.findKernel("step"), 0);
      d.zero(Role::Temp);
      d.zeroAdjointsOf(Role::Temp);
      d.run(mod.findKernel("step.adj"), 0);
      return d;
    };
    test::Data a = run(m), b = run(o);
    for (const char *buf : {"out", "loss", "x.adj", "p.adj"})
      CHECK(a.F(buf) == b.F(buf));
  }
}
