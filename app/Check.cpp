// `evoc check FILE`: parse and check a program, print its diagnostics.
#include "app/Driver.h"
#include "support/OptionTable.h"

#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include <cstdio>

namespace evoc::app {

static int runCheck(const std::vector<std::string> &args) {
  CommonOptions opts;
  if (!parseCommonOptions(args, opts))
    return 2;
  if (!OptionTable("evoc check").parse(opts.rest))
    return 2;
  SourceManager sources;
  auto program = loadChecked(opts, sources);
  if (!program)
    return 1;
  std::string what;
  auto add = [&](const char *kind, const std::string &name) {
    what += std::string(what.empty() ? " (" : ", ") + kind + " " + name;
  };
  if (program->physics)
    add("physics", program->physics->name.name);
  if (program->controller)
    add("controller", program->controller->name.name);
  if (program->loss)
    add("loss", program->loss->name.name);
  if (!what.empty())
    what += ")";
  std::printf("%s: ok%s\n", opts.file.c_str(), what.c_str());
  return 0;
}

static bool registered =
    addSubcommand({"check", "parse and check a .evo file", runCheck, "check FILE.evo [options]"});

} // namespace evoc::app
