// The subcommand and `--emit` tables every subcommand registers itself in,
// shared by the evoc tool and the Python module (docs/python.md).
#include "driver/Driver.h"

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

static std::vector<EmitKind> &emitTable() {
  static std::vector<EmitKind> t;
  return t;
}

bool addEmitKind(EmitKind kind) {
  emitTable().push_back(kind);
  return true;
}

const std::vector<EmitKind> &emitKinds() { return emitTable(); }

} // namespace evoc::driver
