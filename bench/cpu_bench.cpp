// The CPU back end on the ELDiR workload: robot-steps/s, fraction of peak FMA
// throughput, speed-up over the interpreter, checkpointed vs full-tape
// memory and time, cold and warm compile time, all measured in this run.
//
//   evoc_cpu_bench [--threads N] [--steps T] [--quick] [--hand-built] [--dump-robots DIR]
//                  [--perf-map DIR]
//
// --perf-map DIR: for profiling the generated code with `perf record`, writes
// /tmp/perf-PID.map (kernel entry points, which perf report reads) and the
// compiled objects as DIR/<module>.o; a sample at address A in kernel K lies
// at A - K's map address + K's address in `objdump -d DIR/<module>.o`.
//
// The modules are examples/eldir_small.evo (6x10, friction ground) and
// examples/eldir.evo (13x22, noslip) through the whole compiler; with
// --hand-built (or without the driver library) the Builder-made ELDiR module
// of tests/support/MassSpring.h for both.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "BenchUtil.h"
#include "MassSpring.h"
#include "autodiff/Differentiate.h"
#include "codegen/cpu/CpuBackend.h"
#include "core/Layout.h"
#include "core/RobotJson.h"
#include "core/ThreadPool.h"
#include "core/Train.h"
#include "evolve/bodies/Lattice.h"
#include "ir/Cost.h"
#include "support/Error.h"
#include "support/OptionTable.h"
#ifdef EVOC_BENCH_WITH_DRIVER
#include "app/Driver.h"
#include "app/Pipeline.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"
#endif

using namespace evoc;
namespace fs = std::filesystem;

