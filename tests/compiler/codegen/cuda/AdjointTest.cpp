// The adjoint kernels autodiff derives (after the optimisation pipeline):
// they compile with NVRTC, their block schedule is what we expect, and their
// emulated CUDA matches the interpreter.
#include <catch2/catch.hpp>

#include <filesystem>
#include <unistd.h>

#include "Emulator.h"
#include "Harness.h"
#include "autodiff/Differentiate.h"
#include "codegen/cuda/CudaBackend.h"
#include "codegen/cuda/KernelPlan.h"
#include "ir/Interpreter.h"
#include "opt/Passes.h"

using namespace evoc;
using namespace evoc::test;
namespace fs = std::filesystem;
using codegen::cuda::LoopPlan;

namespace {

ir::Module differentiated(MassSpringIds &d, ir::Precision p) {
  ir::Module m = makeMassSpringModule(d, p, true);
  m.kernels.pop_back(); // the adjoint-shapes kernel is not a forward kernel's adjoint
  autodiff::differentiate(m);
  opt::runPasses(m);
  return m;
}

/// Inputs of one adjoint call: state, body, params as the forward had them,
/// NextState and Output adjoints seeded, every other buffer zero.
RobotBuffers adjointInputs(const ir::Module &m, const MassSpringIds &d, const MassSpringRobot &r) {
  RobotBuffers rb = makeBuffers(m, d, r);
  for (size_t b = 0; b < m.buffers.size(); ++b) {
    const ir::Buffer &B = m.buffers[b];
    bool seed = B.role == ir::Role::Adjoint && (m.buffers[B.primal].role == ir::Role::NextState ||
                                                m.buffers[B.primal].role == ir::Role::Output);
    if (B.role == ir::Role::Temp || (B.role == ir::Role::Adjoint && !seed))
      rb.zero(static_cast<int>(b));
    if (seed)
      for (size_t i = 0; i < rb.length(static_cast<int>(b)); ++i)
        rb.set(static_cast<int>(b), i, std::sin(0.3 + 0.77 * double(i + 13 * b)));
  }
  for (size_t i = 0; i < rb.length(d.v); ++i) // moving, so contact branches differ
    rb.set(d.v, i, 0.5 * std::cos(1.3 * double(i)));
  return rb;
}

} // namespace

TEST_CASE("autodiff's adjoints: schedule, NVRTC, emulation vs interpreter", "[cuda][autodiff]") {
  MassSpringIds d;
  ir::Module m = differentiated(d, ir::Precision::F64);
  int stepAdj = m.findKernel("step.adj"), lossAdj = m.findKernel("loss.adj");
  REQUIRE(stepAdj >= 0);
  REQUIRE(lossAdj >= 0);

  auto plan = codegen::cuda::planKernel(m, m.kernels[stepAdj]);
  int parallel = 0, serial = 0;
  for (const auto &[loop, lp] : plan.loops)
    (lp.mode == LoopPlan::Mode::Parallel ? parallel : serial)++;
  INFO("step.adj: " << parallel << " parallel, " << serial << " serial top-level loops, "
                    << plan.sites.size() << " recorded scatter-add sites");
  CHECK(serial == 0);
  CHECK(parallel >= 5);
  CHECK_FALSE(plan.sites.empty()); // x.adj at spring endpoints at least
  // The controller's adjoints (hidden.adj[u] in the spring loop, in.adj[i] in
  // the unit loop) replay in parallel; only endpoint scatters stay serial.
  size_t transposed = 0;
  for (const auto &[loop, lp] : plan.loops)
    transposed += lp.transposed.size();
  CHECK(transposed >= 2);
  // Its unit loop (recompute of W1 in, then the adjoint's inner loop) runs a
  // warp per unit.
  size_t splitLoops = 0;
  for (const auto &[loop, lp] : plan.loops)
    splitLoops += lp.split.size();
  CHECK(splitLoops >= 3);

  codegen::CompileOptions opts;
  opts.useCache = false;
  CHECK(codegen::cuda::emitCubin(m, "sm_90", opts).size() > 1000);

  fs::path dir = fs::temp_directory_path() / ("evoc-cuda-adj-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  EmulatedExecutable emu(m, dir.string());
  std::mt19937_64 rng(5);
  MassSpringRobot robot = makeRandomRobot(rng, 5, 9);
  for (int k : {stepAdj, lossAdj}) {
    INFO("kernel " << m.kernels[k].name);
    RobotBuffers ref = adjointInputs(m, d, robot), got = adjointInputs(m, d, robot);
    ir::interpret(m, k, ref.ptrs.data(), ref.sizes.data(), 4);
    emu.run(k, got.ptrs.data(), got.sizes.data(), 4);
    int compared = 0;
    for (size_t b = 0; b < m.buffers.size(); ++b)
      if (m.buffers[b].role == ir::Role::Adjoint) {
        INFO("buffer " << m.buffers[b].name);
        CHECK(maxRelDiff(ref, got, static_cast<int>(b)) <= 1e-11);
        ++compared;
      }
    CHECK(compared > 4);
  }
  fs::remove_all(dir);
}
