// Finite-difference checks of the adjoints of what irgen makes of the stdlib:
// both physics steps (mass_spring_noslip / _friction, in and out of contact),
// the MLP controller, the displacement loss, and windowed / max / min losses.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "GradCheck.h"
#include "autodiff/Differentiate.h"
#include "ir/Verifier.h"
#include "irgen/IRGen.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

using namespace evoc;
using namespace evoc::ir;

namespace {

Module lower(const std::string &physics, const std::string &loss) {
  auto dir = std::filesystem::temp_directory_path() / "evoc-autodiff-test";
  std::filesystem::create_directories(dir);
  std::string path = (dir / (physics + ".evo")).string();
  std::ofstream(path) << "import \"physics/mass_spring.evo\";\n"
                         "import \"controllers/mlp.evo\";\n"
                         "world { dim = 2; dt = 0.004; steps = 50; gravity = -4.8; damping = 15;\n"
                         "  ground = flat(height = 0.1, friction = 1.0); physics = " +
                             physics + "; }\n" + loss + "\n";
  SourceManager sources;
  DiagnosticEngine diags(sources);
  sema::CheckOptions opts;
  opts.ignoreEnv = true;
  opts.stdlibDirs = {std::string(EVOC_SOURCE_DIR) + "/stdlib"};
  std::optional<Module> m;
  if (auto prog = sema::checkFile(path, opts, sources, diags))
    m = irgen::lowerProgram(*prog, sources, diags);
  std::ostringstream errs;
  diags.flush(errs);
  INFO(errs.str());
  REQUIRE(m);
  autodiff::differentiate(*m);
  auto verr = verify(*m);
  INFO((verr.empty() ? "" : verr[0]));
  REQUIRE(verr.empty());
  return std::move(*m);
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
  // Loss inputs (states at fixed times) get their own random values.
  for (size_t b = 0; b < m.buffers.size(); ++b)
    if (m.buffers[b].role == Role::State && m.buffers[b].time != TimeRef::Current)
      for (double &val : d.f[b])
        val = 0.2 + 0.5 * (u(rng) + 0.5);
  return d;
}

#define CHECK_GRAD(rep)                                                        \
  do {                                                                         \
    auto r_ = (rep);                                                           \
    INFO(r_.where);                                                            \
    CHECK(r_.checked > 0);                                                     \
    CHECK(r_.finite);                                                          \
    CHECK(r_.maxRelErr < 1e-6);                                                \
  } while (0)

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
