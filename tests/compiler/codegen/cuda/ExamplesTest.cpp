// Every example .evo file, through the whole compiler (front end, irgen with
// the stdlib physics, controllers and losses, autodiff, passes): its CUDA
// compiles with NVRTC to CUBIN for sm_80 and sm_90, and keeps #line
// directives pointing at the .evo sources. Every stdlib physics (2D and 3D)
// compiles too, whether or not an example uses it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>

#include "app/Driver.h"
#include "app/Pipeline.h"
#include "codegen/cuda/CudaBackend.h"
#include "codegen/cuda/KernelPlan.h"
#include "cuda/CudaRollout.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

using namespace evoc;
namespace fs = std::filesystem;

namespace {

ir::Module compileExample(const fs::path &file) { return app::compileFile(file.string()).module; }

/// `m`'s CUDA compiles to CUBIN (an ELF) for sm_80 and sm_90.
void checkCubin(const ir::Module &m) {
  codegen::CompileOptions opts;
  opts.useCache = false;
  for (const char *arch : {"sm_80", "sm_90"}) {
    INFO(arch);
    std::string bin = codegen::cuda::emitCubin(m, arch, opts);
    CHECK(bin.compare(0, 4,
                      "\x7f"
                      "ELF") == 0);
  }
}

} // namespace

TEST_CASE("every example's CUDA compiles to CUBIN for sm_80 and sm_90", "[cuda][examples]") {
  std::vector<fs::path> files;
  for (const auto &e : fs::directory_iterator(fs::path(EVOC_SOURCE_DIR) / "examples"))
    if (e.path().extension() == ".evo")
      files.push_back(e.path());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= 2);
  codegen::CompileOptions opts;
  opts.useCache = false;
  for (const fs::path &f : files) {
    INFO(f.filename().string());
    ir::Module m = compileExample(f);
    REQUIRE(m.findKernel("step") >= 0);
    REQUIRE(m.findKernel("step.adj") >= 0);
    std::string src = codegen::cuda::emitCuda(m);
    // #line back to the .evo sources: the physics of the stdlib and the file.
    CHECK(std::regex_search(src,
                            std::regex("#line [0-9]+ \"[^\"]*stdlib/physics/[a-z_0-9]+\\.evo\"")));
    const bool stdlibController = std::any_of(m.files.begin(), m.files.end(), [](auto &f) {
      return f.find("stdlib/controllers/") != std::string::npos;
    });
    if (stdlibController) // else the file's own controller, or none (examples/grid_contact.evo)
      CHECK(std::regex_search(
          src, std::regex("#line [0-9]+ \"[^\"]*stdlib/controllers/[a-z_0-9]+\\.evo\"")));
    CHECK(src.find("evoc_rollout_backward") != std::string::npos);
    for (const char *arch : {"sm_80", "sm_90"}) {
      INFO(arch);
      std::string bin = codegen::cuda::emitCubin(m, arch, opts);
      CHECK(bin.size() > 1000);
      CHECK(bin.compare(0, 4,
                        "\x7f"
                        "ELF") == 0);
    }
    // The GPU training device's layout (runtime/cuda) takes its tape fields
    // from the runtime's module contract; the fused kernels bind theirs from
    // the back end's analysis: they agree (CudaRollout asserts it), and the
    // training kernels are there for the device to launch.
    CHECK(src.find("evoc_train_update") != std::string::npos);
    const bool perStep = std::any_of(m.kernels.begin(), m.kernels.end(), [](const ir::Kernel &k) {
      return k.kind == ir::KernelKind::LossStep;
    });
    CHECK((src.find("evoc_rollout_losses") != std::string::npos) == perStep);
    cuda::CommandLayout commands; // as wide as the command buffers read
    for (const ir::Buffer &b : m.buffers)
      if (b.role == ir::Role::Command)
        commands = {std::max(commands.columns, b.column + b.comps), 2, 5};
    std::vector<int64_t> sizes(2 * m.sets.size(), 5); // two robots
    CHECK(cuda::CudaRollout::deviceBytesNeeded(m, 2, sizes.data(), 10, commands) > 0);
    // The block schedule: no loop of the step or its adjoint falls back to serial.
    for (const char *k : {"step", "step.adj"}) {
      auto plan = codegen::cuda::planKernel(m, m.kernels[m.findKernel(k)]);
      int serial = 0;
      for (const auto &[loop, lp] : plan.loops)
        serial += lp.mode == codegen::cuda::LoopPlan::Mode::Serial;
      INFO(k << ": " << serial << " serial top-level loops");
      CHECK(serial == 0);
    }
  }
}

