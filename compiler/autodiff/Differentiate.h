// Reverse-mode source transformation: each forward kernel gets an adjoint
// kernel that recomputes the forward values it needs, apart from the
// temporaries the runtime keeps per step (planTape).
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
///
/// With `keepTemps`, planTape first marks the step's expensive temporaries
/// (Buffer::tape); step.adj then reads those the runtime kept from the
/// forward step at the same t instead of recomputing them, and the caller
/// zeroes only the others.
void differentiate(ir::Module &m, bool keepTemps = false);

/// Marks (Buffer::tape) the Temp buffers of the Step kernel whose values are
/// per-element reductions (a layer's activations) that only the step writes,
/// with plain stores: what the runtime keeps per step so that step.adj need
/// not replay the products that made them.
void planTape(ir::Module &m);

/// Differentiates one forward kernel; returns the index of its adjoint.
int differentiateKernel(ir::Module &m, int kernel);

} // namespace evoc::autodiff
