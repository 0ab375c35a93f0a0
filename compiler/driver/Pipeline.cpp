// The compiler pipeline after the front end: irgen -> verify -> autodiff ->
// passes, as a linear script that can print the IR after each step.
#include "driver/Pipeline.h"

#include <iostream>

#include "autodiff/Differentiate.h"
#include "driver/Driver.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "irgen/IRGen.h"
#include "opt/Passes.h"
#include "support/Diagnostics.h"
#include "support/Error.h"
#include "support/SourceManager.h"

namespace evoc::driver {

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

std::optional<ir::Module> buildModule(const sema::CheckedProgram &prog,
                                      const SourceManager &sources, DiagnosticEngine &diags,
                                      const PipelineOptions &opts) {
  std::ostream &dump = opts.dumpTo ? *opts.dumpTo : std::cerr;
  auto dumpAfter = [&](const ir::Module &m, const std::string &pass) {
    if (opts.dumpAfter == pass || opts.dumpAfter == "all") {
      dump << "// ----- IR after " << pass << " -----\n";
      ir::print(m, dump);
    }
  };
  auto after = [&](const ir::Module &m, const std::string &pass) {
    ir::verifyAfter(m, pass);
    dumpAfter(m, pass);
  };
  std::optional<ir::Module> m = irgen::lowerProgram(prog, sources, diags);
  if (!m)
    return std::nullopt;
  after(*m, "irgen");
  if (opts.stage == Stage::IR)
    return m;
  if (opts.bodyGradients)
    for (ir::Buffer &b : m->buffers)
      if (b.role == ir::Role::Body && b.elem == ir::Type::F)
        b.differentiable = true;
  autodiff::differentiate(*m, opts.tape);
  after(*m, "autodiff");
  if (opts.stage == Stage::Grad)
    return m;
  opt::PassOptions po;
  po.afterPass = dumpAfter; // runPasses verifies after each of its passes, once
  opt::runPasses(*m, po);
  if (opts.dumpAfter == "fission" || opts.dumpAfter == "all") {
    // The CPU back end's own pass, which it runs on its copy of this module
    // (fast mode, O2 and up): shown on a copy here, as the back end gets it.
    ir::Module cpu = ir::clone(*m);
    opt::runPass(cpu, "fission");
    dumpAfter(cpu, "fission");
  }
  return m;
}

} // namespace evoc::driver
