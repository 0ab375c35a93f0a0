// Episodes in lanes against one episode per call, kernel by kernel
// (docs/architecture.md, "Episodes in lanes"): the step and step.adj kernels
// of an experiment compiled both ways in fast mode, each called on its own
// buffers (the body and parameters shared, every other buffer one per
// episode), CPU time per episode-step, alternating repeats, medians. The
// lanes executable is also compiled without unroll and jam
// (CompileOptions::lanesJam = 1), measured in the same repeats.
//
//   evoc_lanes_bench [FILE] [--set KEY=VALUE ...] [--lanes L] [--calls N] [--reps R]
//                    [--jam B] [--cache DIR] [--perf-map]
//
// --jam B: rows per unrolled-and-jammed block (0: the back end's choice);
// --cache DIR: compile through an object cache in DIR (its entries can be
// disassembled) instead of none; --perf-map: name the kernels for `perf
// record` in /tmp/perf-PID.map (scalar:, nojam:, lanes: before each name).
//
// FILE defaults to examples/multitask_alpaca.evo; its body is the
// experiment's own. This measures kernels only (the runtime's batch in
// lanes: evoc_multitask_bench).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <unistd.h>

#include "BenchUtil.h"
#include "app/BodyModels.h"
#include "app/Driver.h"
#include "app/Session.h"
#include "codegen/cpu/CpuBackend.h"
#include "core/Aligned.h"
#include "core/Layout.h"
#include "core/Population.h"
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

/// --perf-map: the kernels' entry points in perf's map format
/// (/tmp/perf-PID.map), each running up to the next one (the last 2 KiB),
/// named after `what`.
void writePerfMap(const ir::Module &m, const codegen::cpu::CpuExecutable &exe,
                  const std::string &what) {
  std::vector<std::pair<uintptr_t, std::string>> at;
  for (size_t k = 0; k < m.kernels.size(); ++k)
    if (exe.kernel(int(k)))
      at.push_back({reinterpret_cast<uintptr_t>(exe.kernel(int(k))), m.kernels[k].name});
  std::sort(at.begin(), at.end());
  std::ofstream map(fmt::format("/tmp/perf-{}.map", ::getpid()), std::ios::app);
  for (size_t i = 0; i < at.size(); ++i)
    map << fmt::format("{:x} {:x} {}:{}\n", at[i].first,
                       i + 1 < at.size() ? at[i + 1].first - at[i].first : 0x800, what,
                       at[i].second);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> common;
  int oneLanes = 0; // --lanes; 0: 8, 16 and 32
  int calls = 500, reps = 5, jam = 0;
  std::string cacheDir;
  bool perfMap = false;
  OptionTable t("evoc_lanes_bench");
  t.integer("--lanes", 2, 64, oneLanes)
      .integer("--calls", 1, 1000000, calls)
      .integer("--reps", 1, 1000, reps)
      .integer("--jam", 0, 64, jam)
      .text("--cache", cacheDir)
      .flag("--perf-map", perfMap)
      .custom("--set",
              [&](const std::string &kv) {
                common.push_back("--set");
                common.push_back(kv);
                return std::string();
              })
      .positionals(common);
  if (!t.parse(std::vector<std::string>(argv + 1, argv + argc))) {
    std::fprintf(stderr, "usage: evoc_lanes_bench [FILE] [--set KEY=VALUE ...] [--lanes L] "
                         "[--calls N] [--reps R] [--jam B] [--cache DIR] [--perf-map]\n");
    return 2;
  }
  const std::vector<int> lanes =
      oneLanes > 0 ? std::vector<int>{oneLanes} : std::vector<int>{8, 16, 32};
  if (common.empty() || common[0].rfind("--", 0) == 0)
    common.insert(common.begin(), std::string(EVOC_SOURCE_DIR) + "/examples/multitask_alpaca.evo");
  try {
    app::CommonOptions opts;
    if (!app::parseCommonOptions(common, opts))
      return 2;
    app::Session s(opts, "cpu", /*requireExperiment=*/true);
    if (!s.ok())
      return 1;
    auto model = app::bodyModel(s.program());
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
    co.useCache = !cacheDir.empty(); // --cache: keep the objects, e.g. to disassemble
    co.cacheDir = cacheDir;
    auto scalar = codegen::cpu::compileCpu(m, co);
    if (perfMap)
      writePerfMap(m, *scalar, "scalar");
    fmt::print("evoc lanes benchmark on {}: {}, {} calls x {} alternating repeats, fast mode, "
               "CPU time per episode-step (medians); 'no jam': lanes without unroll and jam "
               "(CompileOptions::lanesJam = 1)\n",
               codegen::cpu::hostDescription(), opts.file, calls, reps);
    fmt::print("  {:>5} {:<10} {:>12} {:>12} {:>12} {:>8} {:>8}\n", "lanes", "kernel", "scalar us",
               "no jam us", "lanes us", "speed-up", "jam");
    std::mt19937_64 g(7);
    for (int L : lanes) {
      co.lanes = L;
      co.lanesJam = jam;
      auto wide = codegen::cpu::compileCpu(m, co);
      co.lanesJam = 1;
      auto plain = codegen::cpu::compileCpu(m, co);
      if (perfMap) {
        writePerfMap(m, *wide, fmt::format("lanes{}", L));
        writePerfMap(m, *plain, fmt::format("nojam{}", L));
      }
      std::vector<Buffers> one;
      for (int l = 0; l < L; ++l)
        one.push_back(makeBuffers(m, pop, 1, g));
      Buffers batch = makeBuffers(m, pop, L, g);
      for (int k : {info.step, info.stepAdj}) {
        std::vector<double> a, b, c;
        auto timeLanes = [&](const codegen::cpu::CpuExecutable &exe, std::vector<double> &out) {
          const double c0 = bench::threadCpuSeconds();
          for (int i = 0; i < calls; ++i)
            exe.run(k, batch.ptrs.data(), sizes, i % 900);
          out.push_back((bench::threadCpuSeconds() - c0) / calls / L);
        };
        for (int r = 0; r < reps; ++r) {
          double c0 = bench::threadCpuSeconds();
          for (int i = 0; i < calls; ++i)
            for (int l = 0; l < L; ++l)
              scalar->run(k, one[size_t(l)].ptrs.data(), sizes, i % 900);
          a.push_back((bench::threadCpuSeconds() - c0) / calls / L);
          timeLanes(*plain, b);
          timeLanes(*wide, c);
        }
        fmt::print("  {:>5} {:<10} {:>12.3f} {:>12.3f} {:>12.3f} {:>7.2f}x {:>7.2f}x\n", L,
                   m.kernels[size_t(k)].name, 1e6 * median(a), 1e6 * median(b), 1e6 * median(c),
                   median(a) / median(c), median(b) / median(c));
      }
    }
  } catch (const Error &e) {
    std::fprintf(stderr, "evoc_lanes_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