TEST_CASE("every stdlib physics compiles to CUBIN, with the MLP controller", "[cuda][stdlib]") {
  struct Physics {
    const char *file, *name;
    int dim;
    bool terrain; ///< on a random terrain (a profile in 2D, a height field in 3D)
    bool scene;   ///< among boxes (world.scene)
  };
  const Physics all[] = {{"mass_spring", "mass_spring_noslip", 2, false, false},
                         {"mass_spring", "mass_spring_friction", 2, false, false},
                         {"mass_spring_fang", "mass_spring_fang", 2, false, false},
                         {"mass_spring3", "mass_spring3_noslip", 3, false, false},
                         {"mass_spring3", "mass_spring3_friction", 3, false, false},
                         {"mass_spring_fang3", "mass_spring_fang3", 3, false, false},
                         {"mass_spring", "mass_spring_noslip", 2, true, false},
                         {"mass_spring", "mass_spring_friction", 2, true, false},
                         {"mass_spring3", "mass_spring3_noslip", 3, true, false},
                         {"mass_spring3", "mass_spring3_friction", 3, true, false},
                         {"mass_spring", "mass_spring_noslip", 2, true, true},
                         {"mass_spring", "mass_spring_friction", 2, false, true},
                         {"mass_spring3", "mass_spring3_noslip", 3, false, true},
                         {"mass_spring3", "mass_spring3_friction", 3, true, true}};
  fs::path dir = fs::temp_directory_path() / "evoc-cuda-stdlib-physics";
  fs::create_directories(dir);
  codegen::CompileOptions opts;
  opts.useCache = false;
  for (const Physics &p : all) {
    INFO(p.name << (p.terrain ? " on a terrain" : "") << (p.scene ? " among boxes" : ""));
    fs::path file = dir / (std::string(p.name) + (p.terrain ? "_terrain" : "") +
                           (p.scene ? "_scene" : "") + ".evo");
    const std::string scene = !p.scene ? ""
                              : p.dim == 2
                                  ? "  scene = [box(0.3, 0, 0.4, 0.2), box(0, 0.5, 1, 0.6)];\n"
                                  : "  scene = [box(0.3, 0, 0, 0.4, 1, 0.2)];\n";
    std::ofstream(file) << "import \"physics/" << p.file
                        << ".evo\";\nimport \"controllers/mlp.evo\";\n"
                           "import \"losses/displacement.evo\";\n"
                           "world { dim = "
                        << p.dim << "; steps = 100; dashpot = 0.1; physics = " << p.name
                        << ";\n  ground = "
                        << (p.terrain ? "terrain_random(seed = 3, segments = 4, friction = 0.4)"
                                      : "flat(height = 0.1, friction = 0.4)")
                        << ";\n"
                        << scene << "}\n";
    ir::Module m = compileExample(file);
    std::string src = codegen::cuda::emitCuda(m);
    CHECK(src.find("stdlib/physics/" + std::string(p.file) + ".evo") != std::string::npos);
    // The models added with 3D, terrain and scenes for both architectures;
    // the 2D flat ones (unchanged since the examples test covers them) for one.
    const bool added = p.dim == 3 || p.terrain || p.scene;
    for (const char *arch : {"sm_90", "sm_80"}) {
      if (!added && std::string(arch) == "sm_80")
        continue;
      INFO(arch);
      std::string bin = codegen::cuda::emitCubin(m, arch, opts);
      CHECK(bin.compare(0, 4,
                        "\x7f"
                        "ELF") == 0);
    }
  }
  fs::remove_all(dir);
}

TEST_CASE("movable objects compile to CUBIN, in 2D and 3D, and a controller that sees them",
          "[cuda][objects]") {
  for (const char *name : {"tests/data/terrain/objects.evo", "tests/data/terrain/objects3d.evo",
                           "examples/tasks/pusher.evo"}) {
    INFO(name);
    ir::Module m = compileExample(fs::path(EVOC_SOURCE_DIR) / name);
    CHECK(m.findBuffer("touch.o") >= 0);
    checkCubin(m);
  }
}

TEST_CASE("voxel bodies, scenes, fns on fields and part_mean compile to CUBIN", "[cuda][voxel]") {
  const fs::path f = fs::path(EVOC_SOURCE_DIR) / "tests/data/voxel/part_loss.evo";
  ir::Module m = compileExample(f);
  bool mask = false;
  for (const ir::Buffer &b : m.buffers)
    mask = mask || b.name == "point.part.rigid";
  CHECK(mask);
  checkCubin(m);
}
