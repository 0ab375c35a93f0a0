// Episodes in lanes against one episode per call, kernel by kernel
// (docs/architecture.md, "Episodes in lanes"): the step and step.adj kernels
// of an experiment compiled both ways in fast mode, each called on its own
// buffers (the body and parameters shared, every other buffer one per
// episode), CPU time per episode-step, alternating repeats, medians.
//
//   evoc_lanes_bench [FILE] [--set KEY=VALUE ...] [--lanes L] [--calls N] [--reps R]
//
// FILE defaults to examples/multitask_alpaca.evo; its body is the
// experiment's own. This measures kernels only: the runtime does not yet run
// a batch in lanes.
#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "BenchUtil.h"
#include "codegen/cpu/CpuBackend.h"
#include "core/Aligned.h"
#include "core/Layout.h"
#include "core/Population.h"
#include "driver/BodyModels.h"
#include "driver/Driver.h"
#include "driver/Session.h"
#include "evolve/engine/EvoRng.h"
#include "support/Error.h"
#include "support/OptionTable.h"

using namespace evoc;

namespace {

/// One episode's (or one interleaved batch's) buffers: the body and
/// parameters point at the population's, the rest are owned.
struct Buffers {
  std::vector<runtime::AlignedDoubles> owned;
  std::vector<void *> ptrs;
};

Buffers makeBuffers(const ir::Module &m, runtime::Population &pop, int lanes, std::mt19937_64 &g) {
  const runtime::RobotLayout &lay = pop.layout(0);
  std::uniform_real_distribution<double> u(-0.1, 0.1);
  Buffers b;
  b.owned.resize(m.buffers.size());
  b.ptrs.resize(m.buffers.size());
  for (size_t i = 0; i < m.buffers.size(); ++i) {
    const ir::Buffer &B = m.buffers[i];
    if (B.role == ir::Role::Body || B.role == ir::Role::Param) {
      b.ptrs[i] = pop.buffer(0, int(i));
      continue;
    }
    const int64_t n = std::max<int64_t>(lay.count[i], 1) * lanes;
    b.owned[i].resize(size_t(n));
    for (double &v : b.owned[i]) // states near the body's scale, the rest small
      v = (B.role == ir::Role::State || B.role == ir::Role::Command ? 0.5 : 0.0) + u(g);
    b.ptrs[i] = b.owned[i].data();
  }
  return b;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> common;
  int oneLanes = 0; // --lanes; 0: 8, 16 and 32
  int calls = 500, reps = 5;
  OptionTable t("evoc_lanes_bench");
  t.integer("--lanes", 2, 64, oneLanes)
      .integer("--calls", 1, 1000000, calls)
      .integer("--reps", 1, 1000, reps)
      .custom("--set",
              [&](const std::string &kv) {
                common.push_back("--set");
                common.push_back(kv);
                return std::string();
              })
      .positionals(common);
  if (!t.parse(std::vector<std::string>(argv + 1, argv + argc))) {
    std::fprintf(stderr, "usage: evoc_lanes_bench [FILE] [--set KEY=VALUE ...] [--lanes L] "
                         "[--calls N] [--reps R]\n");
    return 2;
  }
  const std::vector<int> lanes =
      oneLanes > 0 ? std::vector<int>{oneLanes} : std::vector<int>{8, 16, 32};
  if (common.empty() || common[0].rfind("--", 0) == 0)
    common.insert(common.begin(), std::string(EVOC_SOURCE_DIR) + "/examples/multitask_alpaca.evo");
  try {
    driver::CommonOptions opts;
    if (!driver::parseCommonOptions(common, opts))
      return 2;
    driver::Session s(opts, "cpu", /*requireExperiment=*/true);
    if (!s.ok())
      return 1;
    auto model = driver::bodyModel(s.program());
    evolve::EvoRng rng(1);
    const runtime::Robot robot = model->express(*model->sample(rng)).robot;
    const ir::Module &m = s.module();
    runtime::ModuleInfo info(m);
    if (info.step < 0 || info.stepAdj < 0)
      throw Error(opts.file + " has no step and step.adj kernels");
    runtime::Population pop(info, {robot});
    pop.initParams(0, 1, 0);
    const int64_t *sizes = pop.layout(0).sizes.data();
    codegen::CompileOptions co;
    co.useCache = false;
    auto scalar = codegen::cpu::compileCpu(m, co);
    fmt::print("evoc lanes benchmark on {}: {}, {} calls x {} alternating repeats, fast mode, "
               "CPU time per episode-step (medians)\n",
               codegen::cpu::hostDescription(), opts.file, calls, reps);
    fmt::print("  {:>5} {:<10} {:>12} {:>12} {:>8}\n", "lanes", "kernel", "scalar us", "lanes us",
               "speed-up");
    std::mt19937_64 g(7);
    for (int L : lanes) {
      co.lanes = L;
      auto wide = codegen::cpu::compileCpu(m, co);
      std::vector<Buffers> one;
      for (int l = 0; l < L; ++l)
        one.push_back(makeBuffers(m, pop, 1, g));
      Buffers batch = makeBuffers(m, pop, L, g);
      for (int k : {info.step, info.stepAdj}) {
        std::vector<double> a, b;
        for (int r = 0; r < reps; ++r) {
          double c0 = bench::threadCpuSeconds();
          for (int c = 0; c < calls; ++c)
            for (int l = 0; l < L; ++l)
              scalar->run(k, one[size_t(l)].ptrs.data(), sizes, c % 900);
          a.push_back((bench::threadCpuSeconds() - c0) / calls / L);
          c0 = bench::threadCpuSeconds();
          for (int c = 0; c < calls; ++c)
            wide->run(k, batch.ptrs.data(), sizes, c % 900);
          b.push_back((bench::threadCpuSeconds() - c0) / calls / L);
        }
        fmt::print("  {:>5} {:<10} {:>12.3f} {:>12.3f} {:>7.2f}x\n", L, m.kernels[size_t(k)].name,
                   1e6 * median(a), 1e6 * median(b), median(a) / median(b));
      }
    }
  } catch (const Error &e) {
    std::fprintf(stderr, "evoc_lanes_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
