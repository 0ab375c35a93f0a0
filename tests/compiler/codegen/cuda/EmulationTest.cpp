// The generated CUDA, compiled for the CPU with one thread per CUDA thread
// (Emulator.h), against the IR interpreter: the block schedule, reductions,
// scatter-add replays and serial loops compute what the IR means.
#include <catch2/catch.hpp>

#include <filesystem>
#include <unistd.h>

#include "Emulator.h"
#include "Harness.h"
#include "ir/Interpreter.h"

using namespace evoc;
using namespace evoc::test;
namespace fs = std::filesystem;

namespace {

fs::path workDir() {
  fs::path p = fs::temp_directory_path() / ("evoc-cuda-emu-" + std::to_string(::getpid()));
  fs::create_directories(p);
  return p;
}

void compare(const ir::Module &m, const MassSpringIds &d, const RobotBuffers &ref,
             const RobotBuffers &got, double tol, bool exactScatter) {
  for (int b : {d.x, d.v1, d.loss, d.w1Adj, d.b1Adj, d.inAdj, d.cAdj, d.stats, d.chain}) {
    INFO("buffer " << m.buffers[b].name);
    CHECK(maxRelDiff(ref, got, b) <= tol);
  }
  if (exactScatter) {
    // Replayed in the interpreter's order from identical inputs: bit-equal.
    for (int b : {d.inAdj, d.chain, d.w1Adj, d.b1Adj, d.cAdj}) {
      INFO("buffer " << m.buffers[b].name << " must be bit-identical");
      CHECK(ref.data[b] == got.data[b]);
    }
  }
}

} // namespace

TEST_CASE("emulated CUDA matches the interpreter: f64 and f32, ragged batch", "[cuda][emulation]") {
  fs::path dir = workDir();
  MassSpringIds d;
  for (auto prec : {ir::Precision::F64, ir::Precision::F32}) {
    bool f64 = prec == ir::Precision::F64;
    INFO((f64 ? "f64" : "f32"));
    ir::Module m = makeMassSpringModule(d, prec, true);
    EmulatedExecutable emu(m, dir.string());
    std::mt19937_64 rng(3);
    // A robot larger than one block (points and springs > 128) and small ones.
    std::vector<MassSpringRobot> robots = {makeRandomRobot(rng, 9, 16), makeRandomRobot(rng, 2, 3),
                                           makeRandomRobot(rng, 4, 5)};
    REQUIRE(robots[0].nSprings > 128);
    const int64_t T = f64 ? 12 : 6;
    std::vector<RobotBuffers> ref, batch;
    for (auto &r : robots) {
      ref.push_back(makeBuffers(m, d, r));
      batch.push_back(makeBuffers(m, d, r));
      rollout(m, d, ref.back(), T, [&](int k, void *const *b, const int64_t *s, int64_t t) {
        ir::interpret(m, k, b, s, t);
      });
    }
    // Single robot through run().
    RobotBuffers one = makeBuffers(m, d, robots[0]);
    rollout(m, d, one, T,
            [&](int k, void *const *b, const int64_t *s, int64_t t) { emu.run(k, b, s, t); });
    compare(m, d, ref[0], one, f64 ? 1e-12 : 1e-3, false);
    // The ragged population in one launch per kernel.
    rolloutBatch(m, d, batch, T,
                 [&](int k, int n, void *const *const *b, const int64_t *s, int64_t t) {
                   emu.runBatch(k, n, b, s, t);
                 });
    for (size_t r = 0; r < robots.size(); ++r) {
      INFO("robot " << r);
      compare(m, d, ref[r], batch[r], f64 ? 1e-12 : 1e-3, false);
    }
  }
  fs::remove_all(dir);
}

TEST_CASE("emulated CUDA: scatter-adds replay in interpreter order, bit for bit",
          "[cuda][emulation]") {
  fs::path dir = workDir();
  MassSpringIds d;
  ir::Module m = makeMassSpringModule(d, ir::Precision::F64, true);
  // Both replays: incidence lists (default) and thread 0 (EVOC_CUDA_REPLAY=serial).
  const bool serial = GENERATE(false, true);
  INFO((serial ? "serial replay" : "incidence-list replay"));
  if (serial)
    ::setenv("EVOC_CUDA_REPLAY", "serial", 1);
  EmulatedExecutable emu(m, dir.string());
  ::unsetenv("EVOC_CUDA_REPLAY");
  std::mt19937_64 rng(11);
  MassSpringRobot robot = makeRandomRobot(rng, 6, 7);
  RobotBuffers ref = makeBuffers(m, d, robot), got = makeBuffers(m, d, robot);
  // Only the adjoint-shapes kernel, on identical inputs.
  ir::interpret(m, d.adj, ref.ptrs.data(), ref.sizes.data(), 0);
  emu.run(d.adj, got.ptrs.data(), got.sizes.data(), 0);
  compare(m, d, ref, got, 1e-13, true);

  // And twice more: the same bits every run (determinism).
  RobotBuffers again = makeBuffers(m, d, robot);
  emu.run(d.adj, again.ptrs.data(), again.sizes.data(), 0);
  CHECK(again.data == got.data);
  fs::remove_all(dir);
}
