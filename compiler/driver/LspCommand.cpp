// `evoc lsp [--stdlib DIR]`: the language server on stdin and stdout
// (lsp/Server.h, docs/editors.md).
#include "driver/Driver.h"
#include "lsp/Server.h"

#include <cstdio>
#include <iostream>

namespace evoc::driver {

static int runLsp(const std::vector<std::string> &args) {
  lsp::ServerOptions opts;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--stdlib" && i + 1 < args.size()) {
      opts.stdlibDirs.push_back(args[++i]);
    } else if (args[i] == "--stdio") {
      // what editors pass to say the transport; stdio is the only one
    } else {
      std::fprintf(stderr, "evoc lsp: error: unknown option '%s' (evoc lsp [--stdlib DIR])\n",
                   args[i].c_str());
      return 2;
    }
  }
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

} // namespace evoc::driver
