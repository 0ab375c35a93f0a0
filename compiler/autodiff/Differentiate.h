// Reverse-mode source transformation: each forward kernel gets an adjoint
// kernel that recomputes the forward values it needs (no tape).
#pragma once

#include "ir/IR.h"

namespace evoc::autodiff {

/// For every forward kernel (Step, Loss, LossStep) without one, appends an
/// adjoint kernel "<k>.adj" (StepAdj, LossAdj, LossStepAdj; primal = k) and
/// the adjoint buffers "<b>.adj" (Role::Adjoint, primal = b) it needs.
///
/// Contract of an adjoint kernel (docs/architecture.md, "Reverse mode"):
/// it reads the forward kernel's inputs plus the adjoints of what the forward
/// wrote (NextState.adj, Output.adj, Temp.adj), first re-runs the forward
/// code writing only Temp buffers, then ACCUMULATES (accadd) into the
/// adjoints of the float buffers it read: State, Param, Body buffers marked
/// differentiable, and active Temps. The caller zeroes every Temp buffer and
/// every adjoint of a Temp before each call.
void differentiate(ir::Module &m);

/// Differentiates one forward kernel; returns the index of its adjoint.
int differentiateKernel(ir::Module &m, int kernel);

} // namespace evoc::autodiff
