// Kept temporaries and window products (autodiff::planTape, deferProducts;
// Arena::Tape; Rollout::windowProducts): step.adj reads the activations the
// forward step kept instead of replaying the products that made them, and
// the weight gradients are one matrix product per window instead of an
// accumulation per step. Every example, through the whole compiler, against
// the same example differentiated the old way (everything replayed, every
// gradient accumulated per step): to rounding (the window's sum is
// associated differently), the interpreter and the strict CPU back end bit
// for bit with each other; every checkpoint window length against the full
// tape; and the work it saves, counted from the IR.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "TestBodies.h"
#include "app/Pipeline.h"
#include "codegen/cpu/CpuBackend.h"
#include "core/Layout.h"
#include "core/Population.h"
#include "core/Rollout.h"
#include "ir/Cost.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Walk.h"

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

ir::Module compileExample(const std::string &name, autodiff::Tape tape) {
  app::PipelineOptions o;
  o.tape = tape;
  return app::compileFile(std::string(EVOC_SOURCE_DIR) + "/examples/" + name, {}, o).module;
}

/// Gradient and loss of one rollout of a small body (a 2D ladder or a 3D
/// cube, raised off the ground), commands switching halfway when read.
struct Outcome {
  double loss = 0;
  std::vector<double> grad;
  RolloutMemory memory;
};

Outcome rollout(const ir::Module &m, const codegen::Executable &exe, int64_t T, int64_t K,
                bool fullTape, bool poison = false) {
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
  ro.poisonUnzeroedScratch(poison);
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

double worstDifference(const std::vector<double> &a, const std::vector<double> &b) {
  REQUIRE(a.size() == b.size());
  double w = 0;
  for (size_t i = 0; i < a.size(); ++i)
    w = std::max(w, std::abs(a[i] - b[i]));
  return w;
}

double largest(const std::vector<double> &v) {
  double m = 0;
  for (double x : v)
    m = std::max(m, std::abs(x));
  return m;
}

} // namespace

TEST_CASE("planTape keeps the layers' inputs and activations; the weight gradients become "
          "window products",
          "[kept][autodiff]") {
  ir::Module m = compileExample("eldir.evo", autodiff::Tape::Products);
  std::set<std::string> kept;
  for (const auto &B : m.buffers)
    if (B.tape)
      kept.insert(B.name);
  CHECK(kept == std::set<std::string>{"mlp.in", "mlp.h1", "spring.act", "point.dv",
                                      "mlp.w1.adj.rows", "mlp.w2.adj.rows"});
  // step.adj replays no spring force: nothing but the step adds to point.dv.
  int forces = 0;
  ir::walk(m.kernels[size_t(m.findKernel("step.adj"))].body, [&](const ir::Inst &in) {
    forces += in.op == ir::Op::AccAdd && m.buffers[size_t(in.buffer)].name == "point.dv";
  });
  CHECK(forces == 0);
  std::set<std::string> products;
  for (const auto &p : m.products)
    products.insert(m.buffers[size_t(p.grad)].name + " = " + m.buffers[size_t(p.rows)].name +
                    " x " + m.buffers[size_t(p.x)].name);
  CHECK(products == std::set<std::string>{"mlp.w1.adj = mlp.w1.adj.rows x mlp.in",
                                          "mlp.w2.adj = mlp.w2.adj.rows x mlp.h1"});
  // step.adj no longer accumulates them.
  const int adj = m.findKernel("step.adj");
  int accumulated = 0;
  ir::walk(m.kernels[size_t(adj)].body, [&](const ir::Inst &in) {
    if (in.op == ir::Op::AccAdd && (m.buffers[size_t(in.buffer)].name == "mlp.w1.adj" ||
                                    m.buffers[size_t(in.buffer)].name == "mlp.w2.adj"))
      ++accumulated;
  });
  CHECK(accumulated == 0);
  // It survives print + parse, and the old path has none of it.
  CHECK(ir::toString(ir::parse(ir::toString(m))) == ir::toString(m));
  ir::Module old = compileExample("eldir.evo", autodiff::Tape::Replay);
  CHECK(old.products.empty());
  for (const auto &B : old.buffers)
    CHECK_FALSE(B.tape);
  // Without the products: only the activations are kept.
  ir::Module activations = compileExample("eldir.evo", autodiff::Tape::Keep);
  CHECK(activations.products.empty());
  std::set<std::string> keptOnly;
  for (const auto &B : activations.buffers)
    if (B.tape)
      keptOnly.insert(B.name);
  CHECK(keptOnly == std::set<std::string>{"mlp.h1", "spring.act", "point.dv"});
}

