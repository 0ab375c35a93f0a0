// The multi-task workload (docs/multitask.md; examples/multitask_alpaca.evo):
// robot-steps/s of one training iteration, forward + backward over the
// batch, through the real compiled module and runtime::FixedTrainer (what
// `evoc train` runs), and where the time goes.
//
//   evoc_multitask_bench [FILE] [--set KEY=VALUE ...] [--threads N] [--reps R]
//                        [--lanes L] [--lanes-jam B] [--full-tape | --checkpointed]
//                        [--breakdown] [--perf-map DIR]
//
// FILE defaults to examples/multitask_alpaca.evo. After one warm-up
// iteration it times R iterations (robot-steps = batch x steps each) and
// prints one JSON line last: {"system": "evoc", "robot_steps_per_s", ...}.
// --breakdown times one more iteration with every kernel call timed (per
// kernel: calls, seconds, FLOPs) and the rest of the rollout (runtime code
// between kernels). The rollouts keep whatever tape the runtime chooses
// (runtime::resolveCheckpointK: a full tape where it fits the budget);
// --full-tape forces one, --checkpointed forces K = sqrt(T) windows.
// --perf-map DIR: as in evoc_cpu_bench (/tmp/perf-PID.map, DIR/<module>.o).
// The batch runs as `evoc train` runs it: groups of L episodes in lanes
// (runtime::kTrainLanes unless --lanes; docs/architecture.md "Episodes in
// lanes"); with L > 1 each repeat also times one iteration with one episode
// per kernel call, alternating, and prints the ratio. --breakdown times the
// default path, window products included. --lanes-jam B compiles the lanes
// kernels with B rows per unroll-and-jam block (CompileOptions::lanesJam; 1:
// none, the path before it, for comparisons).
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "BenchUtil.h"
#include "app/BodyModels.h"
#include "app/Driver.h"
#include "app/Session.h"
#include "codegen/cpu/CpuBackend.h"
#include "core/Aligned.h"
#include "core/FixedTrain.h"
#include "core/Layout.h"
#include "evolve/engine/EvoRng.h"
#include "ir/Cost.h"
#include "support/Error.h"
#include "support/OptionTable.h"

using namespace evoc;

