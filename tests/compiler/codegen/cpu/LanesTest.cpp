// Episodes in lanes (codegen/cpu/LowerToLLVM.h, docs/architecture.md
// "Episodes in lanes"): a kernel compiled with lanes > 1 runs that many
// episodes of one robot per call, and lane l computes what the scalar kernel
// computes for episode l. Strict mode: bit for bit, every kernel of the
// stdlib experiments; fast mode: to rounding. Each lane gets inputs of its
// own, so a lane reading another's values cannot pass.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>

#include "app/Pipeline.h"
#include "codegen/cpu/CpuBackend.h"
#include "core/Aligned.h"
#include "core/Layout.h"
#include "core/Population.h"
#include "evolve/bodies/Lattice.h"
#include "evolve/engine/EvoRng.h"
#include "ir/Builder.h"
#include "support/Error.h"

using namespace evoc;

namespace {

bool shared(const ir::Buffer &b) { return b.role == ir::Role::Body || b.role == ir::Role::Param; }

/// The largest difference between lane l of the lanes kernel and the scalar
/// kernel over every per-episode float buffer, relative to that buffer's
/// largest magnitude (0: bit for bit), after one call of kernel k.
struct LaneRun {
  const ir::Module &m;
  const runtime::Population &pop;
  int lanes;
  std::vector<std::vector<runtime::AlignedDoubles>> scalar; // [lane][buffer]
  std::vector<runtime::AlignedDoubles> wide;                // [buffer], interleaved

  LaneRun(const ir::Module &mod, runtime::Population &p, int L, uint64_t seed)
      : m(mod), pop(p), lanes(L) {
    const runtime::RobotLayout &lay = p.layout(0);
    const size_t nb = m.buffers.size();
    scalar.assign(size_t(L), std::vector<runtime::AlignedDoubles>(nb));
    wide.resize(nb);
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> u(-0.5, 0.5);
    for (size_t b = 0; b < nb; ++b) {
      const ir::Buffer &B = m.buffers[b];
      const int64_t n = std::max<int64_t>(lay.count[b], 1);
      if (shared(B)) { // one copy: the robot's own (int32 indices for Body ones)
        wide[b].assign(size_t(n + 1), 0.0);
        std::memcpy(wide[b].data(), p.buffer(0, int(b)),
                    size_t(lay.count[b] * (B.elem == ir::Type::I ? 4 : 8)));
        for (int l = 0; l < L; ++l)
          scalar[size_t(l)][b] = wide[b];
        continue;
      }
      REQUIRE(B.elem == ir::Type::F);
      wide[b].assign(size_t(n * L + 1), 0.0);
      for (int l = 0; l < L; ++l) {
        scalar[size_t(l)][b].assign(size_t(n + 1), 0.0);
        for (int64_t i = 0; i < n; ++i) { // states near 1 (a lattice's scale), the rest small
          double v = (B.role == ir::Role::State ? 1.0 : 0.0) + u(g);
          scalar[size_t(l)][b][size_t(i)] = v;
          wide[b][size_t(i * L + l)] = v;
        }
      }
    }
  }

