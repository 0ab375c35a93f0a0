// `evoc lsp [--stdlib DIR]`: the language server on stdin and stdout
// (lsp/Server.h, docs/editors.md).
#include "app/Driver.h"
#include "lsp/Server.h"
#include "support/OptionTable.h"

#include <cstdio>
#include <iostream>

namespace evoc::app {

static int runLsp(const std::vector<std::string> &args) {
  lsp::ServerOptions opts;
  bool stdio = false; // what editors pass to say the transport; stdio is the only one
  OptionTable t("evoc lsp");
  t.custom("--stdlib", [&opts](const std::string &dir) {
     opts.stdlibDirs.push_back(dir);
     return std::string();
   }).flag("--stdio", stdio);
  if (!t.parse(args))
    return 2;
  std::ios::sync_with_stdio(false);
  lsp::Server server(opts);
  return server.serve(std::cin, std::cout);
}

static bool registered =
    addSubcommand({"lsp", "the language server for editors (LSP over stdin/stdout)", runLsp,
                   "lsp [--stdlib DIR]\n"
                   "  Speaks the Language Server Protocol on stdin and stdout: diagnostics,\n"
                   "  hover, go to definition, references, rename, completion and the outline\n"
                   "  of .evo files (docs/editors.md has the editor set-ups).",
                   false});

} // namespace evoc::app
