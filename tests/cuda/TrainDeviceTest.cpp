// The GPU training device (runtime/cuda) on the CPU emulation of the CUDA
// back end, against the CPU device: the same learning curves, gradient
// norms, best and final parameters on a ragged population of lattice bodies,
// for each optimiser; chunks that the device's memory forces give the same
// results as one chunk; invalid robots and early stops get the CPU's
// verdicts; what the GPU path does not run is refused with a sentence.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <unistd.h>

#include "Emulator.h"
#include "core/Device.h"
#include "core/Train.h"
#include "cuda/CudaDevice.h"
#include "driver/Driver.h"
#include "driver/Pipeline.h"
#include "evolve/EvoRng.h"
#include "evolve/Lattice.h"
#include "support/Diagnostics.h"
#include "support/Error.h"
#include "support/SourceManager.h"

using namespace evoc;
namespace fs = std::filesystem;

namespace {

struct Fixture {
  ir::Module module;
  std::unique_ptr<runtime::ModuleInfo> info;
  std::unique_ptr<codegen::Executable> cpu;
  std::unique_ptr<test::EmulatedExecutable> emu;
  std::vector<runtime::Robot> robots;
};

ir::Module compileFile(const fs::path &file, const std::string &precision = "") {
  if (precision.empty())
    return driver::compileFile(file.string()).module;
  return driver::compileFile(file.string(), {{"world.precision", precision}}).module;
}

// eldir_small's module (friction contact, MLP, displacement), compiled once
// for the CPU and for the emulated GPU; four lattice bodies of different sizes.
Fixture &fixture() {
  static Fixture *f = [] {
    auto *fx = new Fixture;
    fx->module = compileFile(fs::path(EVOC_SOURCE_DIR) / "examples" / "eldir_small.evo");
    fx->info = std::make_unique<runtime::ModuleInfo>(fx->module);
    fx->cpu = codegen::compile(fx->module, codegen::BackendKind::Cpu);
    fs::path dir = fs::temp_directory_path() / ("evoc-train-device-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    fx->emu = std::make_unique<test::EmulatedExecutable>(fx->module, dir.string());
    evolve::LatticeSpec spec;
    spec.rows = 3;
    spec.cols = 4;
    evolve::LatticeBody body(spec);
    evolve::EvoRng rng(7);
    while (fx->robots.size() < 4) {
      runtime::Robot r = body.express(body.sample(rng));
      if (fx->robots.empty() || r.numPoints() != fx->robots.back().numPoints())
        fx->robots.push_back(r);
    }
    return fx;
  }();
  return *f;
}

runtime::TrainOptions options() {
  runtime::TrainOptions o;
  o.steps = 12;
  o.iterations = 3;
  o.seed = 5;
  o.groundHeight = 0.1;
  o.threads = 2;
  return o;
}

double maxAbs(const runtime::ParamSet &p) {
  double m = 0;
  for (const auto &[k, t] : p)
    for (double v : t.data)
      m = std::max(m, std::fabs(v));
  return m;
}

void checkParamsClose(const runtime::ParamSet &a, const runtime::ParamSet &b, double tol) {
  REQUIRE(a.size() == b.size());
  const double scale = maxAbs(a) > 0 ? maxAbs(a) : 1.0; // relative to the largest entry
  for (const auto &[k, t] : a) {
    INFO(k);
    REQUIRE(b.count(k));
    const auto &u = b.at(k).data;
    REQUIRE(t.data.size() == u.size());
    for (size_t i = 0; i < u.size(); ++i)
      REQUIRE(std::fabs(t.data[i] - u[i]) <= tol * scale);
  }
}

void checkSame(const std::vector<runtime::TrainResult> &cpu,
               const std::vector<runtime::TrainResult> &gpu, double tol) {
  REQUIRE(cpu.size() == gpu.size());
  for (size_t r = 0; r < cpu.size(); ++r) {
    INFO("robot " << r);
    CHECK(cpu[r].valid == gpu[r].valid);
    CHECK(cpu[r].error == gpu[r].error);
    CHECK(cpu[r].stoppedEarly == gpu[r].stoppedEarly);
    CHECK(cpu[r].robotSteps == gpu[r].robotSteps);
    REQUIRE(cpu[r].losses.size() == gpu[r].losses.size());
    for (size_t i = 0; i < cpu[r].losses.size(); ++i)
      CHECK(std::fabs(cpu[r].losses[i] - gpu[r].losses[i]) <=
            tol * std::max(1.0, std::fabs(cpu[r].losses[i])));
    REQUIRE(cpu[r].gradNorms.size() == gpu[r].gradNorms.size());
    for (size_t i = 0; i < cpu[r].gradNorms.size(); ++i)
      CHECK(std::fabs(cpu[r].gradNorms[i] - gpu[r].gradNorms[i]) <=
            tol * std::max(1.0, cpu[r].gradNorms[i]));
    checkParamsClose(cpu[r].params, gpu[r].params, tol);
    checkParamsClose(cpu[r].bestParams, gpu[r].bestParams, tol);
    checkParamsClose(cpu[r].grad, gpu[r].grad, tol);
  }
}

} // namespace

TEST_CASE("the GPU training device (emulated) learns as the CPU device does, for each optimiser",
          "[cuda][train]") {
  Fixture &f = fixture();
  auto gpu = runtime::cuda::cudaDevice(*f.info, *f.emu);
  for (auto kind : {runtime::OptimizerKind::NormalizedStep, runtime::OptimizerKind::Adam,
                    runtime::OptimizerKind::Sgd}) {
    INFO("optimiser " << int(kind));
    runtime::TrainOptions o = options();
    o.optimizer.kind = kind;
    o.optimizer.lr = 0.01;
    std::vector<uint64_t> ids = {11, 12, 13, 14};
    auto cpu = runtime::train(*f.info, *f.cpu, f.robots, o, &ids);
    auto dev = runtime::train(*f.info, *gpu, f.robots, o, &ids);
    for (const auto &r : cpu)
      REQUIRE(r.valid); // the comparison is about learning, not verdicts
    REQUIRE(cpu[0].losses.size() == 4);
    CHECK(cpu[0].losses.front() != cpu[0].losses.back()); // the weights moved
    checkSame(cpu, dev, 1e-9);
  }
}

TEST_CASE("the GPU training device (emulated) splits a population the memory cannot hold",
          "[cuda][train]") {
  Fixture &f = fixture();
  auto gpu = runtime::cuda::cudaDevice(*f.info, *f.emu);
  runtime::TrainOptions o = options();
  auto whole = runtime::train(*f.info, *gpu, f.robots, o);
  runtime::Population pop(*f.info, f.robots);
  const int64_t all = runtime::cuda::cudaTrainBytes(*f.info, pop, 0, 4, o);
  const int64_t two = runtime::cuda::cudaTrainBytes(*f.info, pop, 0, 2, o);
  const int64_t three = runtime::cuda::cudaTrainBytes(*f.info, pop, 0, 3, o);
  CHECK(two < three);
  CHECK(three < all);
  // Free memory for two robots but not three, next to the 64 MiB the device
  // leaves spare.
  f.emu->setFreeMemory((int64_t(64) << 20) + two + (three - two) / 2);
  CHECK(gpu->chunk(pop, 0, o) == 2);
  CHECK(gpu->chunk(pop, 2, o) >= 1);
  auto chunked = runtime::train(*f.info, *gpu, f.robots, o);
  f.emu->setFreeMemory(-1);
  checkSame(whole, chunked, 0.0); // blocks are independent: the same numbers
}

TEST_CASE("the GPU training device (emulated) gives the CPU's verdicts", "[cuda][train]") {
  Fixture &f = fixture();
  auto gpu = runtime::cuda::cudaDevice(*f.info, *f.emu);
  SECTION("a state beyond world.state_limit") {
    runtime::TrainOptions o = options();
    o.stateLimit = 0.12; // the bodies start at 0.1 and rise above it
    auto cpu = runtime::train(*f.info, *f.cpu, f.robots, o);
    auto dev = runtime::train(*f.info, *gpu, f.robots, o);
    int invalid = 0;
    for (const auto &r : cpu)
      invalid += !r.valid;
    CHECK(invalid > 0);
    checkSame(cpu, dev, 1e-9);
  }
  SECTION("early stops") {
    runtime::TrainOptions o = options();
    o.iterations = 5;
    auto ref = runtime::train(*f.info, *f.cpu, f.robots, o);
    o.stopJump = std::fabs(ref[1].losses[2] - ref[1].losses[1]) * 0.999;
    auto cpu = runtime::train(*f.info, *f.cpu, f.robots, o);
    auto dev = runtime::train(*f.info, *gpu, f.robots, o);
    CHECK(cpu[1].stoppedEarly);
    checkSame(cpu, dev, 1e-9);
  }
}

TEST_CASE("the GPU training device (emulated) learns in f32 as the CPU device does",
          "[cuda][train]") {
  Fixture &f = fixture(); // its bodies
  ir::Module m = compileFile(fs::path(EVOC_SOURCE_DIR) / "examples" / "eldir_small.evo", "f32");
  REQUIRE(m.precision == ir::Precision::F32);
  runtime::ModuleInfo info(m);
  auto cpu = codegen::compile(m, codegen::BackendKind::Cpu);
  fs::path dir = fs::temp_directory_path() / ("evoc-train-f32-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  test::EmulatedExecutable emu(m, dir.string());
  auto gpu = runtime::cuda::cudaDevice(info, emu);
  runtime::TrainOptions o = options();
  o.optimizer.kind = runtime::OptimizerKind::Adam;
  o.optimizer.lr = 0.01;
  auto c = runtime::train(info, *cpu, f.robots, o);
  auto g = runtime::train(info, *gpu, f.robots, o);
  checkSame(c, g, 1e-4); // float sums in another order
  fs::remove_all(dir);
}

TEST_CASE("the GPU training device refuses what it does not run yet", "[cuda][train]") {
  Fixture &f = fixture();
  auto gpu = runtime::cuda::cudaDevice(*f.info, *f.emu);
  runtime::TrainOptions o = options();
  o.batch = 2;
  try {
    runtime::train(*f.info, *gpu, f.robots, o);
    FAIL("a batch of episodes was accepted");
  } catch (const Error &e) {
    CHECK(std::string(e.what()).find("--backend cuda does not train experiments with a batch of "
                                     "episodes") != std::string::npos);
  }
}

// The acceptance check on a GPU: the paper's module (examples/eldir.evo,
// no-slip contact, f64) on 20 random 13 x 22 lattice bodies at T = 1000; one
// forward + backward (loss to 1e-9, gradients to 1e-7 of their largest entry),
// then three learning iterations (curves to 1e-9, relative). Skipped, with a
// note, without a GPU.
TEST_CASE("on a GPU: the GPU training device agrees with the CPU on 20 paper-sized bodies",
          "[cuda][train][gpu]") {
  std::string why;
  if (!codegen::cuda::cudaAvailable(&why)) {
    WARN("skipped, no GPU: " << why);
    return;
  }
  ir::Module m = compileFile(fs::path(EVOC_SOURCE_DIR) / "examples" / "eldir.evo");
  runtime::ModuleInfo info(m);
  auto cpu = codegen::compile(m, codegen::BackendKind::Cpu);
  auto gpuExe = codegen::cuda::compileCuda(m);
  auto gpu = runtime::cuda::cudaDevice(info, *gpuExe);
  evolve::LatticeSpec spec;
  spec.rows = 13;
  spec.cols = 22;
  evolve::LatticeBody body(spec);
  evolve::EvoRng rng(2024);
  std::vector<runtime::Robot> robots;
  for (int i = 0; i < 20; ++i)
    robots.push_back(body.express(body.sample(rng)));
  runtime::TrainOptions o;
  o.steps = 1000;
  o.groundHeight = 0.1;
  o.seed = 3;
  o.iterations = 0; // one forward + backward
  auto c0 = runtime::train(info, *cpu, robots, o);
  auto g0 = runtime::train(info, *gpu, robots, o);
  for (size_t r = 0; r < robots.size(); ++r) {
    INFO("robot " << r);
    REQUIRE(c0[r].valid == g0[r].valid);
    if (!c0[r].valid)
      continue;
    CHECK(std::fabs(c0[r].loss - g0[r].loss) <= 1e-9 * std::max(1.0, std::fabs(c0[r].loss)));
    checkParamsClose(c0[r].grad, g0[r].grad, 1e-7);
  }
  o.iterations = 3;
  auto c3 = runtime::train(info, *cpu, robots, o);
  auto g3 = runtime::train(info, *gpu, robots, o);
  checkSame(c3, g3, 1e-9);
}