  double worst(const codegen::Executable &sc, const codegen::Executable &ln, int k, int64_t t) {
    const runtime::RobotLayout &lay = pop.layout(0);
    const size_t nb = m.buffers.size();
    std::vector<void *> ptrs(nb);
    for (int l = 0; l < lanes; ++l) {
      for (size_t b = 0; b < nb; ++b)
        ptrs[b] = scalar[size_t(l)][b].data();
      sc.run(k, ptrs.data(), lay.sizes.data(), t);
    }
    for (size_t b = 0; b < nb; ++b)
      ptrs[b] = wide[b].data();
    ln.run(k, ptrs.data(), lay.sizes.data(), t);
    double worst = 0;
    for (size_t b = 0; b < nb; ++b) {
      if (shared(m.buffers[b]))
        continue;
      double scale = 0, diff = 0;
      for (int64_t i = 0; i < lay.count[b]; ++i)
        for (int l = 0; l < lanes; ++l) {
          const double a = scalar[size_t(l)][b][size_t(i)], c = wide[b][size_t(i * lanes + l)];
          scale = std::max(scale, std::fabs(a));
          if (std::memcmp(&a, &c, sizeof a) != 0)
            diff = std::max(diff, std::isnan(a) || std::isnan(c) ? INFINITY : std::fabs(a - c));
        }
      if (diff > 0)
        worst = std::max(worst, scale > 0 ? diff / scale : INFINITY);
    }
    return worst;
  }
};

void lanesAgree(const std::string &file, codegen::cpu::FpMode fp, int lanes, double tol) {
  ir::Module m = app::compileFile(std::string(EVOC_SOURCE_DIR) + "/" + file).module;
  runtime::ModuleInfo info(m);
  evolve::LatticeSpec spec;
  spec.rows = 4;
  spec.cols = 5;
  evolve::LatticeBody body(spec);
  evolve::EvoRng rng(3);
  runtime::Population pop(info, {body.express(body.sample(rng))});
  pop.initParams(0, 11, 0);
  codegen::CompileOptions co;
  co.useCache = false;
  auto sc = codegen::cpu::compileCpu(m, co, fp);
  co.lanes = lanes;
  auto ln = codegen::cpu::compileCpu(m, co, fp);
  LaneRun run(m, pop, lanes, 17);
  int checked = 0;
  for (int k = 0; k < int(m.kernels.size()); ++k) {
    if (m.kernels[size_t(k)].kind == ir::KernelKind::Init)
      continue;
    INFO(file << ", kernel " << m.kernels[size_t(k)].name << ", " << lanes << " lanes");
    CHECK(run.worst(*sc, *ln, k, 7) <= tol);
    ++checked;
  }
  CHECK(checked >= 4); // step, step.adj, a loss and its adjoint at least
}

} // namespace

TEST_CASE("lanes kernels are the scalar kernels lane by lane, bit for bit in strict mode",
          "[llvm][lanes]") {
  for (const char *file : {"examples/multitask_alpaca.evo", "examples/eldir.evo"})
    for (int lanes : {4, 8})
      lanesAgree(file, codegen::cpu::FpMode::Strict, lanes, 0.0);
}

TEST_CASE("lanes kernels agree with the scalar kernels to rounding in fast mode", "[llvm][lanes]") {
  for (const char *file : {"examples/multitask_alpaca.evo", "examples/eldir.evo"})
    lanesAgree(file, codegen::cpu::FpMode::Fast, 16, 1e-10);
}

TEST_CASE("a kernel that picks an index per episode is refused with lanes", "[llvm][lanes]") {
  ir::Module m;
  m.name = "per_episode_index";
  int set = ir::addSet(m, "point");
  ir::Buffer x;
  x.name = "x";
  x.sets = {set};
  x.role = ir::Role::State;
  ir::Buffer next = x;
  next.name = "x.next";
  next.role = ir::Role::NextState;
  int bx = ir::addBuffer(m, x), bn = ir::addBuffer(m, next);
  m.kernels.resize(1);
  m.kernels[0].name = "step";
  {
    ir::Builder b(m, m.kernels[0]);
    ir::ValueId i = b.beginLoop(set);
    // j = x[i] > 0 ? i : 0: which element is read depends on the episode's state.
    ir::ValueId pos = b.op(ir::Op::Gt, {b.load(bx, i), b.constF(0.0)});
    ir::ValueId j = b.op(ir::Op::Select, {pos, i, b.constI(0)});
    b.store(bn, i, b.load(bx, j));
    b.endLoop();
  }
  codegen::CompileOptions co;
  co.useCache = false;
  co.lanes = 4;
  try {
    (void)codegen::cpu::compileCpu(m, co);
    FAIL("compiled");
  } catch (const Error &e) {
    CHECK(std::string(e.what()) == "kernel 'step' cannot run episodes in lanes: an index "
                                   "chosen by a per-episode condition");
  }
  co.lanes = 1;
  CHECK_NOTHROW(codegen::cpu::compileCpu(m, co)); // the scalar kernel can
}
