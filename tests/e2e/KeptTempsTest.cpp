// Kept temporaries (autodiff::planTape, Arena::Tape): step.adj reads the
// activations the forward step kept instead of replaying the products that
// made them. Every example, through the whole compiler, against the same
// example differentiated the old way (everything replayed): the interpreter
// and the strict CPU back end bit for bit, the fast CPU back end to
// rounding; every checkpoint window length against the full tape, bit for
// bit; and the work it saves, counted from the IR.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "TestBodies.h"
#include "codegen/llvm/CpuBackend.h"
#include "core/Layout.h"
#include "core/Population.h"
#include "core/Rollout.h"
#include "driver/Pipeline.h"
#include "ir/Cost.h"

using namespace evoc;
using namespace evoc::runtime;

namespace {

const char *const kExamples[] = {"eldir.evo",
                                 "eldir_small.evo",
                                 "grammar_walker.evo",
                                 "jump.evo",
                                 "multitask_alpaca.evo",
                                 "multitask_evolve.evo",
                                 "multitask_quad3d.evo",
                                 "walker3d.evo"};

ir::Module compileExample(const std::string &name, bool keepTemps) {
  driver::PipelineOptions o;
  o.keepTemps = keepTemps;
  return driver::compileFile(std::string(EVOC_SOURCE_DIR) + "/examples/" + name, {}, o).module;
}

/// Gradient and loss of one rollout of a small body (a 2D ladder or a 3D
/// cube, raised off the ground), commands switching halfway when read.
struct Outcome {
  double loss = 0;
  std::vector<double> grad;
  RolloutMemory memory;
};

Outcome rollout(const ir::Module &m, const codegen::Executable &exe, int64_t T, int64_t K,
                bool fullTape) {
  ModuleInfo info(m);
  const bool is3d = m.findSet("point") >= 0 && [&] {
    for (const auto &B : m.buffers)
      if (B.name == "point.x")
        return B.comps == 3;
    return false;
  }();
  Population pop(info, {is3d ? test::cube(0, 0.02, 0) : test::ladder(0, 0.02)});
  pop.initParams(0, 7, 0);
  RolloutConfig c;
  c.steps = T;
  c.checkpointK = K;
  c.fullTape = fullTape;
  c.upAxis = 1;
  int commandCount = 0;
  for (const auto &B : m.buffers)
    if (B.role == ir::Role::Command)
      commandCount = std::max(commandCount, B.column + B.comps);
  std::vector<double> commands;
  for (int row = 0; row < 2; ++row)
    for (int i = 0; i < commandCount; ++i)
      commands.push_back(row == 0 ? 0.5 - 0.1 * i : -0.3 + 0.2 * i);
  if (commandCount > 0) {
    c.commands = commands.data();
    c.commandRows = 2;
    c.commandPeriod = T / 2;
    c.commandCount = commandCount;
  }
  Rollout ro(info, exe);
  RolloutOutcome out = ro.run(pop, 0, c, true);
  INFO(out.error);
  REQUIRE(out.valid);
  const double *g = reinterpret_cast<const double *>(pop.arena(0, Arena::Grad));
  return {out.loss, {g, g + pop.layout(0).paramCount}, out.memory};
}

/// Long enough for every loss window to contribute: the multi-task
/// examples' windows start at t = 101 and read x[t - 100].
int64_t stepsFor(const std::string &example) {
  return example.rfind("multitask", 0) == 0 ? 260 : 40;
}

double largest(const std::vector<double> &v) {
  double m = 0;
  for (double x : v)
    m = std::max(m, std::abs(x));
  return m;
}

} // namespace

TEST_CASE("planTape keeps the layers' activations, not the cheap temporaries", "[kept][autodiff]") {
  ir::Module m = compileExample("eldir.evo", true);
  std::set<std::string> kept;
  for (const auto &B : m.buffers)
    if (B.tape)
      kept.insert(B.name);
  CHECK(kept == std::set<std::string>{"mlp.h1", "spring.act"}); // not mlp.in, point.dv
  // The IR after the passes must still say so (it survives print + parse).
  ir::Module old = compileExample("eldir.evo", false);
  for (const auto &B : old.buffers)
    CHECK_FALSE(B.tape);
}

