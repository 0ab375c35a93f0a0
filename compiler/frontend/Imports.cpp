// loadProgram: depth-first import resolution with cycle detection.
#include "frontend/Imports.h"

#include "frontend/Parser.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include <cstdlib>
#include <filesystem>
#include <map>

#ifndef EVOC_STDLIB_DIR
#define EVOC_STDLIB_DIR ""
#endif

namespace evoc::frontend {

namespace fs = std::filesystem;

std::vector<std::string> importSearchPath(const ImportOptions &options) {
  std::vector<std::string> dirs = options.stdlibDirs;
  if (options.useEnv)
    if (const char *env = std::getenv("EVOC_STDLIB_PATH")) {
      std::string s = env;
      size_t start = 0;
      while (start <= s.size()) {
        size_t colon = s.find(':', start);
        std::string part =
            s.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
        if (!part.empty())
          dirs.push_back(part);
        if (colon == std::string::npos)
          break;
        start = colon + 1;
      }
    }
  if (options.useBuiltin && std::string(EVOC_STDLIB_DIR) != "")
    dirs.push_back(EVOC_STDLIB_DIR);
  return dirs;
}

std::vector<std::pair<std::string, std::string>>
importCandidates(const std::string &path, const std::string &from,
                 const std::vector<std::string> &search) {
  std::vector<std::pair<std::string, std::string>> candidates; // (folder, file)
  fs::path p(path);
  if (p.is_absolute()) {
    candidates.push_back({p.parent_path().string(), p.string()});
    return candidates;
  }
  std::string here = fs::path(from).parent_path().string();
  candidates.push_back({here.empty() ? "." : here, (fs::path(here) / p).string()});
  for (const auto &dir : search)
    candidates.push_back({dir, (fs::path(dir) / p).string()});
  return candidates;
}

std::string resolveImport(const std::string &path, const std::string &from,
                          const ImportOptions &options) {
  if (path.empty())
    return "";
  for (const auto &[folder, file] : importCandidates(path, from, importSearchPath(options))) {
    std::error_code ec;
    if (fs::is_regular_file(file, ec))
      return fs::path(file).lexically_normal().string();
  }
  return "";
}

namespace {

class Loader {
public:
  Loader(const ImportOptions &o, SourceManager &s, DiagnosticEngine &d)
      : search(importSearchPath(o)), sources(s), diags(d) {}

  std::unique_ptr<ast::Program> run(int mainFile) {
    program = std::make_unique<ast::Program>();
    visit(mainFile);
    if (failed)
      return nullptr;
    return std::move(program);
  }

private:
  enum class State { InProgress, Done };
  std::vector<std::string> search;
  SourceManager &sources;
  DiagnosticEngine &diags;
  std::unique_ptr<ast::Program> program;
  std::map<int, State> state;
  std::vector<int> chain;
  bool failed = false;

  void visit(int file) {
    state[file] = State::InProgress;
    chain.push_back(file);
    auto module = parseModule(file, sources, diags);
    if (!module) {
      failed = true;
    } else {
      for (auto &d : module->decls)
        if (auto *imp = ast::dynCast<ast::ImportDecl>(d.get()))
          resolve(*imp, file);
      program->modules.push_back(std::move(module));
    }
    chain.pop_back();
    state[file] = State::Done;
  }

  void resolve(ast::ImportDecl &imp, int from) {
    if (imp.path.empty()) {
      diags.error(imp.pathRange, "empty import path");
      failed = true;
      return;
    }
    std::vector<std::string> tried;
    for (const auto &[folder, file] : importCandidates(imp.path, sources.path(from), search)) {
      const fs::path c(file);
      std::error_code ec;
      if (!fs::is_regular_file(c, ec)) {
        tried.push_back(folder);
        continue;
      }
      int id = sources.loadFile(c.lexically_normal().string());
      if (id < 0) {
        diags.error(imp.pathRange, "cannot read imported file '" + c.string() + "'");
        failed = true;
        return;
      }
      imp.resolvedPath = sources.path(id);
      imp.resolvedFile = id;
      auto it = state.find(id);
      if (it == state.end()) {
        visit(id);
      } else if (it->second == State::InProgress) {
        std::string cycle;
        bool in = false;
        for (int f : chain) {
          if (f == id)
            in = true;
          if (in)
            cycle += fs::path(sources.path(f)).filename().string() + " -> ";
        }
        cycle += fs::path(sources.path(id)).filename().string();
        diags.error(imp.pathRange, "import cycle: " + cycle);
        failed = true;
      }
      return;
    }
    std::string where;
    for (size_t i = 0; i < tried.size(); ++i)
      where += (i ? ", " : "") + tried[i];
    diags.error(imp.pathRange, "cannot find imported file '" + imp.path + "' (searched " + where +
                                   "; add a folder with --stdlib DIR or EVOC_STDLIB_PATH)");
    failed = true;
  }
};

} // namespace

std::unique_ptr<ast::Program> loadProgramFromFile(int file, const ImportOptions &options,
                                                  SourceManager &sources, DiagnosticEngine &diags) {
  Loader loader(options, sources, diags);
  return loader.run(file);
}

std::unique_ptr<ast::Program> loadProgram(const std::string &path, const ImportOptions &options,
                                          SourceManager &sources, DiagnosticEngine &diags) {
  int file = sources.loadFile(path);
  if (file < 0) {
    diags.error("cannot read file '" + path + "'");
    return nullptr;
  }
  return loadProgramFromFile(file, options, sources, diags);
}

} // namespace evoc::frontend
