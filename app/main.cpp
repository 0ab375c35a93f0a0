// evoc's entry point: dispatches to the registered subcommands.
#include "app/Driver.h"
#include "app/Pipeline.h"
#include "support/Error.h"

#include <cstdio>
#include <cstring>
#include <string>

namespace evoc::app {

static void commonOptions(FILE *out) {
  std::fprintf(out, "\ncommon options:\n"
                    "  --stdlib DIR       search DIR for imports (before EVOC_STDLIB_PATH)\n"
                    "  --set KEY=VALUE    override a setting, e.g. --set evolve.population=50\n"
                    "  -w                 no warnings\n"
                    "  --Werror           warnings are errors\n"
                    "  --replay-temps     differentiate the old way: step.adj recomputes every\n"
                    "                     temporary instead of reading the activations kept per\n"
                    "                     step (same results to rounding; for benchmarks)\n"
                    "  --no-window-products  keep the activations but accumulate the weight\n"
                    "                     gradients every step, not once per window (the same;\n"
                    "                     for benchmarks)\n");
}

static void usage(FILE *out) {
  std::fprintf(out, "usage: evoc COMMAND FILE [options] | evoc COMMAND --help | evoc --version\n"
                    "\ncommands:\n");
  for (const auto &c : subcommands())
    std::fprintf(out, "  %-10s %s\n", c.name, c.summary);
  commonOptions(out);
}

/// `evoc NAME --help` (or -h anywhere among its arguments): the subcommand's
/// usage on stdout, exit 0, whatever else the line holds.
static bool wantsHelp(const std::vector<std::string> &args) {
  for (const auto &a : args)
    if (a == "--help" || a == "-h")
      return true;
  return false;
}

static int subcommandHelp(const Subcommand &c) {
  // Subcommand::usage is the synopsis, then the options (lines that start
  // with "  -"): the summary goes between them.
  const std::string usage = c.usage ? c.usage : c.name;
  const size_t options = usage.find("\n  -");
  std::printf("usage: evoc %s\n\n%s\n", usage.substr(0, options).c_str(), c.summary);
  if (options != std::string::npos)
    std::printf("\noptions:%s\n", usage.substr(options).c_str());
  if (c.commonOptions)
    commonOptions(stdout);
  return 0;
}

} // namespace evoc::app

int main(int argc, char **argv) {
  using namespace evoc::app;
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    usage(argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::printf("evoc %s\n", version());
    return 0;
  }
  std::vector<std::string> args(argv + 2, argv + argc);
  for (const auto &c : subcommands())
    if (c.name == std::string(argv[1]))
      try {
        return wantsHelp(args) ? subcommandHelp(c) : c.run(args);
      } catch (const evoc::Error &e) {
        // What a command did not report itself: one line, never a crash.
        std::fprintf(stderr, "evoc: error: %s\n", e.what());
        return 1;
      }
  std::fprintf(stderr, "evoc: error: unknown command '%s'\n\n", argv[1]);
  usage(stderr);
  return 2;
}
