// The driver launcher: the "no driver" error everywhere, and on a machine
// with a GPU, CUDA vs interpreter agreement (skipped, with a note, without one).
#include <catch2/catch.hpp>

#include <cstdlib>

#include "Harness.h"
#include "MassSpring.h"
#include "codegen/Executable.h"
#include "codegen/cuda/CudaBackend.h"
#include "ir/Interpreter.h"
#include "support/Error.h"

using namespace evoc;
using namespace evoc::test;

TEST_CASE("without libcuda, --backend cuda says why in one sentence", "[cuda][driver]") {
  MassSpringIds d;
  ir::Module m = makeMassSpringModule(d, ir::Precision::F64, true);
  // Force the missing-library path on every machine.
  ::setenv("EVOC_LIBCUDA", "libcuda-not-here.so.1", 1);
  std::string why;
  CHECK_FALSE(codegen::cuda::cudaAvailable(&why));
  CHECK(why == "--backend cuda is unavailable: libcuda-not-here.so.1 not found (no NVIDIA "
               "driver on this machine); use --backend cpu.");
  CHECK_THROWS_WITH(
      codegen::cuda::compileCuda(m),
      Catch::Contains("--backend cuda is unavailable: libcuda-not-here.so.1 not found"));
  // Through the back-end-neutral factory type as well.
  CHECK_THROWS_AS(codegen::cuda::compileCuda(m), Error);
  ::unsetenv("EVOC_LIBCUDA");
  if (!codegen::cuda::cudaAvailable(&why)) {
    CHECK(why.rfind("--backend cuda is unavailable: ", 0) == 0);
    CHECK_THROWS_AS(codegen::cuda::compileCuda(m), Error);
  }
}

TEST_CASE("on a GPU: CUDA and the interpreter agree, per robot and batched", "[cuda][gpu]") {
  if (!gpuOrSkip())
    return;
  MassSpringIds d;
  std::mt19937_64 rng(7);
  for (auto prec : {ir::Precision::F64, ir::Precision::F32}) {
    ir::Module m = makeMassSpringModule(d, prec, true);
    codegen::CompileOptions opts;
    auto exe = codegen::cuda::compileCuda(m, opts);
    INFO(exe->deviceName());
    const bool f64 = prec == ir::Precision::F64;
    // f32: fewer steps, so rounding differences (reduction order, CUDA's vs
    // libm's last ulp) cannot grow through contact events into a failure.
    const double tol = f64 ? 1e-9 : 5e-3;
    std::vector<RobotBuffers> ref, one, batch;
    for (int r = 0; r < 5; ++r) {
      MassSpringRobot robot = makeRandomRobot(rng, 3 + r, 4 + 2 * r);
      ref.push_back(makeBuffers(m, d, robot));
      one.push_back(makeBuffers(m, d, robot));
      batch.push_back(makeBuffers(m, d, robot));
    }
    const int64_t T = f64 ? 200 : 40;
    for (size_t r = 0; r < ref.size(); ++r) {
      rollout(m, d, ref[r], T, [&](int k, void *const *b, const int64_t *s, int64_t t) {
        ir::interpret(m, k, b, s, t);
      });
      rollout(m, d, one[r], T,
              [&](int k, void *const *b, const int64_t *s, int64_t t) { exe->run(k, b, s, t); });
    }
    rolloutBatch(m, d, batch, T,
                 [&](int k, int n, void *const *const *b, const int64_t *s, int64_t t) {
                   exe->runBatch(k, n, b, s, t);
                 });
    for (size_t r = 0; r < ref.size(); ++r)
      for (int b : {d.x, d.v1, d.loss, d.w1Adj, d.b1Adj, d.inAdj, d.cAdj, d.stats, d.chain}) {
        INFO("robot " << r << " buffer " << m.buffers[b].name);
        CHECK(maxRelDiff(ref[r], one[r], b) <= tol);
        CHECK(maxRelDiff(ref[r], batch[r], b) <= tol);
      }
  }
}
