// evoc's entry point: dispatches to the registered subcommands.
#include "driver/Driver.h"
#include "driver/Pipeline.h"

#include <cstdio>
#include <cstring>

namespace evoc::driver {

static std::vector<Subcommand> &table() {
  static std::vector<Subcommand> t;
  return t;
}

bool addSubcommand(Subcommand cmd) {
  table().push_back(cmd);
  return true;
}

const std::vector<Subcommand> &subcommands() { return table(); }

static std::vector<EmitKind> &emitTable() {
  static std::vector<EmitKind> t;
  return t;
}

bool addEmitKind(EmitKind kind) {
  emitTable().push_back(kind);
  return true;
}

const std::vector<EmitKind> &emitKinds() { return emitTable(); }

static void usage(FILE *out) {
  std::fprintf(out, "usage: evoc COMMAND FILE [options] | evoc --version\n\ncommands:\n");
  for (const auto &c : subcommands())
    std::fprintf(out, "  %-10s %s\n", c.name, c.summary);
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

} // namespace evoc::driver

int main(int argc, char **argv) {
  using namespace evoc::driver;
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
      return c.run(args);
  std::fprintf(stderr, "evoc: error: unknown command '%s'\n\n", argv[1]);
  usage(stderr);
  return 2;
}
