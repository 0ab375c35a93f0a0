// The CPU back end on the ELDiR workload: robot-steps/s, fraction of peak FMA
// throughput, speed-up over the interpreter, checkpointed vs full-tape
// memory and time, cold and warm compile time, all measured in this run.
//
//   evoc_cpu_bench [--threads N] [--steps T] [--quick]
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "BenchUtil.h"
#include "MassSpring.h"
#include "autodiff/Differentiate.h"
#include "codegen/llvm/CpuBackend.h"
#include "core/Layout.h"
#include "core/ThreadPool.h"
#include "core/Train.h"
#include "evolve/Lattice.h"

using namespace evoc;
namespace fs = std::filesystem;

namespace {

struct Args {
  int threads = 0;
  int64_t steps = 1000;
  bool quick = false;
};

Args parse(int argc, char **argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    if (s == "--threads" && i + 1 < argc)
      a.threads = std::atoi(argv[++i]);
    else if (s == "--steps" && i + 1 < argc)
      a.steps = std::atoll(argv[++i]);
    else if (s == "--quick")
      a.quick = true;
    else {
      std::fprintf(stderr, "usage: evoc_cpu_bench [--threads N] [--steps T] [--quick]\n");
      std::exit(2);
    }
  }
  if (a.threads <= 0)
    a.threads = int(runtime::defaultThreads());
  return a;
}

std::vector<runtime::Robot> randomLatticeRobots(int rows, int cols, int n, uint64_t seed) {
  evolve::LatticeSpec spec;
  spec.rows = rows;
  spec.cols = cols;
  evolve::LatticeBody body(spec);
  evolve::EvoRng rng(seed);
  std::vector<runtime::Robot> out;
  for (int i = 0; i < n; ++i)
    out.push_back(body.express(body.sample(rng)));
  return out;
}

/// Kernel FLOPs of one robot's forward step and adjoint step.
std::pair<double, double> stepFlops(const ir::Module &m, const runtime::Robot &r) {
  std::vector<int64_t> sizes(m.sets.size(), 0);
  sizes[size_t(m.findSet("point"))] = r.numPoints();
  sizes[size_t(m.findSet("spring"))] = r.numSprings();
  ir::deriveSetSizes(m, sizes.data());
  return {bench::kernelFlops(m, m.findKernel("step"), sizes.data()),
          bench::kernelFlops(m, m.findKernel("step.adj"), sizes.data())};
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

void workload(const char *name, int rows, int cols, int nRobots, const Args &a,
              const ir::Module &m, const runtime::ModuleInfo &info,
              const codegen::Executable &cpu, const codegen::Executable &interp,
              double peakAll, double peakCpu) {
  std::vector<runtime::Robot> robots = randomLatticeRobots(rows, cols, nRobots, 1234);
  double pts = 0, sps = 0, fwd = 0, adj = 0;
  for (const auto &r : robots) {
    pts += r.numPoints();
    sps += r.numSprings();
    auto [f, b] = stepFlops(m, r);
    fwd += f;
    adj += b;
  }
  fmt::print("\n== {}: {} random {}x{} lattice robots (mean {:.0f} points, {:.0f} springs), "
             "T = {}, one forward + backward each, {} threads\n",
             name, nRobots, rows, cols, pts / nRobots, sps / nRobots, a.steps, a.threads);
  runtime::TrainOptions o;
  o.steps = a.steps;
  o.iterations = 0;
  o.threads = a.threads;
  o.groundHeight = 0.1;
  RunStats ck = runTrain(info, cpu, robots, o);
  runtime::TrainOptions of = o;
  of.fullTape = true;
  RunStats ft = runTrain(info, cpu, robots, of);
  const double steps = double(a.steps - 1);
  // Executed FLOPs: forward, the checkpointed sweep's recomputation, adjoint.
  const double flopsCk = steps * (2 * fwd + adj), flopsFt = steps * (fwd + adj);
  auto line = [&](const char *what, const RunStats &r, double flops) {
    fmt::print("  cpu, {:<13} {:.3f} s: {:>8.0f} robot-steps/s, {:5.2f} GFLOP/s = {:4.1f}% of "
               "peak FMA; per CPU-second: {:>8.0f} robot-steps, {:4.1f}% of one core's peak\n",
               what, r.seconds, double(r.robotSteps) / r.seconds, flops / r.seconds * 1e-9,
               100 * flops / r.seconds / peakAll, double(r.robotSteps) / r.cpuSeconds,
               100 * flops / r.cpuSeconds / peakCpu);
  };
  line("checkpointed:", ck, flopsCk);
  line("full tape:", ft, flopsFt);
  if (ck.invalid)
    fmt::print("  ({} robots invalid)\n", ck.invalid);
  fmt::print("  state memory of the largest robot: checkpointed {:.1f} KiB vs full tape "
             "{:.1f} KiB = {:.1f}%; time checkpointed / full tape = {:.2f}x\n",
             ck.memory.stateStoreBytes / 1024.0, ft.memory.stateStoreBytes / 1024.0,
             100.0 * double(ck.memory.stateStoreBytes) / double(ft.memory.stateStoreBytes),
             ck.seconds / ft.seconds);
  // Interpreter vs LLVM on one robot, one thread, a short rollout.
  std::vector<runtime::Robot> one(robots.begin(), robots.begin() + 1);
  runtime::TrainOptions o1 = o;
  o1.threads = 1;
  o1.steps = a.quick ? 20 : 60;
  RunStats ci = runTrain(info, interp, one, o1);
  RunStats cc = runTrain(info, cpu, one, o1);
  for (int i = 0; i < 4; ++i) // short runs: take the best of a few
    cc.cpuSeconds = std::min(cc.cpuSeconds, runTrain(info, cpu, one, o1).cpuSeconds);
  fmt::print("  speed-up over the IR interpreter (1 robot, T = {}, 1 thread, CPU time): {:.0f}x "
             "({:.4f} s vs {:.4f} s)\n",
             o1.steps, ci.cpuSeconds / cc.cpuSeconds, ci.cpuSeconds, cc.cpuSeconds);
}

} // namespace

