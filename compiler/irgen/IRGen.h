// irgen: lowers a checked program (physics step, controller, loss) to one IR
// module of per-robot kernels. This is the only layer that sees both the AST
// and the IR.
#pragma once

#include <cstdint>
#include <optional>

#include "ir/IR.h"
#include "sema/Program.h"

namespace evoc {
class DiagnosticEngine;
class SourceManager;
} // namespace evoc

namespace evoc::irgen {

/// The most instructions irgen emits into one kernel. Fn calls are inlined,
/// so nested fns that each call the previous several times with different
/// arguments grow exponentially with the nesting; past this the program is
/// refused where the expansion starts instead of exhausting memory. The
/// largest kernel of the examples has about 700.
inline constexpr uint64_t kMaxKernelInstructions = 100000;

/// Lowers `prog` to an IR module holding the kernel "step" (controller then
/// physics, fused), "loss" (terms at fixed times) and one "loss.wN"
/// (KernelKind::LossStep) per windowed loss term. Buffer naming, which the
/// runtime relies on:
///   "<set>.<field>"       state at t (Role::State, TimeRef::Current),
///                         body data (Role::Body), temps, inputs (Role::Temp)
///   "<set>.<field>.next"  state at t+1 (Role::NextState)
///   "<set>.<field>@0", "<set>.<field>@T", "<set>.<field>@<k>"
///                         states at fixed times for loss kernels
///   "<set>.<endpoint>"    endpoint indices (Type::I, Role::Body)
///   "<controller>.w1", ".b1", ...  controller weights (Role::Param, field
///                         "w1", "b1", ...: the PARAMS.json names)
///   "loss"                the robot's loss (Role::Output, 1 entry, zeroed by
///                         the caller; every loss kernel accumulates into it)
/// Constructs the back end cannot lower yet, and a kernel that would exceed
/// kMaxKernelInstructions, are reported to `diags` with their location;
/// returns nullopt then.
std::optional<ir::Module> lowerProgram(const sema::CheckedProgram &prog,
                                       const SourceManager &sources, DiagnosticEngine &diags);

} // namespace evoc::irgen