namespace {

struct Args {
  std::vector<std::string> common; // the .evo file and --set options, for the driver
  int threads = 2;
  int reps = 3;
  int lanes = runtime::kTrainLanes; // --lanes; 1: one episode per kernel call
  bool fullTape = false;            // --full-tape
  bool checkpointed = false;        // --checkpointed: K = sqrt even where the full tape fits
  bool breakdown = false;
  int lanesJam = 0; // --lanes-jam: CompileOptions::lanesJam
  std::string perfMap;
};

Args parse(int argc, char **argv) {
  Args a;
  OptionTable t("evoc_multitask_bench");
  t.integer("--threads", 1, 4096, a.threads)
      .integer("--reps", 1, 1000000, a.reps)
      .integer("--lanes", 1, 64, a.lanes)
      .integer("--lanes-jam", 0, 64, a.lanesJam)
      .flag("--full-tape", a.fullTape)
      .flag("--checkpointed", a.checkpointed)
      .flag("--breakdown", a.breakdown)
      .text("--perf-map", a.perfMap)
      .custom("--set",
              [&a](const std::string &kv) { // for the driver, as `evoc` takes it
                a.common.push_back("--set");
                a.common.push_back(kv);
                return std::string();
              })
      .positionals(a.common);
  if (!t.parse(std::vector<std::string>(argv + 1, argv + argc))) {
    std::fprintf(stderr, "usage: evoc_multitask_bench [FILE] [--set KEY=VALUE ...] "
                         "[--threads N] [--reps R] [--lanes L] [--lanes-jam B] "
                         "[--full-tape | --checkpointed] [--breakdown] [--perf-map DIR]\n");
    std::exit(2);
  }
  if (std::none_of(a.common.begin(), a.common.end(),
                   [](const std::string &s) { return s.size() > 4 && s.ends_with(".evo"); }))
    a.common.insert(a.common.begin(),
                    std::string(EVOC_SOURCE_DIR) + "/examples/multitask_alpaca.evo");
  return a;
}

/// Forwards every kernel call; while enabled, adds each call's CPU time (of
/// the calling thread, so time the thread spends descheduled on a shared
/// machine is not counted) and count to that thread's tally (no shared
/// cache line per call).
class TimedExecutable final : public codegen::Executable {
public:
  /// Slots 0 .. kernels - 1 time the kernels, slot `kernels` the window products.
  TimedExecutable(const codegen::Executable &inner, size_t kernels)
      : inner_(inner), kernels_(kernels + 1) {}
  void run(int k, void *const *buffers, const int64_t *sizes, int64_t t) const override {
    if (!enabled_.load(std::memory_order_relaxed)) {
      inner_.run(k, buffers, sizes, t);
      return;
    }
    Tally &my = tally();
    const double c0 = bench::threadCpuSeconds();
    inner_.run(k, buffers, sizes, t);
    my.seconds[size_t(k)] += bench::threadCpuSeconds() - c0;
    my.calls[size_t(k)] += 1;
  }
  void windowProduct(bool f32, void *grad, const void *rows, const void *x, int64_t S, int64_t U,
                     int64_t n, int64_t ld, int lanes) const override {
    if (!enabled_.load(std::memory_order_relaxed)) {
      inner_.windowProduct(f32, grad, rows, x, S, U, n, ld, lanes);
      return;
    }
    Tally &my = tally();
    const double c0 = bench::threadCpuSeconds();
    inner_.windowProduct(f32, grad, rows, x, S, U, n, ld, lanes);
    my.seconds[kernels_ - 1] += bench::threadCpuSeconds() - c0;
    my.calls[kernels_ - 1] += 1;
  }
  void enable(bool on) { enabled_.store(on); }
  /// Seconds and calls per kernel, summed over threads.
  std::pair<std::vector<double>, std::vector<int64_t>> totals() const {
    std::vector<double> s(kernels_, 0.0);
    std::vector<int64_t> c(kernels_, 0);
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto &t : tallies_)
      for (size_t k = 0; k < kernels_; ++k) {
        s[k] += t->seconds[k];
        c[k] += t->calls[k];
      }
    return {s, c};
  }

private:
  struct Tally {
    std::vector<double> seconds;
    std::vector<int64_t> calls;
  };
  Tally &tally() const {
    thread_local const TimedExecutable *owner = nullptr;
    thread_local Tally *mine = nullptr;
    if (owner != this) {
      std::lock_guard<std::mutex> lock(mu_);
      tallies_.push_back(std::make_unique<Tally>());
      mine = tallies_.back().get();
      mine->seconds.assign(kernels_, 0.0);
      mine->calls.assign(kernels_, 0);
      owner = this;
    }
    return *mine;
  }
  const codegen::Executable &inner_;
  size_t kernels_;
  std::atomic<bool> enabled_{false};
  mutable std::mutex mu_;
  mutable std::vector<std::unique_ptr<Tally>> tallies_;
};

