// CudaRollout (fused forward and backward kernels over a ragged population)
// run on the CPU emulation, against a full-tape rollout on the interpreter.
#include <catch2/catch.hpp>

#include <filesystem>
#include <unistd.h>

#include "Emulator.h"
#include "Harness.h"
#include "RolloutCheck.h"
#include "autodiff/Differentiate.h"
#include "cuda/CudaRollout.h"
#include "ir/Interpreter.h"
#include "opt/Passes.h"
#include "support/Error.h"

using namespace evoc;
using namespace evoc::test;
namespace fs = std::filesystem;

TEST_CASE("CudaRollout (emulated): loss and gradients of a ragged population", "[cuda][rollout]") {
  auto [d, params, m] = differentiatedModule();
  fs::path dir = fs::temp_directory_path() / ("evoc-cuda-rollout-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  EmulatedExecutable emu(m, dir.string());
  std::mt19937_64 rng(21);
  std::vector<MassSpringRobot> robots = {makeRandomRobot(rng, 9, 16), makeRandomRobot(rng, 3, 4)};
  checkRollout(emu, m, d, params, robots, 7, interpreter(m), 1e-12);
  fs::remove_all(dir);
}

TEST_CASE("on a GPU: CudaRollout agrees with the interpreter", "[cuda][rollout][gpu]") {
  if (!gpuOrSkip())
    return;
  auto [d, params, m] = differentiatedModule();
  auto exe = codegen::cuda::compileCuda(m);
  std::mt19937_64 rng(22);
  std::vector<MassSpringRobot> robots;
  for (int i = 0; i < 4; ++i)
    robots.push_back(makeRandomRobot(rng, 4 + 3 * i, 5 + 2 * i));
  checkRollout(*exe, m, d, params, robots, 100, interpreter(m), 1e-9);
}
