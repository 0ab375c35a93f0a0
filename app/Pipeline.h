// The compiler pipeline after the front end, as one linear script: irgen,
// verify, autodiff, optimisation passes, and a back end. Every stage can be
// printed (`evoc compile --emit ...`), and `--dump-after=PASS` prints the IR
// after a pass.
#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "autodiff/Differentiate.h"
#include "codegen/Executable.h"
#include "ir/IR.h"
#include "sema/Program.h"

namespace evoc {
class DiagnosticEngine;
class SourceManager;
} // namespace evoc

namespace evoc::app {

/// How far to take a module.
enum class Stage {
  IR,   ///< straight out of irgen
  Grad, ///< with the adjoint kernels
  Opt,  ///< with adjoints, after the optimisation passes (what back ends get)
};

struct PipelineOptions {
  Stage stage = Stage::Opt;
  std::string dumpAfter;          ///< a pass name, or "all"; "" for none
  std::ostream *dumpTo = nullptr; ///< where --dump-after prints (stderr if null)
  /// What step.adj keeps from the step (autodiff::Tape): by default the
  /// expensive temporaries and the weight gradients' window products; every
  /// back end's rollout honours it.
  autodiff::Tape tape = autodiff::Tape::Products;
  /// Differentiates the float Body buffers too (the springs' rest lengths,
  /// stiffness and actuation, the objects' sizes and masses), so that the
  /// adjoint kernels accumulate d loss / d body (Rollout::bodyAdjoints; the
  /// Python module's body_grads, docs/python.md). Off by default: the
  /// evolution never needs them, and they cost adjoint work every step.
  bool bodyGradients = false;
};

/// The names of the pipeline's steps in the order buildModule runs them:
/// what `--dump-after=NAME` takes (also "autodiff": after all of its steps,
/// and "all").
const std::vector<std::string> &pipelineSteps();

/// Lowers a checked program to IR and runs the stages up to `opts.stage`.
/// Throws evoc::Error for a --dump-after that names no step, or a step of a
/// later stage than `opts.stage`.
/// Returns nullopt after reporting an error to `diags`.
std::optional<ir::Module> buildModule(const sema::CheckedProgram &prog,
                                      const SourceManager &sources, DiagnosticEngine &diags,
                                      const PipelineOptions &opts = {});

/// A checked program and its module (Stage::Opt), for tools and tests that
/// compile a .evo file without the command line.
struct CompiledFile {
  sema::CheckedProgram program;
  ir::Module module;
};

/// loadChecked + buildModule of `file` with `--set` overrides (key, value);
/// diagnostics go to stderr. Throws evoc::Error naming the file when it does
/// not check or lower.
CompiledFile compileFile(const std::string &file,
                         const std::vector<std::pair<std::string, std::string>> &overrides = {},
                         const PipelineOptions &opts = {});

/// `evoc`'s version, part of every compiled-code cache key.
const char *version();

} // namespace evoc::app
