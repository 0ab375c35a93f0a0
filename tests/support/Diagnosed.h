// Test support: the sources of one front-end or sema run and the diagnostics
// reported against them, kept alive together (header only).
#pragma once

#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include <string>
#include <vector>

namespace evoc::test {

/// Sources and their diagnostics; Parsed and Checked add what the run made.
struct Diagnosed {
  SourceManager sources;
  DiagnosticEngine diags{sources};

  /// Headlines of every diagnostic and note, in order.
  std::vector<std::string> lines() const { return diags.headlines(); }
  /// lines(), each ended by a newline.
  std::string all() const {
    std::string s;
    for (const auto &l : lines())
      s += l + "\n";
    return s;
  }
};

} // namespace evoc::test
