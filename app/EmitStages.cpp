// `evoc compile --emit ir|grad-ir|opt-ir|llvm|cuda|ptx`: print each stage of
// the pipeline after the front end.
#include <iostream>

#include "app/Driver.h"
#include "app/Pipeline.h"
#include "codegen/cpu/CpuBackend.h"
#include "codegen/cuda/CudaBackend.h"
#include "ir/Printer.h"
#include "support/Diagnostics.h"
#include "support/Error.h"
#include "support/SourceManager.h"

namespace evoc::app {
namespace {

/// Reads `--dump-after=PASS` / `--dump-after PASS` from the extra arguments.
std::string dumpAfterOption(const CommonOptions &opts) {
  for (size_t i = 0; i < opts.rest.size(); ++i) {
    const std::string &a = opts.rest[i];
    if (a.rfind("--dump-after=", 0) == 0)
      return a.substr(13);
    if (a == "--dump-after" && i + 1 < opts.rest.size())
      return opts.rest[i + 1];
  }
  return "";
}

std::optional<ir::Module> stage(const sema::CheckedProgram &p, const SourceManager &sources,
                                const CommonOptions &opts, Stage s, std::ostream &out) {
  DiagnosticEngine diags(sources);
  PipelineOptions po;
  po.stage = s;
  po.dumpAfter = dumpAfterOption(opts);
  po.dumpTo = &out;
  po.tape = opts.tape;
  auto m = buildModule(p, sources, diags, po);
  diags.flush(std::cerr);
  return m;
}

int emitIR(const sema::CheckedProgram &p, const SourceManager &src, const CommonOptions &o,
           std::ostream &out, Stage s) {
  auto m = stage(p, src, o, s, out);
  if (!m)
    return 1;
  ir::print(*m, out);
  return 0;
}

int emitLLVM(const sema::CheckedProgram &p, const SourceManager &src, const CommonOptions &o,
             std::ostream &out) {
  auto m = stage(p, src, o, Stage::Opt, out);
  if (!m)
    return 1;
  out << codegen::emitLLVM(*m, 3);
  return 0;
}

// The CUDA source is emitted everywhere; PTX needs NVRTC, and without the
// toolkit at build time emitPtx says so (an evoc::Error).
int emitCudaKind(const sema::CheckedProgram &p, const SourceManager &src, const CommonOptions &o,
                 std::ostream &out, bool ptx) {
  auto m = stage(p, src, o, Stage::Opt, out);
  if (!m)
    return 1;
  try {
    out << (ptx ? codegen::cuda::emitPtx(*m) : codegen::cuda::emitCuda(*m));
  } catch (const Error &e) {
    std::cerr << "evoc: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

[[maybe_unused]] bool registered =
    addEmitKind({"ir", [](auto &p, auto &s, auto &o,
                          auto &out) { return emitIR(p, s, o, out, Stage::IR); }}) &&
    addEmitKind({"grad-ir", [](auto &p, auto &s, auto &o,
                               auto &out) { return emitIR(p, s, o, out, Stage::Grad); }}) &&
    addEmitKind({"opt-ir", [](auto &p, auto &s, auto &o,
                              auto &out) { return emitIR(p, s, o, out, Stage::Opt); }}) &&
    addEmitKind({"llvm", emitLLVM}) &&
    addEmitKind({"cuda", [](auto &p, auto &s, auto &o,
                            auto &out) { return emitCudaKind(p, s, o, out, false); }}) &&
    addEmitKind({"ptx", [](auto &p, auto &s, auto &o, auto &out) {
                   return emitCudaKind(p, s, o, out, true);
                 }});

} // namespace
} // namespace evoc::app
