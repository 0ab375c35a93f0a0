// The subcommand and `--emit` tables every subcommand registers itself in,
// shared by the evoc tool and the Python module (docs/python.md).
#include "app/Driver.h"

namespace evoc::app {

/// The table of registered T (Subcommand, EmitKind), filled by static
/// initialisers in any order before main.
template <class T> static std::vector<T> &table() {
  static std::vector<T> t;
  return t;
}

bool addSubcommand(Subcommand cmd) {
  table<Subcommand>().push_back(cmd);
  return true;
}

const std::vector<Subcommand> &subcommands() { return table<Subcommand>(); }

int runSubcommand(const std::string &name, const std::vector<std::string> &args) {
  for (const auto &c : subcommands())
    if (c.name == name)
      return c.run(args);
  return -1;
}

static std::function<void()> &runHookSlot() {
  static std::function<void()> hook;
  return hook;
}

void setRunHook(std::function<void()> hook) { runHookSlot() = std::move(hook); }

const std::function<void()> &runHook() { return runHookSlot(); }

bool addEmitKind(EmitKind kind) {
  table<EmitKind>().push_back(kind);
  return true;
}

const std::vector<EmitKind> &emitKinds() { return table<EmitKind>(); }

} // namespace evoc::app
