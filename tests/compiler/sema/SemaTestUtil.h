// Helpers for the sema tests: check a string or a file, collect diagnostics.
#pragma once

#include "Diagnosed.h"
#include "sema/Program.h"

#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

namespace evoc::test {

/// One check run, keeping sources and diagnostics alive.
struct Checked : Diagnosed {
  std::optional<sema::CheckedProgram> program;
};

/// Checks `text` as if it were the file `name` (imports resolve next to it,
/// then in the source tree's stdlib).
inline std::unique_ptr<Checked> checkText(const std::string &text,
                                          const std::string &name = "t.evo",
                                          sema::CheckOptions opts = {}) {
  auto c = std::make_unique<Checked>();
  opts.ignoreEnv = true;
  int f = c->sources.addBuffer(name, text);
  c->program = sema::checkBuffer(f, opts, c->sources, c->diags);
  return c;
}

inline std::unique_ptr<Checked> checkPath(const std::string &path, sema::CheckOptions opts = {}) {
  auto c = std::make_unique<Checked>();
  opts.ignoreEnv = true;
  c->program = sema::checkFile(path, opts, c->sources, c->diags);
  return c;
}

inline std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

} // namespace evoc::test
