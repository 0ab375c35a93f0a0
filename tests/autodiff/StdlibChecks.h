// A program text through the front end, irgen and autodiff, for the stdlib
// gradient checks (StdlibGradTest.cpp, Stdlib3dGradTest.cpp).
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "autodiff/Differentiate.h"
#include "ir/Verifier.h"
#include "irgen/IRGen.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

namespace evoc::test {

/// Checks, lowers and differentiates the program `text` (written to a
/// temporary file NAME.evo), with the repository's stdlib.
inline ir::Module lowerText(const std::string &name, const std::string &text) {
  auto dir = std::filesystem::temp_directory_path() / "evoc-autodiff-test";
  std::filesystem::create_directories(dir);
  std::string path = (dir / (name + ".evo")).string();
  std::ofstream(path) << text;
  SourceManager sources;
  DiagnosticEngine diags(sources);
  sema::CheckOptions opts;
  opts.ignoreEnv = true;
  opts.stdlibDirs = {std::string(EVOC_SOURCE_DIR) + "/stdlib"};
  std::optional<ir::Module> m;
  if (auto prog = sema::checkFile(path, opts, sources, diags))
    m = irgen::lowerProgram(*prog, sources, diags);
  std::ostringstream errs;
  diags.flush(errs);
  INFO(errs.str());
  REQUIRE(m);
  autodiff::differentiate(*m);
  auto verr = ir::verify(*m);
  INFO((verr.empty() ? "" : verr[0]));
  REQUIRE(verr.empty());
  return std::move(*m);
}

} // namespace evoc::test