TEST_CASE("kept temporaries: a fifth fewer FLOPs per robot-step on the paper's body",
          "[kept][autodiff]") {
  ir::Module now = compileExample("eldir.evo", true), old = compileExample("eldir.evo", false);
  // A 13x22 lattice body's sizes: 120 points, 305 springs (the cost model
  // depends on the sizes only).
  auto flops = [](const ir::Module &m, const char *kernel) {
    std::vector<int64_t> sizes(m.sets.size(), 0);
    sizes[size_t(m.findSet("point"))] = 120;
    sizes[size_t(m.findSet("spring"))] = 305;
    ir::deriveSetSizes(m, sizes.data());
    return ir::kernelFlops(m, m.findKernel(kernel), sizes.data());
  };
  const double adjNow = flops(now, "step.adj"), adjOld = flops(old, "step.adj");
  const double fwd = flops(now, "step");
  CHECK(fwd == flops(old, "step"));
  INFO("step " << fwd << ", step.adj " << adjOld << " -> " << adjNow);
  // The replay computed both matrix-vector products of the controller again.
  CHECK(adjNow < 0.8 * adjOld);
  CHECK((fwd + adjNow) < 0.85 * (fwd + adjOld));
}

TEST_CASE("kept temporaries give the replay's gradients on every example", "[kept][e2e]") {
  for (const char *name : kExamples) {
    INFO(name);
    ir::Module now = compileExample(name, true), old = compileExample(name, false);
    const int64_t T = stepsFor(name);
    auto interpNow = codegen::compile(now, codegen::BackendKind::Interp);
    auto interpOld = codegen::compile(old, codegen::BackendKind::Interp);
    Outcome a = rollout(now, *interpNow, T, 0, false), b = rollout(old, *interpOld, T, 0, false);
    REQUIRE(largest(a.grad) > 0);
    CHECK(a.loss == b.loss);
    CHECK(a.grad == b.grad); // the interpreter: the same operations on the same values
    CHECK(a.memory.tapeBytes > 0);
    CHECK(b.memory.tapeBytes == 0);
    auto strictNow = codegen::cpu::compileCpu(now, {}, codegen::cpu::FpMode::Strict);
    Outcome s = rollout(now, *strictNow, T, 0, false);
    CHECK(s.loss == a.loss);
    CHECK(s.grad == a.grad);
    auto fastNow = codegen::cpu::compileCpu(now, {});
    Outcome f = rollout(now, *fastNow, T, 0, false);
    const double scale = largest(a.grad);
    double worst = 0;
    for (size_t i = 0; i < a.grad.size(); ++i)
      worst = std::max(worst, std::abs(f.grad[i] - a.grad[i]));
    CHECK(worst <= 1e-9 * scale);
    CHECK(std::abs(f.loss - a.loss) <= 1e-9 * std::max(1.0, std::abs(a.loss)));
  }
}

TEST_CASE("kept temporaries: every window length gives the full tape's gradient",
          "[kept][checkpoint]") {
  // The multi-task example reads earlier states (x[t - d]) from a per-step
  // window, which moves each recomputation back by whole windows.
  for (const char *name : {"eldir_small.evo", "multitask_alpaca.evo"}) {
    INFO(name);
    ir::Module m = compileExample(name, true);
    auto exe = codegen::cpu::compileCpu(m, {});
    const int64_t T = stepsFor(name) - 3; // windows that do not divide T - 1
    Outcome full = rollout(m, *exe, T, 0, true);
    REQUIRE(largest(full.grad) > 0);
    CHECK(full.memory.keptTempBytes == T * full.memory.tapeBytes);
    for (int64_t K :
         {int64_t(1), int64_t(2), int64_t(3), int64_t(5), int64_t(11), T / 4, T - 3, T - 2}) {
      INFO("K = " << K);
      Outcome c = rollout(m, *exe, T, K, false);
      CHECK(c.loss == full.loss);
      CHECK(c.grad == full.grad);
      CHECK(c.memory.keptTempBytes <= full.memory.keptTempBytes);
      if (K <= T / 4 && c.memory.storedStates < T)
        CHECK(c.memory.keptTempBytes < full.memory.keptTempBytes);
    }
  }
}
