// Acceptance: the LLVM back end and the interpreter agree on the loss and the
// gradient of the stdlib physics, controller and loss (examples/*.evo through
// the whole compiler) on random ELDiR robots, T = 1000, f64.
#include <catch2/catch.hpp>

#include <cmath>
#include <iostream>

#include "Backends.h"
#include "app/Driver.h"
#include "app/Pipeline.h"
#include "core/Layout.h"
#include "core/Train.h"
#include "evolve/bodies/Lattice.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

using namespace evoc;

namespace {

ir::Module compileEvo(const std::string &file) {
  return app::compileFile(std::string(EVOC_SOURCE_DIR) + "/" + file).module;
}

void agreeOnRandomRobots(const std::string &file, int rows, int cols, int nRobots, uint64_t seed) {
  ir::Module m = compileEvo(file);
  runtime::ModuleInfo info(m);
  std::vector<runtime::Robot> robots = evolve::randomLatticeRobots(rows, cols, nRobots, seed);
  runtime::TrainOptions o;
  o.steps = 1000;
  o.iterations = 0; // one forward + backward
  o.groundHeight = 0.1;
  o.seed = seed;
  auto backends = test::backendsUnderTest(m, 1e-9, 1e-9);
  auto ref = runtime::train(info, *backends[0].exe, robots, o);
  for (size_t be = 1; be < backends.size(); ++be) {
    auto got = runtime::train(info, *backends[be].exe, robots, o);
    for (int r = 0; r < nRobots; ++r) {
      INFO(file << ", robot " << r << ", back end " << backends[be].name);
      REQUIRE(ref[size_t(r)].valid);
      REQUIRE(got[size_t(r)].valid);
      const double lossRtol = backends[be].rtol == 0 ? 0 : 1e-9;
      INFO("loss " << got[size_t(r)].loss << " vs interpreter " << ref[size_t(r)].loss);
      CHECK(test::agrees(got[size_t(r)].loss, ref[size_t(r)].loss, lossRtol));
      // Gradient: relative to its largest entry.
      double scale = 0, worst = 0;
      for (const auto &[name, t] : ref[size_t(r)].grad)
        for (double g : t.data)
          scale = std::max(scale, std::fabs(g));
      for (const auto &[name, t] : ref[size_t(r)].grad) {
        const auto &gt = got[size_t(r)].grad.at(name).data;
        REQUIRE(gt.size() == t.data.size());
        for (size_t e = 0; e < gt.size(); ++e)
          worst = std::max(worst, std::fabs(gt[e] - t.data[e]));
      }
      INFO("largest gradient difference " << worst << ", largest entry " << scale);
      CHECK(scale > 0);
      CHECK(worst <= (backends[be].rtol == 0 ? 0.0 : 1e-7 * scale));
    }
  }
}

} // namespace

TEST_CASE("ELDiR public framework (6x10, friction): back ends agree on loss and gradient",
          "[llvm][acceptance]") {
  agreeOnRandomRobots("examples/eldir_small.evo", 6, 10, 20, 17);
}

TEST_CASE("ELDiR paper (13x22, noslip): back ends agree on loss and gradient",
          "[llvm][acceptance]") {
  agreeOnRandomRobots("examples/eldir.evo", 13, 22, 2, 23);
}
