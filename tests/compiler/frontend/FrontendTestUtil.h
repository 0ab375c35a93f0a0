// Helpers for the front-end tests: parse a string, collect diagnostics.
#pragma once

#include "Diagnosed.h"
#include "frontend/Imports.h"
#include "frontend/Parser.h"

#include <memory>
#include <string>

namespace evoc::test {

/// A parse of one in-memory file, keeping the sources alive.
struct Parsed : Diagnosed {
  std::unique_ptr<ast::Module> module;
};

inline std::unique_ptr<Parsed> parse(const std::string &text, const std::string &name = "t.evo") {
  auto p = std::make_unique<Parsed>();
  int f = p->sources.addBuffer(name, text);
  p->module = frontend::parseModule(f, p->sources, p->diags);
  return p;
}

} // namespace evoc::test
