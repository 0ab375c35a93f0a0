// DiffTaichi's diffmpm (examples/diffmpm.evo: a grid, stencils that scatter
// at computed indices, docs/architecture.md "Grids and computed indices") on
// the CUDA back end: emulated on the CPU in every run (40 states), and
// on a GPU at the full T = 1024 when one is present; both against the CPU
// back end (loss 1e-9, gradients 1e-7 of the largest entry).
#include <catch2/catch.hpp>

#include <filesystem>
#include <unistd.h>

#include "Emulator.h"
#include "Harness.h"
#include "app/BodyModels.h"
#include "app/Pipeline.h"
#include "codegen/Executable.h"
#include "codegen/cuda/CudaBackend.h"
#include "core/Population.h"
#include "core/Rollout.h"
#include "evolve/engine/EvoRng.h"

using namespace evoc;
using namespace evoc::runtime;

namespace {

struct Outcome {
  double loss = 0;
  std::vector<double> grad;
};

/// The example's rollout on `exe` with the parameters seed 1 draws.
Outcome rollout(const app::CompiledFile &c, const codegen::Executable &exe) {
  ModuleInfo info(c.module);
  evolve::EvoRng rng(1);
  auto model = app::bodyModel(c.program);
  Population pop(info, {model->express(*model->sample(rng)).robot});
  pop.initParams(0, 1, 0);
  RolloutConfig rc;
  rc.steps = c.program.world.steps;
  rc.upAxis = 1;
  rc.checkpointK = 4;
  Rollout r(info, exe);
  RolloutOutcome out = r.run(pop, 0, rc, true);
  REQUIRE(out.valid);
  Outcome o;
  o.loss = out.loss;
  for (const auto &[name, t] : pop.grads(0))
    o.grad.insert(o.grad.end(), t.data.begin(), t.data.end());
  return o;
}

void agree(const Outcome &a, const Outcome &b) {
  CHECK(std::abs(a.loss - b.loss) <= 1e-9 * std::max(1.0, std::abs(b.loss)));
  REQUIRE(a.grad.size() == b.grad.size());
  double scale = 0, worst = 0;
  for (size_t i = 0; i < a.grad.size(); ++i) {
    scale = std::max(scale, std::abs(b.grad[i]));
    worst = std::max(worst, std::abs(a.grad[i] - b.grad[i]));
  }
  INFO("worst gradient gap " << worst << " of " << scale);
  CHECK(scale > 1e-10); // a gradient the physics gives, not rounding
  CHECK(worst <= 1e-7 * scale);
}

app::CompiledFile diffmpm(int64_t steps) {
  return app::compileFile(std::string(EVOC_SOURCE_DIR) + "/examples/diffmpm.evo",
                          {{"world.steps", std::to_string(steps)}});
}

} // namespace

TEST_CASE("diffmpm: emulated CUDA equals the CPU back end", "[cuda][mpm][emulation]") {
  // Long enough for the legs to push (a gradient of about 1e-8 at T = 40;
  // at T = 6 it is 1e-15, rounding), short enough to emulate in seconds.
  app::CompiledFile c = diffmpm(40);
  auto cpu = codegen::compile(c.module, codegen::BackendKind::Cpu);
  auto dir = std::filesystem::temp_directory_path() / ("evoc-cuda-mpm-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  {
    test::EmulatedExecutable emu(c.module, dir.string());
    agree(rollout(c, emu), rollout(c, *cpu));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("on a GPU: diffmpm on CUDA equals the CPU back end at T = 1024", "[cuda][mpm][gpu]") {
  if (!test::gpuOrSkip())
    return;
  app::CompiledFile c = diffmpm(1024);
  auto cpu = codegen::compile(c.module, codegen::BackendKind::Cpu);
  auto gpu = codegen::cuda::compileCuda(c.module);
  agree(rollout(c, *gpu), rollout(c, *cpu));
}
