// The one place that maps a checked `body` block onto a runtime body model
// (lattice, grammar, fixed cells), for `evoc run` and `evoc sim`.
#pragma once

#include <memory>

#include "evolve/bodies/BodyModel.h"
#include "sema/Program.h"

namespace evoc::app {

/// The body model of a checked program's chosen body, with its `mutation`
/// rules. Throws evoc::Error when the program has no body.
std::shared_ptr<const evolve::BodyModel> bodyModel(const sema::CheckedProgram &p);

} // namespace evoc::app