/// Profiling aids (--perf-map), as in evoc_cpu_bench.
void writePerfMap(const ir::Module &m, const codegen::Executable &exe, const std::string &dir) {
  const auto *cpu = dynamic_cast<const codegen::cpu::CpuExecutable *>(&exe);
  if (!cpu) {
    fmt::print("--perf-map: not the CPU back end; skipped\n");
    return;
  }
  std::ifstream in(cpu->cacheEntry(), std::ios::binary);
  std::string entry((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t elf = entry.find("\x7f"
                          "ELF");
  if (elf != std::string::npos)
    std::ofstream(dir + "/multitask.o", std::ios::binary) << entry.substr(elf);
  std::ofstream map(fmt::format("/tmp/perf-{}.map", ::getpid()), std::ios::app);
  std::vector<std::pair<uintptr_t, size_t>> at;
  for (size_t k = 0; k < m.kernels.size(); ++k)
    at.push_back({reinterpret_cast<uintptr_t>(cpu->kernel(int(k))), k});
  std::sort(at.begin(), at.end());
  for (size_t i = 0; i < at.size(); ++i)
    map << fmt::format("{:x} {:x} multitask:{}:evoc_kernel_{}\n", at[i].first,
                       i + 1 < at.size() ? at[i + 1].first - at[i].first : 0x10000,
                       m.kernels[at[i].second].name, at[i].second);
  fmt::print("perf map: /tmp/perf-{}.map, object {}/multitask.o\n", ::getpid(), dir);
}

/// One training iteration: its wall seconds, the process's CPU seconds and
/// the robot-steps it ran.
std::tuple<double, double, int64_t> timedIteration(runtime::FixedTrainer &tr, int64_t it) {
  auto w0 = std::chrono::steady_clock::now();
  const double c0 = bench::processCpuSeconds();
  runtime::BatchStep b = tr.iterate(it);
  if (!b.valid)
    throw Error("iteration " + std::to_string(it) + ": " + b.error);
  return std::tuple{bench::since(w0), bench::processCpuSeconds() - c0, b.robotSteps};
}

/// --breakdown: one more iteration of the default path (in lanes when
/// `lanesExe`) with every kernel call and window product timed, printed as
/// a table and returned as JSON (per kernel: calls, CPU seconds, FLOPs).
nlohmann::json kernelBreakdown(const ir::Module &m, const runtime::ModuleInfo &info,
                               const codegen::Executable &exe, const codegen::Executable *lanesExe,
                               int lanes, const runtime::Robot &robot,
                               const runtime::TrainOptions &o, int threads, double perIter) {
  // A second trainer on the timing wrappers, so the rates above ran unwrapped.
  TimedExecutable timed(exe, m.kernels.size());
  std::optional<TimedExecutable> timedLanes;
  if (lanesExe)
    timedLanes.emplace(*lanesExe, m.kernels.size());
  runtime::FixedTrainer tt(info, timed, robot, o, timedLanes ? &*timedLanes : nullptr, lanes);
  timedIteration(tt, 0);
  timed.enable(true);
  if (timedLanes)
    timedLanes->enable(true);
  auto [w, cTimed, n] = timedIteration(tt, 1);
  (void)n;
  timed.enable(false);
  auto [secs, calls] = timed.totals();
  // A call in lanes runs `lanes` episodes: count episode-calls.
  std::vector<int64_t> episodes = calls;
  if (timedLanes) {
    timedLanes->enable(false);
    auto [ls, lc] = timedLanes->totals();
    for (size_t k = 0; k < secs.size(); ++k) {
      secs[k] += ls[k];
      calls[k] += lc[k];
      episodes[k] += k + 1 < secs.size() ? lc[k] * lanes : lc[k]; // products run per lane
    }
  }
  // Each timed call also counts about one clock read: measure and remove it.
  const int kReads = 20000;
  const double r0 = bench::threadCpuSeconds();
  for (int i = 0; i < kReads; ++i)
    (void)bench::threadCpuSeconds();
  const double perRead = (bench::threadCpuSeconds() - r0) / kReads;
  for (size_t k = 0; k < secs.size(); ++k)
    secs[k] = std::max(0.0, secs[k] - perRead * double(calls[k]));
  std::vector<int64_t> sizes = runtime::setSizes(m, robot);
  double inKernels = 0;
  for (double x : secs)
    inKernels += x;
  // Shares are of the timed iteration's CPU time less its clock reads
  // (two per call); "outside kernels" is the rest (runtime code: copies,
  // checks, zeroing, commands).
  int64_t allCalls = 0;
  for (int64_t x : calls)
    allCalls += x;
  const double c = cTimed - 2 * perRead * double(allCalls);
  fmt::print("breakdown of one timed iteration ({:.3f} s wall, {:.3f} CPU-s less {:.0f} ns of "
             "clock reads per call = {:.3f} CPU-s, {} threads):\n",
             w, cTimed, 2e9 * perRead, c, threads);
  fmt::print("  {:<22} {:>9} {:>10} {:>7} {:>12} {:>9}\n", "kernel", "calls", "CPU-s", "share",
             "us/robot-step", "GFLOP/s");
  nlohmann::json breakdown = nlohmann::json::array();
  for (size_t k = 0; k < secs.size(); ++k) {
    if (calls[k] == 0)
      continue;
    const bool product = k + 1 == secs.size();
    const double flops =
        product ? 0.0 : ir::kernelFlops(m, int(k), sizes.data()) * double(episodes[k]);
    const std::string name = product ? std::string("window products") : m.kernels[k].name;
    fmt::print("  {:<22} {:>9} {:>10.3f} {:>6.1f}% {:>12.2f} {:>9}\n", name, calls[k], secs[k],
               100 * secs[k] / c, 1e6 * secs[k] / perIter,
               product ? std::string("-") : fmt::format("{:.2f}", flops / secs[k] * 1e-9));
    breakdown.push_back(
        {{"kernel", name}, {"calls", calls[k]}, {"cpu_seconds", secs[k]}, {"flops", flops}});
  }
  fmt::print("  {:<22} {:>9} {:>10.3f} {:>6.1f}% {:>12.2f}\n", "outside kernels", "", c - inKernels,
             100 * (c - inKernels) / c, 1e6 * (c - inKernels) / perIter);
  return breakdown;
}

} // namespace

int main(int argc, char **argv) {
  Args a = parse(argc, argv);
  try {
    app::CommonOptions opts;
    if (!app::parseCommonOptions(a.common, opts))
      return 2;
    auto t0 = std::chrono::steady_clock::now();
    app::Session s(opts, "cpu", /*requireExperiment=*/true);
    if (!s.ok())
      return 1;
    const double compileSeconds = bench::since(t0);
    const sema::CheckedProgram &p = s.program();
    if (!p.hasTrain)
      throw Error(opts.file + " has no train block");
    runtime::TrainOptions o = s.trainOptions();
    o.threads = a.threads;
    o.fullTape = a.fullTape;
    if (a.checkpointed)
      o.fullTapeBudget = 0;
    auto model = app::bodyModel(p);
    evolve::EvoRng rng(o.seed);
    runtime::Robot robot = model->express(*model->sample(rng)).robot;
    const ir::Module &m = s.module();
    runtime::ModuleInfo info(m);
    std::unique_ptr<codegen::Executable> lanesExe;
    if (a.lanes > 1) {
      codegen::CompileOptions co;
      co.lanes = a.lanes;
      co.lanesJam = a.lanesJam;
      lanesExe = codegen::compile(m, codegen::BackendKind::Cpu, co);
    }
    runtime::FixedTrainer trainer(info, s.executable(), robot, o, lanesExe.get(), a.lanes);
    runtime::FixedTrainer onePerCall(info, s.executable(), robot, o);
    // The window length the rollouts run with: the runtime's choice unless
    // --full-tape or --checkpointed.
    const runtime::RobotLayout layout = runtime::layoutRobot(info, runtime::setSizes(m, robot));
    const int64_t windowK = runtime::resolveCheckpointK(runtime::rolloutConfig(o),
                                                        runtime::alignUp(layout.stateBytes()),
                                                        runtime::alignUp(layout.tapeBytes()));
    const bool fullTape = windowK >= o.steps - 1;
    const std::string tapeMode =
        fullTape ? std::string(a.fullTape ? "full tape" : "full tape (the runtime's choice)")
                 : fmt::format("checkpointed (K = {})", windowK);
    if (!a.perfMap.empty())
      writePerfMap(m, s.executable(), a.perfMap);

    fmt::print("evoc multi-task benchmark on {}: {} ({} points, {} springs), batch {} x {} "
               "steps, {} threads, {}; compile {:.2f} s\n",
               codegen::cpu::hostDescription(), opts.file, robot.numPoints(), robot.numSprings(),
               o.batch, o.steps, a.threads, tapeMode, compileSeconds);
    // How far this machine's cores scale at all (shared or SMT cores do not).
    const double peak1 = bench::peakFmaFlops(1), peakN = bench::peakFmaFlops(a.threads);
    fmt::print("peak FMA (f64) measured now: {:.1f} GFLOP/s on 1 thread, {:.1f} on {} threads "
               "({:.2f}x)\n",
               peak1 * 1e-9, peakN * 1e-9, a.threads, peakN / peak1);
    timedIteration(trainer, 0); // warm-up: workspaces, pages, caches
    if (lanesExe)
      timedIteration(onePerCall, 0);
    std::vector<double> wall, cpu, wallOne, cpuOne;
    int64_t robotSteps = 0;
    for (int r = 0; r < a.reps; ++r) {
      auto [w, c, n] = timedIteration(trainer, r + 1);
      wall.push_back(w);
      cpu.push_back(c);
      robotSteps = n;
      fmt::print("  iteration {}: {:.3f} s wall, {:.3f} CPU-s: {:.0f} robot-steps/s{}\n", r + 1, w,
                 c, double(n) / w, lanesExe ? fmt::format(" ({} lanes)", a.lanes) : "");
      if (!lanesExe)
        continue;
      auto [w1, c1, n1] = timedIteration(onePerCall, r + 1);
      wallOne.push_back(w1);
      cpuOne.push_back(c1);
      fmt::print("  iteration {}: {:.3f} s wall, {:.3f} CPU-s: {:.0f} robot-steps/s (one episode "
                 "per call)\n",
                 r + 1, w1, c1, double(n1) / w1);
    }
    // robot-steps counted as the paper does: batch x steps per iteration.
    const double perIter = double(o.batch * o.steps);
    double meanWall = 0, meanCpu = 0;
    for (size_t i = 0; i < wall.size(); ++i) {
      meanWall += wall[i] / double(wall.size());
      meanCpu += cpu[i] / double(cpu.size());
    }
    const double best = *std::min_element(wall.begin(), wall.end());
    fmt::print("evoc: {:.0f} robot-steps/s (mean of {}; best {:.0f}), {:.0f} per CPU-second\n",
               perIter / meanWall, a.reps, perIter / best, perIter / meanCpu);
    double meanWallOne = 0, meanCpuOne = 0;
    for (size_t i = 0; i < wallOne.size(); ++i) {
      meanWallOne += wallOne[i] / double(wallOne.size());
      meanCpuOne += cpuOne[i] / double(cpuOne.size());
    }
    if (lanesExe)
      fmt::print("one episode per call: {:.0f} robot-steps/s, {:.0f} per CPU-second; {} lanes: "
                 "{:.2f}x wall, {:.2f}x per CPU-second\n",
                 perIter / meanWallOne, perIter / meanCpuOne, a.lanes, meanWallOne / meanWall,
                 meanCpuOne / meanCpu);

    nlohmann::json breakdown;
    if (a.breakdown)
      breakdown = kernelBreakdown(m, info, s.executable(), lanesExe.get(), a.lanes, robot, o,
                                  a.threads, perIter);
    nlohmann::json j = {{"system", "evoc"},
                        {"robot_steps_per_s", perIter / meanWall},
                        {"robot_steps_per_cpu_s", perIter / meanCpu},
                        {"batch", o.batch},
                        {"steps", o.steps},
                        {"robot_steps_counted", robotSteps},
                        {"threads", a.threads},
                        {"lanes", lanesExe ? a.lanes : 1},
                        {"full_tape", fullTape},
                        {"seconds", meanWall},
                        {"seconds_each", wall},
                        {"cpu_seconds_each", cpu},
                        {"compile_seconds", compileSeconds},
                        {"peak_fma_gflops_1_thread", peak1 * 1e-9},
                        {"peak_fma_gflops_all_threads", peakN * 1e-9}};
    if (a.breakdown)
      j["breakdown"] = breakdown;
    if (lanesExe) {
      j["robot_steps_per_s_one_per_call"] = perIter / meanWallOne;
      j["robot_steps_per_cpu_s_one_per_call"] = perIter / meanCpuOne;
    }
    std::printf("%s\n", j.dump().c_str());
    return 0;
  } catch (const Error &e) {
    std::fprintf(stderr, "evoc_multitask_bench: error: %s\n", e.what());
    return 1;
  }
}