int main(int argc, char **argv) {
  Args a = parse(argc, argv);
  fmt::print("evoc CPU benchmark on {}, {} threads\n", codegen::cpu::hostDescription(),
             a.threads);
  int width = 0;
  double peakCpu = 0;
  const double peak1 = bench::peakFmaFlops(1, &width, &peakCpu);
  const double peakAll = bench::peakFmaFlops(a.threads);
  fmt::print("peak FMA (f64, {}-bit vectors): {:.1f} GFLOP/s on 1 thread ({:.1f} per CPU-second), "
             "{:.1f} GFLOP/s on {} threads\n",
             width, peak1 * 1e-9, peakCpu * 1e-9, peakAll * 1e-9, a.threads);

  // The module: the ELDiR step (noslip ground) + MLP + loss, and its adjoints.
  testing::MassSpringIds ids;
  ir::Module m = testing::makeMassSpringModule(ids);
  autodiff::differentiate(m);
  runtime::ModuleInfo info(m);

  fs::path cache = fs::temp_directory_path() / fmt::format("evoc-bench-cache-{}", ::getpid());
  codegen::CompileOptions co;
  co.cacheDir = cache.string();
  auto cold = codegen::cpu::compileCpu(m, co);
  auto warm = codegen::cpu::compileCpu(m, co);
  fmt::print("compile (hand-built ELDiR module, {} kernels, O3): cold {:.1f} ms, warm (cache) "
             "{:.1f} ms{}\n",
             m.kernels.size(), cold->compileSeconds() * 1e3, warm->compileSeconds() * 1e3,
             warm->fromCache() ? "" : " (cache miss!)");
  std::error_code ec;
  fs::remove_all(cache, ec);
  auto interp = codegen::compile(m, codegen::BackendKind::Interp);

  workload("ELDiR public framework", 6, 10, a.quick ? 8 : 64, a, m, info, *warm, *interp, peakAll, peakCpu);
  workload("ELDiR paper", 13, 22, a.quick ? 2 : 16, a, m, info, *warm, *interp, peakAll, peakCpu);
  fmt::print("\npeak RSS of this process: {:.1f} MiB\n", bench::peakRssBytes() / 1048576.0);
  return 0;
}
