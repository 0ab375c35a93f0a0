// A compiled experiment, as `evoc sim` and `evoc run` use it: the checked
// program, its optimised IR module with adjoints, the back end's executable
// and the runtime settings the .evo file implies.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/Driver.h"
#include "codegen/Executable.h"
#include "core/Train.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

namespace evoc::app {

class Session {
public:
  /// Checks and compiles `opts.file` for `backend` ("cpu", "interp", "cuda").
  /// Diagnostics go to stderr; ok() is false after errors. Throws
  /// evoc::Error when the back end is unavailable. `requireExperiment`:
  /// the file must have world, physics, body and evolve (`evoc run`).
  Session(const CommonOptions &opts, const std::string &backend, bool requireExperiment = false);

  bool ok() const { return exe_ != nullptr; }
  const sema::CheckedProgram &program() const { return *program_; }
  const ir::Module &module() const { return *module_; }
  const codegen::Executable &executable() const { return *exe_; }
  /// The module compiled to run `lanes` episodes per kernel call
  /// (codegen::CompileOptions::lanes), for training batches on the CPU; null
  /// on other back ends and where a kernel cannot run in lanes (the batch
  /// then runs one episode per call, with the same results).
  std::unique_ptr<codegen::Executable> lanesExecutable(int lanes) const;
  /// The device `evoc run` and `evoc sim` train on: the GPU for --backend
  /// cuda (runtime/cuda), else the CPU's thread pool (`threads` <= 0: every
  /// core). `info` must be of module() and outlive the device.
  std::shared_ptr<runtime::TrainDevice> trainDevice(const runtime::ModuleInfo &info,
                                                    int threads) const;
  /// Steps, optimiser, seed, ground height and checkpointing from the file.
  runtime::TrainOptions trainOptions() const;
  /// Reports an error found after checking (a setting the run cannot honour)
  /// at `at` of the checked source, rendered as the checker's are, to stderr.
  void error(SourceRange at, std::string message);
  /// What checking and lowering reported (also printed to stderr), and the
  /// sources their ranges point into (Python's evoc.CompileError).
  const DiagnosticEngine &diagnostics() const { return diags_; }
  const SourceManager &sources() const { return sources_; }
  /// Seconds the back end took to compile.
  double compileSeconds() const { return compileSeconds_; }

private:
  SourceManager sources_;
  DiagnosticEngine diags_{sources_};
  std::optional<sema::CheckedProgram> program_;
  std::optional<ir::Module> module_;
  std::unique_ptr<codegen::Executable> exe_;
  codegen::BackendKind kind_ = codegen::BackendKind::Cpu;
  double compileSeconds_ = 0;
};

/// What `evoc sim` runs once it has its robots and weights: one forward and
/// backward rollout of each robot (with so.iterations > 0, that many learning
/// iterations) on the session's back end, from `params` or, without them,
/// weights drawn from so.seed. Throws evoc::Error before allocating when the
/// rollouts' kept states would exceed 32 GiB. The Python module's simulate
/// (docs/python.md).
runtime::SimResult simulateRobots(const Session &s, const std::vector<runtime::Robot> &robots,
                                  const std::optional<std::vector<runtime::ParamSet>> &params,
                                  const runtime::SimOptions &so);

} // namespace evoc::app
