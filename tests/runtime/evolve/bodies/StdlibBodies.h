// The stdlib's grammar bodies as the real checker reads them, for the stdlib
// grammar tests: a .evo text (or file) checked to its body and mutation.
#pragma once

#include "support/BodySpec.h"

#include <string>
#include <utility>
#include <vector>

namespace evoc::test {

/// A `body grammar` and its `mutation { ... }` as the checker built them.
struct CheckedBody {
  body::GrammarBodySpec spec;
  body::GrammarMutationSpec mutation;
};

/// Checks `text` (a program importing stdlib grammars, read as if it were
/// the file `path`); fails the current test with the diagnostics if it does
/// not check or declares no grammar body.
CheckedBody
checkGrammarBody(const std::string &text,
                 const std::string &path = "tests/runtime/evolve/bodies/stdlib_body.evo");

/// The text of the repository file `relative` (e.g. "examples/x.evo").
std::string sourceFile(const std::string &relative);

/// The four stdlib grammars as bodies for property tests, by name:
/// "walker" is examples/grammar_walker.evo itself (its body settings and
/// mutation); "lattice", "voxels" and "limb" are small programs with limits
/// of the same size and the example's mutation block.
std::vector<std::pair<std::string, CheckedBody>> stdlibBodies();

} // namespace evoc::test
