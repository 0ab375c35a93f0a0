// Reverse-mode source transformation: each forward kernel gets an adjoint
// kernel that recomputes the forward values it needs, apart from the
// temporaries the runtime keeps per step (planTape).
#pragma once

#include <vector>

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
/// `tape` says what the adjoint of the step keeps from the forward step
/// (docs/architecture.md, "Kept temporaries", "Window products"):
enum class Tape : uint8_t {
  Replay,   ///< nothing: step.adj recomputes every temporary
  Keep,     ///< planTape's temporaries (Buffer::tape); step.adj reads those the
            ///< runtime kept from the forward step at the same t, and the
            ///< caller zeroes only the others
  Products, ///< Keep, with the layers' inputs, and deferProducts
};
void differentiate(ir::Module &m, Tape tape = Tape::Replay);

/// Marks (Buffer::tape) the Temp buffers of the Step kernel whose values are
/// per-element reductions (a layer's activations) or sums it scatters into
/// (accadd: the forces on the points), that only the step uses: what the
/// runtime keeps per step so that step.adj need not replay the products and
/// loops that made them. With `productInputs`, also the inputs x of the
/// layers' W x, which the window products need.
void planTape(ir::Module &m, bool productInputs);

/// In step.adj (kernel `stepAdj`), replaces each per-step accumulation of a
/// weight gradient, accadd W.adj[s, u] += r_s * x[u] with x kept per step,
/// by a store of the row factor r into a kept temporary "W.adj.rows" and a
/// Module::products entry: the runtime adds the window's outer products
/// rows_t x_t^T to W.adj as one matrix product per window.
void deferProducts(ir::Module &m, int stepAdj);

/// Differentiates one forward kernel; returns the index of its adjoint.
int differentiateKernel(ir::Module &m, int kernel);

/// Differentiates, in kernel order, the forward kernels without an adjoint
/// yet: the Step kernel (`steps`) or the Loss and LossStep kernels (not
/// `steps`). Returns the indices of the adjoints made. differentiate() is
/// planTape, the step's adjoint, deferProducts, then the losses' adjoints.
std::vector<int> differentiateKernels(ir::Module &m, bool steps);

} // namespace evoc::autodiff
