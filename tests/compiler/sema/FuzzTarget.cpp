// libFuzzer entry point: parse + check arbitrary bytes as a .evo file (in
// the examples folder, so imports resolve). Built only with
// -DEVOC_LIBFUZZER=ON and clang; see docs/language.md's fuzzing note.
#include "sema/Program.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  evoc::SourceManager sources;
  evoc::DiagnosticEngine diags(sources);
  int f = sources.addBuffer(std::string(EVOC_SOURCE_DIR) + "/examples/fuzz.evo",
                            std::string(reinterpret_cast<const char *>(data), size));
  evoc::sema::CheckOptions opts;
  opts.ignoreEnv = true;
  auto program = evoc::sema::checkBuffer(f, opts, sources, diags);
  for (const auto &d : diags.diagnostics())
    (void)diags.render(d);
  if (program && diags.hasErrors())
    __builtin_trap();
  return 0;
}
