// The acceptance check, on a machine with a GPU: the CUDA back end
// (fused rollout) and the CPU back end (LLVM) agree on loss and gradients for
// 20 random ELDiR robots at T = 1000 in f64 (1e-9 loss, 1e-7 gradient
// relative to its largest entry). Skipped, with a note, without a GPU.
#include <catch2/catch.hpp>

#include <filesystem>
#include <unistd.h>

#include "Emulator.h"
#include "RolloutCheck.h"
#include "codegen/Executable.h"

using namespace evoc;
using namespace evoc::test;

TEST_CASE("on a GPU: CUDA and CPU back ends agree on 20 robots at T = 1000", "[cuda][gpu]") {
  if (!gpuOrSkip())
    return;
  auto [d, params, m] = differentiatedModule();
  auto cpu = codegen::compile(m, codegen::BackendKind::Cpu);
  auto gpu = codegen::cuda::compileCuda(m);
  std::mt19937_64 rng(2024);
  std::vector<MassSpringRobot> robots;
  for (int i = 0; i < 20; ++i) // lattices around the paper's 13x22 size and smaller
    robots.push_back(makeRandomRobot(rng, 6 + (i % 9), 8 + (i % 5)));
  const codegen::Executable &c = *cpu;
  checkRollout(
      *gpu, m, d, params, robots, 1000,
      [&c](int k, void *const *b, const int64_t *s, int64_t t) { c.run(k, b, s, t); }, 1e-9);
}

// The same comparison with the CPU emulation standing in for the GPU, on a
// smaller workload (hidden: about a minute on two cores; run it by name).
TEST_CASE("emulated CUDA and CPU back ends agree on a long rollout", "[.][cuda][emulation]") {
  auto [d, params, m] = differentiatedModule();
  auto cpu = codegen::compile(m, codegen::BackendKind::Cpu);
  auto dir =
      std::filesystem::temp_directory_path() / ("evoc-cuda-agree-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  EmulatedExecutable emu(m, dir.string());
  std::mt19937_64 rng(2024);
  std::vector<MassSpringRobot> robots = {makeRandomRobot(rng, 14, 12), makeRandomRobot(rng, 6, 8)};
  const codegen::Executable &c = *cpu;
  checkRollout(
      emu, m, d, params, robots, 300,
      [&c](int k, void *const *b, const int64_t *s, int64_t t) { c.run(k, b, s, t); }, 1e-9);
  std::filesystem::remove_all(dir);
}
