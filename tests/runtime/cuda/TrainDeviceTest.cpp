// The GPU training device (runtime/cuda) on the CPU emulation of the CUDA
// back end, against the CPU device: the same learning curves, gradient
// norms, best and final parameters on a ragged population of lattice bodies,
// for each optimiser; chunks that the device's memory forces give the same
// results as one chunk; invalid robots and early stops get the CPU's
// verdicts; per-step losses, Init kernels and the multi-task experiments
// (commands, batches of episodes, continued episodes) train as on the CPU.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <unistd.h>

#include "Emulator.h"
#include "Harness.h"
#include "InitKernel.h"
#include "app/BodyModels.h"
#include "app/Driver.h"
#include "app/Pipeline.h"
#include "codegen/Executable.h"
#include "core/Device.h"
#include "core/Train.h"
#include "cuda/CudaDevice.h"
#include "evolve/bodies/BodyModel.h"
#include "evolve/bodies/Lattice.h"
#include "evolve/engine/EvoRng.h"
#include "sema/Program.h"
#include "support/Diagnostics.h"
#include "support/Error.h"
#include "support/SourceManager.h"

using namespace evoc;
namespace fs = std::filesystem;

namespace {

// A module compiled for the CPU and for the emulated GPU (in its own folder,
// removed with it).
struct Compiled {
  ir::Module module;
  std::unique_ptr<runtime::ModuleInfo> info;
  std::unique_ptr<codegen::Executable> cpu;
  std::unique_ptr<test::EmulatedExecutable> emu;
  fs::path dir;
  ~Compiled() {
    emu.reset();
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

void compileInto(Compiled &c, ir::Module m, const std::string &tag) {
  c.module = std::move(m);
  c.info = std::make_unique<runtime::ModuleInfo>(c.module);
  c.cpu = codegen::compile(c.module, codegen::BackendKind::Cpu);
  c.dir = fs::temp_directory_path() / ("evoc-train-" + tag + "-" + std::to_string(::getpid()));
  fs::create_directories(c.dir);
  c.emu = std::make_unique<test::EmulatedExecutable>(c.module, c.dir.string());
}

std::unique_ptr<Compiled> compileBoth(ir::Module m, const std::string &tag) {
  auto c = std::make_unique<Compiled>();
  compileInto(*c, std::move(m), tag);
  return c;
}

struct Fixture : Compiled {
  std::vector<runtime::Robot> robots;
};

ir::Module compileFile(const fs::path &file, const std::string &precision = "") {
  if (precision.empty())
    return app::compileFile(file.string()).module;
  return app::compileFile(file.string(), {{"world.precision", precision}}).module;
}

// eldir_small's module (friction contact, MLP, displacement), compiled once
// for the CPU and for the emulated GPU; four lattice bodies of different sizes.
Fixture &fixture() {
  static Fixture *f = [] {
    auto *fx = new Fixture; // for the whole run
    compileInto(*fx, compileFile(fs::path(EVOC_SOURCE_DIR) / "examples" / "eldir_small.evo"),
                "device");
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
    // The loss's reported terms, pass by pass (a loss of named lets).
    REQUIRE(cpu[r].terms.size() == gpu[r].terms.size());
    for (size_t i = 0; i < cpu[r].terms.size(); ++i) {
      REQUIRE(cpu[r].terms[i].size() == gpu[r].terms[i].size());
      for (size_t k = 0; k < cpu[r].terms[i].size(); ++k)
        CHECK(std::fabs(cpu[r].terms[i][k] - gpu[r].terms[i][k]) <=
              tol * std::max(1.0, std::fabs(cpu[r].terms[i][k])));
    }
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
  auto gpu = cuda::cudaDevice(*f.info, *f.emu);
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
  auto gpu = cuda::cudaDevice(*f.info, *f.emu);
  runtime::TrainOptions o = options();
  auto whole = runtime::train(*f.info, *gpu, f.robots, o);
  runtime::Population pop(*f.info, f.robots);
  const int64_t all = cuda::cudaTrainBytes(*f.info, pop, 0, 4, o);
  const int64_t two = cuda::cudaTrainBytes(*f.info, pop, 0, 2, o);
  const int64_t three = cuda::cudaTrainBytes(*f.info, pop, 0, 3, o);
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
  auto gpu = cuda::cudaDevice(*f.info, *f.emu);
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

TEST_CASE("the GPU training device (emulated) trains among a scene's boxes as the CPU device does",
          "[cuda][train][scene]") {
  // The scene reference's world (tests/data/reference_scene): the bodies
  // start on a high box, tip off its edge and meet its side, a step's top
  // and the ground, with either contact model.
  Fixture &f = fixture(); // its bodies
  for (const char *physics : {"mass_spring_friction", "mass_spring_noslip"}) {
    INFO(physics);
    app::CompiledFile file =
        app::compileFile(std::string(EVOC_SOURCE_DIR) + "/tests/data/reference_scene/scene2d.evo",
                         {{"world.physics", physics}});
    REQUIRE(!file.program.world.ground.scene.empty());
    runtime::TrainOptions o = options();
    o.steps = 200;
    o.iterations = 2;
    o.terrain = file.program.world.ground.shape();
    auto both = compileBoth(std::move(file.module), std::string("scene-") + physics);
    auto gpu = cuda::cudaDevice(*both->info, *both->emu);
    auto cpu = runtime::train(*both->info, *both->cpu, f.robots, o);
    auto dev = runtime::train(*both->info, *gpu, f.robots, o);
    for (const auto &r : cpu)
      REQUIRE(r.valid);
    checkSame(cpu, dev, 1e-9);
  }
}

TEST_CASE("the GPU training device (emulated) trains with movable objects as the interpreter does",
          "[cuda][train][objects]") {
  // A box dropped onto the lattice bodies and one lying on the ground beside
  // them (docs/language.md, Objects): the pair impulses' scatter-adds into
  // both points and objects, and the objects' own contact. The emulated GPU
  // replays every scatter-add in the interpreter's order: its first losses
  // equal the interpreter's to the bit, and training agrees to 1e-9. The CPU
  // back end rounds differently (fused multiply-adds), and a falling box's
  // contact amplifies that (2e-10 in robot 0's first loss after 180 steps),
  // so the CPU is compared on a rollout that ends before the box lands.
  Fixture &f = fixture(); // its bodies
  app::CompiledFile file = app::compileFile(
      std::string(EVOC_SOURCE_DIR) + "/tests/data/terrain/objects.evo",
      {{"world.objects", "[box(0.05, 0.45, 0.15, 0.55, mass = 1), box(-0.2, 0.1, -0.1, 0.2)]"}});
  REQUIRE(file.program.world.ground.objects.size() == 2);
  runtime::TrainOptions o = options();
  o.steps = 200;
  o.iterations = 2;
  o.terrain = file.program.world.ground.shape();
  auto interp = codegen::compile(file.module, codegen::BackendKind::Interp);
  auto both = compileBoth(std::move(file.module), "objects");
  auto gpu = cuda::cudaDevice(*both->info, *both->emu);
  auto ref = runtime::train(*both->info, *interp, f.robots, o);
  auto dev = runtime::train(*both->info, *gpu, f.robots, o);
  for (const auto &r : ref)
    REQUIRE(r.valid);
  checkSame(ref, dev, 1e-9);
  o.steps = 60; // before the box lands: the CPU back end too
  auto cpu = runtime::train(*both->info, *both->cpu, f.robots, o);
  checkSame(cpu, runtime::train(*both->info, *gpu, f.robots, o), 1e-9);
}

TEST_CASE("the GPU training device (emulated) learns in f32 as the CPU device does",
          "[cuda][train]") {
  Fixture &f = fixture(); // its bodies
  ir::Module m = compileFile(fs::path(EVOC_SOURCE_DIR) / "examples" / "eldir_small.evo", "f32");
  REQUIRE(m.precision == ir::Precision::F32);
  auto both = compileBoth(std::move(m), "f32");
  auto gpu = cuda::cudaDevice(*both->info, *both->emu);
  runtime::TrainOptions o = options();
  o.optimizer.kind = runtime::OptimizerKind::Adam;
  o.optimizer.lr = 0.01;
  auto c = runtime::train(*both->info, *both->cpu, f.robots, o);
  auto g = runtime::train(*both->info, *gpu, f.robots, o);
  checkSame(c, g, 1e-4); // float sums in another order
}

TEST_CASE("the GPU training device (emulated) trains per-step losses as the CPU device does",
          "[cuda][train]") {
  // Linear windows, a window over x[t - 4], running max / min and a window
  // mean inside nonlinear terms, a state at a fixed time; also in a batch
  // of continued episodes (a well-damped world: the CPU back end and the
  // interpreter agree to rounding on it).
  Fixture &f = fixture(); // its bodies
  auto c = compileBoth(
      compileFile(fs::path(EVOC_SOURCE_DIR) / "tests" / "data" / "cuda" / "window_losses.evo"),
      "windows");
  REQUIRE(c->info->lossStep.size() == 5);
  auto gpu = cuda::cudaDevice(*c->info, *c->emu);
  runtime::TrainOptions o = options();
  o.steps = 24; // the world's: the windows are written for it
  o.optimizer.kind = runtime::OptimizerKind::Adam;
  o.optimizer.lr = 0.01;
  std::vector<uint64_t> ids = {21, 22, 23, 24};
  SECTION("one episode per iteration") {}
  SECTION("a batch of continued episodes") {
    o.batch = 2; // from iteration 1 on, episode (it + 1) % 2 continues
    o.iterations = 4;
    o.continuation.after = 1;
  }
  INFO("batch " << o.batch << ", continued after " << o.continuation.after);
  auto cpu = runtime::train(*c->info, *c->cpu, f.robots, o, &ids);
  auto dev = runtime::train(*c->info, *gpu, f.robots, o, &ids);
  for (const auto &r : cpu)
    REQUIRE(r.valid);
  CHECK(cpu[0].losses.front() != cpu[0].losses.back());
  // Its named terms are reported on both devices (checkSame compares them).
  REQUIRE(cpu[0].terms.size() == cpu[0].losses.size());
  CHECK(cpu[0].terms[0].size() == c->module.lossTerms.size());
  CHECK(c->module.lossTerms.size() >= 4);
  checkSame(cpu, dev, 1e-9);
}

TEST_CASE("the GPU training device (emulated) runs Init kernels as the CPU device does",
          "[cuda][train]") {
  Fixture &f = fixture();
  ir::Module m = compileFile(fs::path(EVOC_SOURCE_DIR) / "examples" / "eldir_small.evo");
  test::appendInitKernel(m, "mlp.b2"); // b2[s] = rest[s] + the x-coordinate of point 1
  auto c = compileBoth(std::move(m), "init");
  REQUIRE(c->info->init.size() == 1);
  auto gpu = cuda::cudaDevice(*c->info, *c->emu);
  runtime::TrainOptions o = options();
  std::vector<uint64_t> ids = {41, 42, 43, 44};
  o.iterations = 0; // the initial parameters: what the Init kernel wrote
  auto first = runtime::train(*c->info, *gpu, f.robots, o, &ids);
  for (size_t r = 0; r < f.robots.size(); ++r) {
    const runtime::Robot &R = f.robots[r];
    const auto &b2 = first[r].params.at("b2").data;
    REQUIRE(b2.size() == R.springs.size());
    for (size_t s = 0; s < b2.size(); ++s)
      CHECK(b2[s] == R.springs[s].rest + R.points[2]);
  }
  o.iterations = 3;
  auto cpu = runtime::train(*c->info, *c->cpu, f.robots, o, &ids);
  auto dev = runtime::train(*c->info, *gpu, f.robots, o, &ids);
  checkSame(cpu, dev, 1e-9);
}

namespace {

// A multi-task experiment (commands, per-step losses over earlier states and
// commands, a batch of episodes), compiled for both devices, and the
// training options its file gives.
struct Multitask {
  sema::CheckedProgram program;
  std::unique_ptr<Compiled> c;
  runtime::TrainOptions o;
};

std::unique_ptr<Multitask> multitask(const std::string &file, const std::string &tag) {
  auto mt = std::make_unique<Multitask>();
  app::CompiledFile cf = app::compileFile((fs::path(EVOC_SOURCE_DIR) / file).string());
  mt->program = std::move(cf.program);
  mt->c = compileBoth(std::move(cf.module), tag);
  const sema::CheckedProgram &p = mt->program;
  const sema::Learn &learn = p.hasTrain ? p.train.learn : p.evolve.learn;
  runtime::TrainOptions &o = mt->o;
  o.steps = p.world.steps;
  o.groundHeight = p.world.ground.height;
  o.upAxis = p.world.dim - 1;
  o.seed = 9;
  o.threads = 2;
  o.batch = learn.batch;
  o.commands = &mt->program.commands;
  o.optimizer.kind = runtime::OptimizerKind::Adam;
  o.optimizer.lr = 0.01;
  o.optimizer.beta2 = 0.9;
  return mt;
}

// The multi-task examples as written (T = 1000: their windows need it),
// small: one learning iteration, batches of two episodes, two voxel bodies
// of different sizes for the evolving one; the CPU device against the GPU
// device on the emulation or, with `onGpu`, on the GPU.
void trainExamplesOnBoth(bool onGpu) {
  struct Case {
    const char *file, *tag;
    size_t bodies;
    int64_t batch;
  };
  for (const Case &k : {Case{"examples/multitask_alpaca.evo", "alpaca", 1, 2},
                        Case{"examples/multitask_evolve.evo", "voxels", 2, 2},
                        Case{"examples/multitask_quad3d.evo", "quad3d", 1, 1}}) {
    INFO(k.file);
    auto mt = multitask(k.file, k.tag);
    REQUIRE(mt->c->info->readsCommands);
    REQUIRE(!mt->c->info->lossStep.empty());
    auto model = app::bodyModel(mt->program);
    evolve::EvoRng rng(5);
    std::vector<runtime::Robot> robots;
    while (robots.size() < k.bodies) {
      evolve::Phenotype ph = model->express(*model->sample(rng));
      if (ph.valid && (robots.empty() || ph.robot.numPoints() != robots.back().numPoints()))
        robots.push_back(ph.robot);
    }
    std::unique_ptr<codegen::cuda::CudaExecutable> real;
    if (onGpu)
      real = codegen::cuda::compileCuda(mt->c->module);
    auto gpu = cuda::cudaDevice(*mt->c->info, onGpu ? *real : *mt->c->emu);
    runtime::TrainOptions o = mt->o;
    o.iterations = 1;
    o.batch = k.batch;
    std::vector<uint64_t> ids(robots.size());
    for (size_t i = 0; i < ids.size(); ++i)
      ids[i] = 51 + i;
    auto cpu = runtime::train(*mt->c->info, *mt->c->cpu, robots, o, &ids);
    auto dev = runtime::train(*mt->c->info, *gpu, robots, o, &ids);
    for (const auto &r : cpu)
      REQUIRE(r.valid);
    CHECK(cpu[0].losses.front() != cpu[0].losses.back());
    checkSame(cpu, dev, 1e-9);
  }
}

} // namespace

// Hidden: the emulation (a thread per CUDA thread) takes over ten minutes per
// example on two cores; run it with evoc_cuda_examples_tests
// "[multitask-examples]".
TEST_CASE("the GPU training device (emulated) trains the multi-task examples as the CPU device "
          "does",
          "[.][cuda][multitask-examples]") {
  trainExamplesOnBoth(false);
}

TEST_CASE("on a GPU: the GPU training device trains the multi-task examples as the CPU device does",
          "[cuda][train][gpu]") {
  if (!test::gpuOrSkip())
    return;
  trainExamplesOnBoth(true);
}

TEST_CASE("the GPU training device (emulated) trains multi-task batches as the CPU device does",
          "[cuda][train][multitask]") {
  // tests/data/multitask/gradcheck.evo: commands drawn per 30-step period and
  // read by the controller and by the loss (at t - 5 and at fixed times),
  // windows over x[t - 5], a running max and min; three lattice bodies of
  // different sizes in one chunk.
  Fixture &f = fixture();
  static Multitask *mt = multitask("tests/data/multitask/gradcheck.evo", "multitask").release();
  REQUIRE(mt->c->info->readsCommands);
  REQUIRE(mt->o.batch == 3);
  auto gpu = cuda::cudaDevice(*mt->c->info, *mt->c->emu);
  std::vector<runtime::Robot> robots(f.robots.begin(), f.robots.begin() + 3);
  std::vector<uint64_t> ids = {31, 32, 33};
  runtime::TrainOptions o = mt->o;
  o.iterations = 2;
  SECTION("one episode per iteration") { o.batch = 1; }
  SECTION("a batch of three episodes") {}
  SECTION("continued episodes") {
    o.iterations = 3; // from iteration 1 on, all but every 2nd episode continue
    o.continuation.after = 1;
    o.continuation.resetEvery = 2;
    o.continuation.resetEveryMax = 2;
    // The continued episodes of the other two bodies cross contacts where
    // rounding decides (their gradients reach 1e4, and the interpreter and
    // the CPU back end part by 1e-4 there too): the first body alone.
    robots.resize(1);
    ids.resize(1);
  }
  INFO("batch " << o.batch << ", continued after " << o.continuation.after);
  auto cpu = runtime::train(*mt->c->info, *mt->c->cpu, robots, o, &ids);
  auto dev = runtime::train(*mt->c->info, *gpu, robots, o, &ids);
  for (const auto &r : cpu)
    REQUIRE(r.valid);
  CHECK(cpu[0].losses.front() != cpu[0].losses.back());
  // Its terms (velocity, height, crawl), the episodes' mean, are reported on
  // both devices (checkSame compares them).
  REQUIRE(cpu[0].terms.size() == cpu[0].losses.size());
  CHECK(cpu[0].terms[0].size() == mt->c->module.lossTerms.size());
  CHECK(mt->c->module.lossTerms.size() == 3);
  checkSame(cpu, dev, 1e-9);
}

// The acceptance check on a GPU: the paper's module (examples/eldir.evo,
// no-slip contact, f64) on 20 random 13 x 22 lattice bodies at T = 1000; one
// forward + backward (loss to 1e-9, gradients to 1e-7 of their largest entry),
// then three learning iterations (curves to 1e-9, relative). Skipped, with a
// note, without a GPU.
TEST_CASE("on a GPU: the GPU training device agrees with the CPU on 20 paper-sized bodies",
          "[cuda][train][gpu]") {
  if (!test::gpuOrSkip())
    return;
  ir::Module m = compileFile(fs::path(EVOC_SOURCE_DIR) / "examples" / "eldir.evo");
  runtime::ModuleInfo info(m);
  auto cpu = codegen::compile(m, codegen::BackendKind::Cpu);
  auto gpuExe = codegen::cuda::compileCuda(m);
  auto gpu = cuda::cudaDevice(info, *gpuExe);
  std::vector<runtime::Robot> robots = evolve::randomLatticeRobots(13, 22, 20, 2024);
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