TEST_CASE("kept temporaries: a fifth fewer FLOPs per robot-step on the paper's body",
          "[kept][autodiff]") {
  ir::Module now = compileExample("eldir.evo", autodiff::Tape::Products),
             old = compileExample("eldir.evo", autodiff::Tape::Replay);
  // A 13x22 lattice body's sizes: 120 points, 305 springs (the cost model
  // depends on the sizes only).
  auto sizesOf = [](const ir::Module &m) {
    std::vector<int64_t> sizes(m.sets.size(), 0);
    sizes[size_t(m.findSet("point"))] = 120;
    sizes[size_t(m.findSet("spring"))] = 305;
    ir::deriveSetSizes(m, sizes.data());
    return sizes;
  };
  auto flops = [&](const ir::Module &m, const char *kernel) {
    return ir::kernelFlops(m, m.findKernel(kernel), sizesOf(m).data());
  };
  // The window products' multiply-adds, per step: 2 S U each (the 32 x
  // inputs and 305 x 32 weight matrices).
  const double inputs = double(sizesOf(now)[size_t(now.findSet("input"))]);
  const double productFlops = ir::productFlopsPerStep(now, sizesOf(now).data());
  CHECK(productFlops == 2.0 * (32 * inputs + 305 * 32));
  const double adjNow = flops(now, "step.adj") + productFlops, adjOld = flops(old, "step.adj");
  const double fwd = flops(now, "step");
  CHECK(fwd == flops(old, "step"));
  INFO("step " << fwd << ", step.adj " << adjOld << " -> " << adjNow);
  // The replay computed both matrix-vector products of the controller again.
  CHECK(adjNow < 0.8 * adjOld);
  CHECK((fwd + adjNow) < 0.85 * (fwd + adjOld));
}

TEST_CASE("kept temporaries and window products give the old gradients on every example",
          "[kept][e2e]") {
  for (const char *name : kExamples) {
    INFO(name);
    ir::Module now = compileExample(name, autodiff::Tape::Products),
               old = compileExample(name, autodiff::Tape::Replay);
    const int64_t T = stepsFor(name);
    auto interpNow = codegen::compile(now, codegen::BackendKind::Interp);
    auto interpOld = codegen::compile(old, codegen::BackendKind::Interp);
    Outcome a = rollout(now, *interpNow, T, 0, false), b = rollout(old, *interpOld, T, 0, false);
    REQUIRE(largest(a.grad) > 0);
    CHECK(a.loss == b.loss);
    // The same operations on the same values, in the same order: each
    // window's products add their terms latest step first, as step.adj did.
    CHECK(a.grad == b.grad);
    CHECK(a.memory.tapeBytes > 0);
    CHECK(b.memory.tapeBytes == 0);
    ir::Module keep = compileExample(name, autodiff::Tape::Keep);
    auto interpKeep = codegen::compile(keep, codegen::BackendKind::Interp);
    CHECK(rollout(keep, *interpKeep, T, 0, false).grad == b.grad);
    auto strictNow = codegen::cpu::compileCpu(now, {}, codegen::cpu::FpMode::Strict);
    Outcome s = rollout(now, *strictNow, T, 0, false);
    CHECK(s.loss == a.loss);
    CHECK(s.grad == a.grad); // strict: the interpreter's arithmetic, the same products
    auto fastNow = codegen::cpu::compileCpu(now, {});
    Outcome f = rollout(now, *fastNow, T, 0, false);
    CHECK(worstDifference(f.grad, a.grad) <= 1e-9 * largest(a.grad));
    CHECK(std::abs(f.loss - a.loss) <= 1e-9 * std::max(1.0, std::abs(a.loss)));
  }
}

