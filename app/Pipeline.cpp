// The compiler pipeline after the front end: irgen -> verify -> autodiff ->
// passes, as a linear script that can print the IR after each step.
#include "app/Pipeline.h"

#include <iostream>

#include "app/Driver.h"
#include "autodiff/Differentiate.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "irgen/IRGen.h"
#include "opt/Passes.h"
#include "support/Diagnostics.h"
#include "support/Error.h"
#include "support/SourceManager.h"

namespace evoc::app {

const char *version() { return EVOC_VERSION; } // CMake's project version

CompiledFile compileFile(const std::string &file,
                         const std::vector<std::pair<std::string, std::string>> &overrides,
                         const PipelineOptions &opts) {
  CommonOptions o;
  o.file = file;
  o.check.overrides = overrides;
  SourceManager sources;
  DiagnosticEngine diags(sources);
  std::optional<sema::CheckedProgram> prog = loadChecked(o, sources, diags);
  std::optional<ir::Module> m;
  if (prog)
    m = buildModule(*prog, sources, diags, opts);
  diags.flush(std::cerr);
  if (!prog || !m)
    throw Error(file + " does not compile (the errors are above)");
  return {std::move(*prog), std::move(*m)};
}

namespace {

/// Every step and the stage it belongs to (--dump-after of a later stage's
/// step would print nothing, so it is refused).
struct Step {
  std::string name;
  Stage stage;
};

const std::vector<Step> &steps() {
  static const std::vector<Step> all = [] {
    std::vector<Step> v = {
        {"irgen", Stage::IR},           // the checked program lowered to kernels
        {"tape", Stage::Grad},          // autodiff: the temporaries the step keeps per step
        {"step-adjoint", Stage::Grad},  // autodiff: step.adj
        {"products", Stage::Grad},      // autodiff: the weight gradients as window products
        {"loss-adjoints", Stage::Grad}, // autodiff: the adjoints of the loss kernels
    };
    // opt's passes in order of first run (fold, cse, dce, fuse; runPasses
    // runs the first three again after fuse), then fission, the CPU back
    // end's, on its copy of the module.
    for (const std::string &pass : opt::passNames())
      v.push_back({pass, Stage::Opt});
    return v;
  }();
  return all;
}

} // namespace

const std::vector<std::string> &pipelineSteps() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Step &s : steps())
      v.push_back(s.name);
    return v;
  }();
  return names;
}

namespace {

const char *stageName(Stage s) {
  switch (s) {
  case Stage::IR:
    return "ir";
  case Stage::Grad:
    return "grad-ir";
  case Stage::Opt:
    return "opt-ir";
  }
  return "?";
}

void checkDumpAfter(const PipelineOptions &opts) {
  const std::string &d = opts.dumpAfter;
  if (d.empty() || d == "all")
    return;
  // "autodiff": after all of autodiff's steps.
  const Step *step = nullptr;
  for (const Step &s : steps())
    if (s.name == (d == "autodiff" ? "loss-adjoints" : d))
      step = &s;
  if (!step) {
    std::string known;
    for (const Step &s : steps())
      known += s.name + ", ";
    throw Error("--dump-after: no pipeline step '" + d + "' (the steps, in order: " + known +
                "autodiff for all of its steps, or all)");
  }
  if (step->stage > opts.stage)
    throw Error("--dump-after=" + d + " runs after the stage printed; use --emit " +
                stageName(step->stage) + " or a later stage");
}

} // namespace

// The pipeline, top to bottom. Every step is verified (ir::verifyAfter) and
// can be printed with --dump-after=NAME (pipelineSteps(), in this order).
std::optional<ir::Module> buildModule(const sema::CheckedProgram &prog,
                                      const SourceManager &sources, DiagnosticEngine &diags,
                                      const PipelineOptions &opts) {
  checkDumpAfter(opts);
  std::ostream &dump = opts.dumpTo ? *opts.dumpTo : std::cerr;
  auto dumpAfter = [&](const ir::Module &m, const std::string &step) {
    if (opts.dumpAfter == step || opts.dumpAfter == "all") {
      dump << "// ----- IR after " << step << " -----\n";
      ir::print(m, dump);
    }
  };
  auto after = [&](const ir::Module &m, const std::string &step) {
    ir::verifyAfter(m, step);
    dumpAfter(m, step);
  };

  // irgen
  std::optional<ir::Module> m = irgen::lowerProgram(prog, sources, diags);
  if (!m)
    return std::nullopt;
  after(*m, "irgen");
  if (opts.stage == Stage::IR)
    return m;

  // autodiff (docs/architecture.md, "Reverse mode"): what step.adj keeps,
  // the adjoint kernels, and the weight gradients deferred to products.
  if (opts.bodyGradients)
    for (ir::Buffer &b : m->buffers)
      if (b.role == ir::Role::Body && b.elem == ir::Type::F)
        b.differentiable = true;
  using autodiff::Tape;
  if (opts.tape != Tape::Replay) {
    autodiff::planTape(*m, opts.tape == Tape::Products);
    after(*m, "tape");
  }
  const std::vector<int> stepAdjoints = autodiff::differentiateKernels(*m, true);
  after(*m, "step-adjoint");
  if (opts.tape == Tape::Products) {
    for (int adj : stepAdjoints)
      autodiff::deferProducts(*m, adj);
    after(*m, "products");
  }
  autodiff::differentiateKernels(*m, false);
  after(*m, "loss-adjoints");
  if (opts.dumpAfter == "autodiff") // the name of all of autodiff's steps ("all" has them)
    dumpAfter(*m, "autodiff");
  if (opts.stage == Stage::Grad)
    return m;

  // opt: fold, cse, dce, fuse, then fold, cse, dce again
  opt::PassOptions po;
  po.afterPass = dumpAfter; // runPasses verifies after each of its passes, once
  opt::runPasses(*m, po);

  // fission: the CPU back end's own pass, which it runs on its copy of this
  // module (fast mode, O2 and up): shown on a copy here, as it gets it.
  if (opts.dumpAfter == "fission" || opts.dumpAfter == "all") {
    ir::Module cpu = ir::clone(*m);
    opt::runPass(cpu, "fission");
    dumpAfter(cpu, "fission");
  }
  return m;
}

} // namespace evoc::app
