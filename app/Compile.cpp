// `evoc compile FILE --emit KIND`: print a stage of the compiler. `ast` is
// built in; later stages register themselves with addEmitKind.
#include "app/Driver.h"
#include "support/OptionTable.h"

#include "frontend/AstDump.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include <cstdio>
#include <iostream>

namespace evoc::app {

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
  std::string emit, dumpAfter; // --dump-after is read by the IR stages (EmitStages.cpp)
  OptionTable t("evoc compile");
  t.text("--emit", emit).text("--dump-after", dumpAfter);
  if (!t.parse(opts.rest))
    return 2;
  std::string kinds;
  for (const auto &k : emitKinds())
    kinds += std::string(kinds.empty() ? "" : ", ") + k.name;
  if (emit.empty()) {
    t.error("compile needs --emit KIND (one of: " + kinds + ")");
    return 2;
  }
  const EmitKind *kind = nullptr;
  for (const auto &k : emitKinds())
    if (emit == k.name)
      kind = &k;
  if (!kind) {
    t.error("unknown --emit kind '" + emit + "' (known: " + kinds + ")");
    return 2;
  }
  SourceManager sources;
  auto program = loadChecked(opts, sources);
  if (!program)
    return 1;
  return kind->emit(*program, sources, opts, std::cout);
}

static bool registered = addSubcommand(
    {"compile", "print a compiler stage: --emit ast|...", runCompile,
     "compile FILE.evo --emit KIND [--dump-after PASS] [options]\n"
     "  --emit KIND        the stage to print: ast, ir, grad-ir, opt-ir, llvm, cuda or ptx\n"
     "  --dump-after PASS  with an IR stage, also print the IR after that pass"});

} // namespace evoc::app