TEST_CASE("scratch that the contract leaves unzeroed is written before it is read: poisoned "
          "with NaN, every example gives the same loss and gradient, bit for bit",
          "[kept][zero]") {
  for (const char *name : kExamples) {
    INFO(name);
    ir::Module m = compileExample(name, autodiff::Tape::Products);
    const ModuleInfo info(m);
    // The kept temps are stored whole by the kernel that writes them (the
    // step's controller inputs, its layers, the rows step.adj writes for the
    // window products), but for the sums the step accumulates (the forces
    // on the points): only those are zeroed in a tape block.
    std::set<int> accumulated;
    ir::walk(m.kernels[size_t(info.step)].body, [&](const ir::Inst &in) {
      if (in.op == ir::Op::AccAdd)
        accumulated.insert(in.buffer);
    });
    std::set<int> keptAccumulated;
    for (int b : info.kept)
      if (accumulated.count(b))
        keptAccumulated.insert(b);
    CHECK(std::set<int>(info.keptZero.begin(), info.keptZero.end()) == keptAccumulated);
    CHECK(info.keptZero.size() < info.kept.size());
    std::set<std::string> unzeroed;
    for (int k = 0; k < int(m.kernels.size()); ++k)
      for (int b : info.used[size_t(k)])
        if ((info.arena[size_t(b)] == Arena::Temp || info.arena[size_t(b)] == Arena::TempAdj) &&
            !std::binary_search(info.scratchZero[size_t(k)].begin(),
                                info.scratchZero[size_t(k)].end(), b))
          unzeroed.insert(m.kernels[size_t(k)].name + ":" + m.buffers[size_t(b)].name);
    // The multi-task controller's output is a scratch temp, stored whole.
    if (std::string(name).rfind("multitask", 0) == 0)
      CHECK(unzeroed.count("step:spring.act") == 1);
    const int64_t T = stepsFor(name);
    std::unique_ptr<codegen::Executable> interp = codegen::compile(m, codegen::BackendKind::Interp),
                                         fast = codegen::cpu::compileCpu(m, {});
    for (const codegen::Executable *exe : {interp.get(), fast.get()})
      for (bool fullTape : {false, true}) {
        INFO((exe == interp.get() ? "interpreter" : "CPU")
             << (fullTape ? ", full tape" : ", K = 3"));
        Outcome zeroed = rollout(m, *exe, T, fullTape ? 0 : 3, fullTape);
        Outcome poisoned = rollout(m, *exe, T, fullTape ? 0 : 3, fullTape, true);
        REQUIRE(largest(zeroed.grad) > 0);
        CHECK(poisoned.loss == zeroed.loss);
        CHECK(poisoned.grad == zeroed.grad);
      }
  }
}

TEST_CASE("kept temporaries: every window length gives the full tape's gradient, to rounding",
          "[kept][checkpoint]") {
  // The multi-task example reads earlier states (x[t - d]) from a per-step
  // window, which moves each recomputation back by whole windows.
  for (const char *name : {"eldir_small.evo", "multitask_alpaca.evo"}) {
    INFO(name);
    ir::Module m = compileExample(name, autodiff::Tape::Products);
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
      // The windows' products group the steps by K but add each gradient
      // element's terms in the same order: the same bits.
      CHECK(c.grad == full.grad);
      CHECK(c.memory.keptTempBytes <= full.memory.keptTempBytes);
      if (K <= T / 4 && c.memory.storedStates < T)
        CHECK(c.memory.keptTempBytes < full.memory.keptTempBytes);
    }
  }
}