namespace {

struct Args {
  int threads = 0;
  int64_t steps = 1000;
  bool quick = false;
  bool handBuilt = false;
  std::string dumpRobots; // folder for robots_RxC.json (the PyTorch baseline reads them)
  std::string perfMap;    // folder for the compiled objects; also writes /tmp/perf-PID.map
};

Args parse(int argc, char **argv) {
  Args a;
  OptionTable t("evoc_cpu_bench");
  t.integer("--threads", 0, 4096, a.threads, " (0: one per core)")
      .integer("--steps", 2, 100000000, a.steps)
      .flag("--quick", a.quick)
      .flag("--hand-built", a.handBuilt)
      .text("--dump-robots", a.dumpRobots)
      .text("--perf-map", a.perfMap);
  if (!t.parse(std::vector<std::string>(argv + 1, argv + argc))) {
    std::fprintf(stderr, "usage: evoc_cpu_bench [--threads N] [--steps T] [--quick] "
                         "[--hand-built] [--dump-robots DIR] [--perf-map DIR]\n");
    std::exit(2);
  }
  if (a.threads <= 0)
    a.threads = int(runtime::defaultThreads());
  return a;
}

/// Kernel FLOPs of one robot's forward step and adjoint step (with the
/// window products' share per step).
std::pair<double, double> stepFlops(const ir::Module &m, const runtime::Robot &r) {
  std::vector<int64_t> sizes(m.sets.size(), 0);
  sizes[size_t(m.findSet("point"))] = r.numPoints();
  sizes[size_t(m.findSet("spring"))] = r.numSprings();
  ir::deriveSetSizes(m, sizes.data());
  return {ir::kernelFlops(m, m.findKernel("step"), sizes.data()),
          ir::kernelFlops(m, m.findKernel("step.adj"), sizes.data()) +
              ir::productFlopsPerStep(m, sizes.data())};
}

/// A module ready for the runtime, and what compiling it cost; `kept` and
/// `replay` are the same experiment differentiated without the window
/// products (autodiff::Tape::Keep) and the old way (step.adj replays every
/// temporary: Tape::Replay), measured beside it.
struct Experiment {
  std::string what;
  ir::Module m;
  double frontSeconds = 0; // parse, check, irgen, autodiff, passes
  ir::Module kept, replay;
};

#ifdef EVOC_BENCH_WITH_DRIVER
Experiment fromEvo(const std::string &file) {
  auto t0 = std::chrono::steady_clock::now();
  const std::string path = std::string(EVOC_SOURCE_DIR) + "/" + file;
  ir::Module m = app::compileFile(path).module;
  const double front = bench::since(t0);
  app::PipelineOptions kept, old;
  kept.tape = autodiff::Tape::Keep;
  old.tape = autodiff::Tape::Replay;
  return {file, std::move(m), front, app::compileFile(path, {}, kept).module,
          app::compileFile(path, {}, old).module};
}
#endif

Experiment handBuilt() {
  auto t0 = std::chrono::steady_clock::now();
  test::MassSpringIds ids;
  ir::Module m = test::makeMassSpringModule(ids);
  ir::Module kept = ir::clone(m), replay = ir::clone(m);
  autodiff::differentiate(m, autodiff::Tape::Products);
  autodiff::differentiate(kept, autodiff::Tape::Keep);
  autodiff::differentiate(replay);
  return {"the hand-built ELDiR module (noslip)", std::move(m), bench::since(t0), std::move(kept),
          std::move(replay)};
}

/// Profiling aids (--perf-map): the kernels' entry points in perf's map
/// format and the object they came from (the cache entry minus its header).
void writePerfMap(const Experiment &e, const ir::Module &m, const codegen::cpu::CpuExecutable &exe,
                  const std::string &dir, const std::string &suffix) {
  std::ifstream in(exe.cacheEntry(), std::ios::binary);
  std::string entry((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t elf = entry.find("\x7f"
                          "ELF");
  std::string base = fs::path(e.what).stem().string() + suffix;
  if (elf != std::string::npos)
    std::ofstream(fmt::format("{}/{}.o", dir, base), std::ios::binary) << entry.substr(elf);
  std::ofstream map(fmt::format("/tmp/perf-{}.map", ::getpid()), std::ios::app);
  std::vector<std::pair<uintptr_t, std::string>> at; // entry point, name
  for (size_t k = 0; k < m.kernels.size(); ++k)
    at.push_back({reinterpret_cast<uintptr_t>(exe.kernel(int(k))),
                  fmt::format("{}:evoc_kernel_{}", m.kernels[k].name, k)});
  if (const void *p = exe.windowProductEntry())
    at.push_back({reinterpret_cast<uintptr_t>(p), "window_product"});
  std::sort(at.begin(), at.end());
  for (size_t i = 0; i < at.size(); ++i) // each runs up to the next one
    map << fmt::format("{:x} {:x} {}:{}\n", at[i].first,
                       i + 1 < at.size() ? at[i + 1].first - at[i].first : 0x10000, base,
                       at[i].second);
  fmt::print("perf map: /tmp/perf-{}.map, object {}/{}.o\n", ::getpid(), dir, base);
}

/// Cold (empty cache) and warm compile of an experiment's module.
std::unique_ptr<codegen::cpu::CpuExecutable> compileTimed(const Experiment &e,
                                                          const std::string &perfMap) {
  fs::path cache = fs::temp_directory_path() / fmt::format("evoc-bench-cache-{}", ::getpid());
  codegen::CompileOptions co;
  co.cacheDir = cache.string();
  auto cold = codegen::cpu::compileCpu(e.m, co);
  auto warm = codegen::cpu::compileCpu(e.m, co);
  fmt::print("compile {} ({} kernels, O3): front end + passes {:.1f} ms; code generation cold "
             "{:.1f} ms, warm (cache) {:.1f} ms{}; total cold {:.1f} ms, warm {:.1f} ms\n",
             e.what, e.m.kernels.size(), e.frontSeconds * 1e3, cold->compileSeconds() * 1e3,
             warm->compileSeconds() * 1e3, warm->fromCache() ? "" : " (cache miss!)",
             (e.frontSeconds + cold->compileSeconds()) * 1e3,
             (e.frontSeconds + warm->compileSeconds()) * 1e3);
  if (!perfMap.empty())
    writePerfMap(e, e.m, *warm, perfMap, "");
  std::error_code ec;
  fs::remove_all(cache, ec);
  return warm;
}

struct RunStats {
  double seconds = 0, cpuSeconds = 0;
  int64_t robotSteps = 0;
  runtime::RolloutMemory memory; // of the largest robot
  int invalid = 0;
};

RunStats runTrain(const runtime::ModuleInfo &info, const codegen::Executable &exe,
                  const std::vector<runtime::Robot> &robots, runtime::TrainOptions o) {
  auto t0 = std::chrono::steady_clock::now();
  const double c0 = bench::processCpuSeconds();
  std::vector<runtime::TrainResult> res = runtime::train(info, exe, robots, o);
  RunStats s;
  s.seconds = bench::since(t0);
  s.cpuSeconds = bench::processCpuSeconds() - c0;
  for (const auto &r : res) {
    s.robotSteps += r.robotSteps;
    s.invalid += r.valid ? 0 : 1;
    if (r.memory.fullTapeBytes > s.memory.fullTapeBytes)
      s.memory = r.memory;
  }
  return s;
}

/// One compiled variant of an experiment (autodiff::Tape's three).
struct Variant {
  const char *name;
  const ir::Module &m;
  const runtime::ModuleInfo &info;
  const codegen::Executable &exe;
};

/// The median of a few runs' seconds (and CPU seconds), to damp the noise
/// of a shared machine.
RunStats median(std::vector<RunStats> runs) {
  auto mid = [&](auto key) {
    std::vector<double> v;
    for (const auto &r : runs)
      v.push_back(key(r));
    std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  RunStats s = runs[0];
  s.seconds = mid([](const RunStats &r) { return r.seconds; });
  s.cpuSeconds = mid([](const RunStats &r) { return r.cpuSeconds; });
  return s;
}

void workload(const char *name, int rows, int cols, int nRobots, const Args &a,
              const std::vector<Variant> &variants, const codegen::Executable &interp,
              double peakAll, double peakCpu) {
  std::vector<runtime::Robot> robots = evolve::randomLatticeRobots(rows, cols, nRobots, 1234);
  if (!a.dumpRobots.empty()) { // the same bodies for bench/torch_baseline.py
    nlohmann::json all = nlohmann::json::array();
    for (const auto &r : robots)
      all.push_back(runtime::robotToJson(r));
    std::ofstream(fmt::format("{}/robots_{}x{}.json", a.dumpRobots, rows, cols)) << all.dump();
  }
  const int nv = int(variants.size()), last = nv - 1; // the last: the old path
  std::vector<double> fwd(size_t(nv), 0.0), adj(size_t(nv), 0.0);
  double pts = 0, sps = 0;
  for (const auto &r : robots) {
    pts += r.numPoints();
    sps += r.numSprings();
    for (int v = 0; v < nv; ++v) {
      auto [f, b] = stepFlops(variants[v].m, r);
      fwd[v] += f / nRobots;
      adj[v] += b / nRobots;
    }
  }
  fmt::print("== {}: {} random {}x{} lattice robots (mean {:.0f} points, {:.0f} springs), "
             "T = {}, one forward + backward each, {} threads\n",
             name, nRobots, rows, cols, pts / nRobots, sps / nRobots, a.steps, a.threads);
  runtime::TrainOptions o;
  o.steps = a.steps;
  o.iterations = 0;
  o.threads = a.threads;
  o.groundHeight = 0.1;
  o.fullTapeBudget = 0; // the checkpointed line checkpoints whatever the robot's size
  runtime::TrainOptions of = o;
  of.fullTape = true;
  // The variants alternately, checkpointed and full tape, a few repeats.
  const int reps = a.quick ? 1 : 3;
  std::vector<std::array<std::vector<RunStats>, 2>> runs(static_cast<size_t>(nv));
  for (int rep = 0; rep < reps; ++rep)
    for (int v = 0; v < nv; ++v) {
      runs[v][0].push_back(runTrain(variants[v].info, variants[v].exe, robots, o));
      runs[v][1].push_back(runTrain(variants[v].info, variants[v].exe, robots, of));
    }
  const double steps = double(a.steps - 1);
  std::vector<std::array<RunStats, 2>> med(static_cast<size_t>(nv));
  for (int v = 0; v < nv; ++v) {
    med[v][0] = median(runs[v][0]);
    med[v][1] = median(runs[v][1]);
    // Executed FLOPs per robot: forward, the checkpointed sweep's
    // recomputation (plus, with kept temporaries, one step per window for
    // the temporaries of the step into each window's checkpoint), adjoint.
    const bool kept = med[v][0].memory.tapeBytes > 0;
    const double windows = std::ceil(steps / double(med[v][0].memory.windowSteps));
    const double flopsCk = steps * (2 * fwd[v] + adj[v]) + (kept ? windows * fwd[v] : 0);
    const double flopsFt = steps * (fwd[v] + adj[v]);
    fmt::print("  {}: step {:.1f} kFLOP, step.adj {:.1f} kFLOP per robot-step (IR count)\n",
               variants[v].name, fwd[v] * 1e-3, adj[v] * 1e-3);
    auto line = [&](const char *what, const RunStats &r, double flops) {
      flops *= nRobots;
      fmt::print("    {:<13} {:.3f} s: {:>8.0f} robot-steps/s, {:5.2f} GFLOP/s = {:4.1f}% of "
                 "peak FMA; per CPU-second: {:>8.0f} robot-steps, {:4.1f}% of one core's peak\n",
                 what, r.seconds, double(r.robotSteps) / r.seconds, flops / r.seconds * 1e-9,
                 100 * flops / r.seconds / peakAll, double(r.robotSteps) / r.cpuSeconds,
                 100 * flops / r.cpuSeconds / peakCpu);
    };
    line("checkpointed:", med[v][0], flopsCk);
    line("full tape:", med[v][1], flopsFt);
    if (med[v][0].invalid)
      fmt::print("    ({} robots invalid)\n", med[v][0].invalid);
  }
  for (int v = 0; v < last; ++v)
    fmt::print("  medians of {} alternating runs: {} / {} = {:.2f}x checkpointed, {:.2f}x full "
               "tape (per CPU-second {:.2f}x, {:.2f}x); step.adj FLOPs {:.2f}x\n",
               reps, variants[size_t(v)].name, variants[size_t(last)].name,
               med[size_t(last)][0].seconds / med[size_t(v)][0].seconds,
               med[size_t(last)][1].seconds / med[size_t(v)][1].seconds,
               med[size_t(last)][0].cpuSeconds / med[size_t(v)][0].cpuSeconds,
               med[size_t(last)][1].cpuSeconds / med[size_t(v)][1].cpuSeconds,
               adj[size_t(v)] / adj[size_t(last)]);
  for (int v = 0; v < nv; ++v) {
    const auto &ck = med[v][0].memory, &ft = med[v][1].memory;
    const double held = double(ck.stateStoreBytes + ck.keptTempBytes);
    fmt::print(
        "  memory of the largest robot, {}: checkpointed {:.1f} KiB (states {:.1f}, kept "
        "temporaries {:.1f}) = {:.1f}% of a full tape of states ({:.1f} KiB), {:.1f}% of "
        "the full tape with its kept temporaries ({:.1f} KiB); time checkpointed / full "
        "tape = {:.2f}x\n",
        variants[v].name, held / 1024.0, ck.stateStoreBytes / 1024.0, ck.keptTempBytes / 1024.0,
        100.0 * held / double(ft.stateStoreBytes), ft.stateStoreBytes / 1024.0,
        100.0 * held / double(ft.stateStoreBytes + ft.keptTempBytes),
        (ft.stateStoreBytes + ft.keptTempBytes) / 1024.0, med[v][0].seconds / med[v][1].seconds);
  }
  // Interpreter vs LLVM on one robot, one thread, a short rollout.
  const Variant &now = variants[0];
  std::vector<runtime::Robot> one(robots.begin(), robots.begin() + 1);
  runtime::TrainOptions o1 = o;
  o1.threads = 1;
  o1.steps = a.quick ? 20 : 60;
  RunStats ci = runTrain(now.info, interp, one, o1);
  RunStats cc = runTrain(now.info, now.exe, one, o1);
  for (int i = 0; i < 4; ++i) // short runs: take the best of a few
    cc.cpuSeconds = std::min(cc.cpuSeconds, runTrain(now.info, now.exe, one, o1).cpuSeconds);
  fmt::print("  speed-up over the IR interpreter (1 robot, T = {}, 1 thread, CPU time): {:.0f}x "
             "({:.4f} s vs {:.4f} s)\n",
             o1.steps, ci.cpuSeconds / cc.cpuSeconds, ci.cpuSeconds, cc.cpuSeconds);
}

} // namespace

int main(int argc, char **argv) {
  Args a = parse(argc, argv);
  fmt::print("evoc CPU benchmark on {}, {} threads\n", codegen::cpu::hostDescription(), a.threads);
  int width = 0;
  double peakCpu = 0;
  const double peak1 = bench::peakFmaFlops(1, &width, &peakCpu);
  const double peakAll = bench::peakFmaFlops(a.threads);
  fmt::print("peak FMA (f64, {}-bit vectors): {:.1f} GFLOP/s on 1 thread ({:.1f} per CPU-second), "
             "{:.1f} GFLOP/s on {} threads\n",
             width, peak1 * 1e-9, peakCpu * 1e-9, peakAll * 1e-9, a.threads);
  const double l2 = bench::l2BandwidthBytes();
  fmt::print("L2 bandwidth (one thread, y += a x over 2 x 128 KiB, 24 bytes per element): "
             "{:.1f} GB/s per CPU-second = {:.2f} bytes per peak flop\n",
             l2 * 1e-9, l2 / peakCpu);

  std::vector<Experiment> ex;
#ifdef EVOC_BENCH_WITH_DRIVER
  if (!a.handBuilt) {
    ex.push_back(fromEvo("examples/eldir_small.evo"));
    ex.push_back(fromEvo("examples/eldir.evo"));
  }
#endif
  if (ex.empty()) {
    ex.push_back(handBuilt());
    ex.push_back(handBuilt());
  }
  struct Load {
    const char *name;
    int rows, cols, robots;
  } loads[2] = {{"ELDiR public framework", 6, 10, a.quick ? 8 : 64},
                {"ELDiR paper", 13, 22, a.quick ? 2 : 16}};
  // Every executable lives to the end, so that no two share an address in
  // the perf map.
  std::vector<std::unique_ptr<codegen::cpu::CpuExecutable>> exes;
  exes.reserve(6); // the references below stay valid
  for (int w = 0; w < 2; ++w) {
    fmt::print("\n");
    const Experiment &e = ex[size_t(w)];
    auto &exe = exes.emplace_back(compileTimed(e, a.perfMap));
    auto &keptExe = exes.emplace_back(codegen::cpu::compileCpu(e.kept, {}));
    auto &oldExe = exes.emplace_back(codegen::cpu::compileCpu(e.replay, {}));
    if (!a.perfMap.empty()) {
      writePerfMap(e, e.kept, *keptExe, a.perfMap, "-kept");
      writePerfMap(e, e.replay, *oldExe, a.perfMap, "-replay");
    }
    runtime::ModuleInfo info(e.m), keptInfo(e.kept), oldInfo(e.replay);
    auto interp = codegen::compile(e.m, codegen::BackendKind::Interp);
    const std::vector<Variant> variants = {{"window products (new)", e.m, info, *exe},
                                           {"kept temporaries only", e.kept, keptInfo, *keptExe},
                                           {"replay (old)", e.replay, oldInfo, *oldExe}};
    workload(loads[w].name, loads[w].rows, loads[w].cols, loads[w].robots, a, variants, *interp,
             peakAll, peakCpu);
  }
  fmt::print("\npeak RSS of this process: {:.1f} MiB\n", bench::peakRssBytes() / 1048576.0);
  return 0;
}
