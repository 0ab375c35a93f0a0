// What the stdlib gradient checks share (StdlibGradTest.cpp,
// Stdlib3dGradTest.cpp): a program through the front end, irgen and
// autodiff; random values for the loss's fixed-time states; the check of a
// gradient-check report.
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "CheckGrad.h"
#include "GradCheck.h"
#include "autodiff/Differentiate.h"
#include "ir/Verifier.h"
#include "irgen/IRGen.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

namespace evoc::test {

/// Checks, lowers, differentiates and verifies the program at `path` with
/// the repository's stdlib and the `--set` overrides.
inline ir::Module lowerFile(const std::string &path,
                            const std::vector<std::pair<std::string, std::string>> &overrides) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  sema::CheckOptions opts;
  opts.ignoreEnv = true;
  opts.stdlibDirs = {std::string(EVOC_SOURCE_DIR) + "/stdlib"};
  opts.overrides = overrides;
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

/// The same for the program `text` (written to a temporary file NAME.evo).
inline ir::Module lowerText(const std::string &name, const std::string &text) {
  auto dir = std::filesystem::temp_directory_path() / "evoc-autodiff-test";
  std::filesystem::create_directories(dir);
  std::string path = (dir / (name + ".evo")).string();
  std::ofstream(path) << text;
  return lowerFile(path, {});
}

/// The loss's inputs (states at fixed times) get their own random values in
/// [0.2, 0.7], drawn from `u` (on [-0.5, 0.5]) and `rng`.
inline void randomizeTimedStates(const ir::Module &m, Data &d, std::mt19937 &rng,
                                 std::uniform_real_distribution<double> &u) {
  for (size_t b = 0; b < m.buffers.size(); ++b)
    if (m.buffers[b].role == ir::Role::State && m.buffers[b].time != ir::TimeRef::Current)
      for (double &val : d.f[b])
        val = 0.2 + 0.5 * (u(rng) + 0.5);
}

} // namespace evoc::test
