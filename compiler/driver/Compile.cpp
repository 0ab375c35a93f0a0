// `evoc compile FILE --emit KIND`: print a stage of the compiler. `ast` is
// built in; later stages register themselves with addEmitKind.
#include "driver/Driver.h"

#include "frontend/AstDump.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include <cstdio>
#include <iostream>

namespace evoc::driver {

static int emitAst(const sema::CheckedProgram &program, const SourceManager &,
                   const CommonOptions &, std::ostream &out) {
  ast::dumpProgram(*program.ast, out);
  return 0;
}

static bool astRegistered = addEmitKind({"ast", emitAst});

static int runCompile(const std::vector<std::string> &args) {
  CommonOptions opts;
  if (!parseCommonOptions(args, opts))
    return 2;
  std::string emit;
  std::vector<std::string> rest;
  for (size_t i = 0; i < opts.rest.size(); ++i) {
    const std::string &a = opts.rest[i];
    if (a.rfind("--emit=", 0) == 0)
      emit = a.substr(7);
    else if (a == "--emit" && i + 1 < opts.rest.size())
      emit = opts.rest[++i];
    else if (a.rfind("--dump-after", 0) == 0)
      ; // read by the IR stages (EmitStages.cpp)
    else
      rest.push_back(a);
  }
  // `--emit KIND` puts KIND after the file as a positional; accept it.
  if (emit.empty() && !opts.rest.empty() && opts.rest.back() == "--emit") {
    std::fprintf(stderr, "evoc: error: --emit needs a kind\n");
    return 2;
  }
  std::string kinds;
  for (const auto &k : emitKinds())
    kinds += std::string(kinds.empty() ? "" : ", ") + k.name;
  if (emit.empty()) {
    std::fprintf(stderr, "evoc: error: compile needs --emit KIND (one of: %s)\n", kinds.c_str());
    return 2;
  }
  const EmitKind *kind = nullptr;
  for (const auto &k : emitKinds())
    if (emit == k.name)
      kind = &k;
  if (!kind) {
    std::fprintf(stderr, "evoc: error: unknown --emit kind '%s' (known: %s)\n", emit.c_str(),
                 kinds.c_str());
    return 2;
  }
  for (const auto &r : rest) {
    std::fprintf(stderr, "evoc: error: unknown option '%s' for compile\n", r.c_str());
    return 2;
  }
  SourceManager sources;
  DiagnosticEngine diags(sources);
  auto program = loadChecked(opts, sources, diags);
  if (!program)
    return 1;
  return kind->emit(*program, sources, opts, std::cout);
}

static bool registered = addSubcommand(
    {"compile", "print a compiler stage: --emit ast|...", runCompile,
     "compile FILE.evo --emit KIND [--dump-after PASS] [options]\n"
     "  --emit KIND        the stage to print: ast, ir, grad-ir, opt-ir, llvm, cuda or ptx\n"
     "  --dump-after PASS  with an IR stage, also print the IR after that pass"});

} // namespace evoc::driver
