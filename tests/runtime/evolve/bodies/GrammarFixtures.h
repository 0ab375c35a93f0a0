// Grammar body specs built in C++ for the grammar body tests: a triangle
// lattice (ELDiR cell), EvoGym-like voxels, a walker with mirrored legs and
// a Sims-style recursive limb.
#pragma once

#include "support/BodySpec.h"

#include <string>
#include <utility>
#include <vector>

namespace evoc::test {

/// Equilateral triangles (side 1) with ports e0, e1, e2 and optional
/// children on every free edge: a lattice grown as a spanning tree.
body::GrammarBodySpec triangleGrammar();
/// Unit squares with both diagonals; variants rigid / soft / h-actuator /
/// v-actuator as alternatives with weights 1, 2, 3, 4.
body::GrammarBodySpec voxelGrammar();
/// A trunk chain with a tied pair of legs per trunk, leg segments with a
/// length parameter and feet on a one-point port with an angle gene.
body::GrammarBodySpec walkerGrammar();
/// A block with a recursive limb (end and side branches), limit Limb = 6.
body::GrammarBodySpec limbGrammar();
/// All four, with names, for property tests.
std::vector<std::pair<std::string, body::GrammarBodySpec>> allGrammars();

/// Every operator with a moderate rate (and until changed).
body::GrammarMutationSpec mixedMutation();
/// Only `op` ("add", "remove", "swap", "rearrange", "combine", "perturb",
/// "flip") at rate 1 (per gene for perturb and flip: 1 / genes), until changed.
body::GrammarMutationSpec onlyMutation(const std::string &op);

} // namespace evoc::test
