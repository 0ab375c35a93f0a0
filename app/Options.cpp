// Options common to the subcommands, and loading + checking a .evo file.
#include "app/Driver.h"

#include "support/OptionTable.h"

#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

namespace evoc::app {

bool parseCommonOptions(const std::vector<std::string> &args, CommonOptions &out) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    auto value = [&](const char *opt) -> const std::string * {
      if (i + 1 >= args.size()) {
        std::fprintf(stderr, "evoc: error: %s needs a value\n", opt);
        return nullptr;
      }
      return &args[++i];
    };
    if (a == "--stdlib") {
      auto *v = value("--stdlib");
      if (!v)
        return false;
      out.check.stdlibDirs.push_back(*v);
    } else if (a.rfind("--stdlib=", 0) == 0) {
      out.check.stdlibDirs.push_back(a.substr(9));
    } else if (a == "--set" || a.rfind("--set=", 0) == 0) {
      std::string kv;
      if (a == "--set") {
        auto *v = value("--set");
        if (!v)
          return false;
        kv = *v;
      } else {
        kv = a.substr(6);
      }
      size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) {
        std::fprintf(stderr,
                     "evoc: error: --set takes KEY=VALUE (e.g. evolve.population=50), "
                     "not '%s'\n",
                     kv.c_str());
        return false;
      }
      out.check.overrides.push_back({kv.substr(0, eq), kv.substr(eq + 1)});
    } else if (a == "-w") {
      out.warnings = false;
    } else if (a == "--Werror") {
      out.warningsAsErrors = true;
    } else if (a == "--replay-temps") {
      out.tape = autodiff::Tape::Replay;
    } else if (a == "--no-window-products") {
      out.tape = autodiff::Tape::Keep;
    } else if (a.size() > 1 && a[0] == '-') {
      out.rest.push_back(a);
    } else if (out.file.empty()) {
      out.file = a;
    } else {
      out.rest.push_back(a);
    }
  }
  if (out.file.empty()) {
    std::fprintf(stderr, "evoc: error: no .evo file given\n");
    return false;
  }
  return true;
}

std::optional<sema::CheckedProgram> loadChecked(const CommonOptions &opts, SourceManager &sources,
                                                DiagnosticEngine &diags) {
  diags.setWarningsEnabled(opts.warnings);
  diags.setWarningsAsErrors(opts.warningsAsErrors);
  std::optional<sema::CheckedProgram> program;
  if (opts.text)
    program =
        sema::checkBuffer(sources.addBuffer(opts.file, *opts.text), opts.check, sources, diags);
  else
    program = sema::checkFile(opts.file, opts.check, sources, diags);
  diags.flush(std::cerr);
  if (diags.hasErrors()) {
    int n = diags.errorCount();
    std::cerr << n << " error" << (n == 1 ? "" : "s") << " generated.\n";
    return std::nullopt;
  }
  return program;
}

std::optional<sema::CheckedProgram> loadChecked(const CommonOptions &opts, SourceManager &sources) {
  DiagnosticEngine diags(sources);
  return loadChecked(opts, sources, diags);
}

std::string defaultRunDir(const std::string &file) {
  std::string stem = file.substr(file.find_last_of('/') + 1);
  if (auto dot = stem.rfind(".evo"); dot != std::string::npos)
    stem = stem.substr(0, dot);
  return "runs/" + stem;
}

std::string readText(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string resolvedSource(const std::string &command, const CommonOptions &opts,
                           const sema::CheckedProgram &program) {
  std::string text = "// " + command + " " + opts.file + "\n";
  for (const auto &[k, v] : opts.check.overrides)
    text += "// --set " + k + "=" + v + "\n";
  for (const auto &mod : program.ast->modules)
    text += "\n// ----- " + mod->path + " -----\n" + readText(mod->path);
  return text;
}

bool parseRunArgs(const std::vector<std::string> &rest, const char *command, bool robot,
                  RunArgs &a) {
  OptionTable t(command);
  t.text("--out", a.out)
      .text("--resume", a.resume)
      .text("--backend", a.backend)
      .integer("--threads", 0, 4096, a.threads, " (0: one per core)");
  if (robot)
    t.text("--robot", a.robot).integer("--lanes", 1, 64, a.lanes);
  if (!t.parse(rest))
    return false;
  if (!a.out.empty() && !a.resume.empty() && a.out != a.resume)
    return t.error("give either --out DIR or --resume DIR");
  return true;
}

} // namespace evoc::app