TEST_CASE("the generated window product equals the reference: f32 and f64, odd sizes, "
          "fast and strict, one episode and episodes in lanes",
          "[kept][llvm]") {
  for (const char *precision : {"f64", "f32"}) {
    INFO(precision);
    app::PipelineOptions o;
    ir::Module m = app::compileFile(std::string(EVOC_SOURCE_DIR) + "/examples/eldir_small.evo",
                                    {{"world.precision", precision}}, o)
                       .module;
    REQUIRE_FALSE(m.products.empty());
    const bool f32 = m.precision == ir::Precision::F32;
    REQUIRE(f32 == (std::string(precision) == "f32"));
    auto interp = codegen::compile(m, codegen::BackendKind::Interp); // the reference
    // Sizes around the register blocks (4 rows x 4 vectors of 8 or 16
    // lanes; in lanes 3 x 3 or fewer elements of L lanes), a stride wider
    // than the rows, zero rows (the guard) and no steps at all.
    for (int L : {1, 4, 16}) {
      INFO(L << " lanes");
      codegen::CompileOptions co;
      co.lanes = L;
      auto fast = codegen::cpu::compileCpu(m, co);
      auto strict = codegen::cpu::compileCpu(m, co, codegen::cpu::FpMode::Strict);
      REQUIRE(fast->windowProductEntry() != nullptr);
      for (auto [S, U, n] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1},
                             {3, 7, 5},
                             {4, 32, 2},
                             {9, 65, 33},
                             {33, 130, 17},
                             {5, 9, 0}}) {
        INFO("S = " << S << ", U = " << U << ", n = " << n);
        const int64_t ld = (std::max(S, U) + 3) * L;
        std::vector<double> rows(size_t(std::max<int64_t>(n, 1) * ld)), x(rows.size()),
            grad(size_t(S * U * L));
        uint64_t state = 12345;
        auto next = [&] {
          state = state * 6364136223846793005ull + 1442695040888963407ull;
          return double(int64_t(state >> 11) % 2001 - 1000) / 997.0;
        };
        for (size_t i = 0; i < rows.size(); ++i) {
          rows[i] = i % 5 == 0 ? 0.0 : next();
          x[i] = next();
        }
        for (double &g : grad)
          g = next();
        // As the module's elements: floats packed at the front when f32.
        auto asElems = [&](const std::vector<double> &v) {
          std::vector<std::byte> out(v.size() * (f32 ? 4 : 8));
          for (size_t i = 0; i < v.size(); ++i) {
            if (f32) {
              float f = float(v[i]);
              std::memcpy(out.data() + 4 * i, &f, 4);
            } else {
              std::memcpy(out.data() + 8 * i, &v[i], 8);
            }
          }
          return out;
        };
        auto value = [&](const std::vector<std::byte> &v, int64_t i) {
          if (f32) {
            float f = 0;
            std::memcpy(&f, v.data() + 4 * i, 4);
            return double(f);
          }
          double d = 0;
          std::memcpy(&d, v.data() + 8 * i, 8);
          return d;
        };
        const auto R = asElems(rows), X = asElems(x), G = asElems(grad);
        auto run = [&](const codegen::Executable &exe) {
          auto g = G;
          exe.windowProduct(f32, g.data(), R.data(), X.data(), S, U, n, ld, L);
          return g;
        };
        const auto ref = run(*interp), st = run(*strict), f = run(*fast);
        CHECK(st == ref); // the same roundings in the same order
        if (n == 0)
          CHECK(f == G);
        double worst = 0, largestRef = 0;
        for (int64_t i = 0; i < S * U * L; ++i) {
          worst = std::max(worst, std::abs(value(f, i) - value(ref, i)));
          largestRef = std::max(largestRef, std::abs(value(ref, i)));
        }
        // Fused multiply-adds: one rounding fewer per term.
        CHECK(worst <= (f32 ? 1e-5 : 1e-13) * std::max(1.0, largestRef) * double(n + 1));
        // Each lane's product is the one-episode product of its elements.
        for (int l = 0; L > 1 && l < L; ++l) {
          std::vector<double> r1(size_t(std::max<int64_t>(n, 1) * ld / L)), x1(r1.size()),
              g1(size_t(S * U));
          for (size_t i = 0; i < r1.size(); ++i)
            r1[i] = rows[i * size_t(L) + size_t(l)], x1[i] = x[i * size_t(L) + size_t(l)];
          for (size_t i = 0; i < g1.size(); ++i)
            g1[i] = grad[i * size_t(L) + size_t(l)];
          auto one = asElems(g1);
          const auto R1 = asElems(r1), X1 = asElems(x1);
          interp->windowProduct(f32, one.data(), R1.data(), X1.data(), S, U, n, ld / L, 1);
          for (int64_t i = 0; i < S * U; ++i)
            if (value(one, i) != value(ref, i * L + l))
              FAIL("lane " << l << ", element " << i << ": " << value(ref, i * L + l)
                           << " in lanes, " << value(one, i) << " alone");
        }
      }
    }
  }
}
