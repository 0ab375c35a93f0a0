// The rollout contract of a module: which kernel runs when, which buffers
// form the state and where its adjoints lie, what the step keeps per step.
// One analysis of the IR, read by the runtime (runtime/core/Layout.h's
// ModuleInfo builds its memory layout on it) and by the CUDA back end (its
// fused rollout kernels bind the same buffers), so the two cannot disagree
// (docs/architecture.md, "The one contract").
#pragma once

#include <string>
#include <vector>

#include "ir/IR.h"

namespace evoc::ir {

/// One state field ("point.x"): every State / NextState buffer whose
/// Buffer::field (or name, when field is empty) is this name.
struct StateField {
  std::string name;
  Type elem = Type::F;
  std::vector<int> sets;
  int comps = 1;
  std::vector<double> start; // each element's initial value per component (Buffer::start)
  int stepReads = -1;        // the Step kernel's State (Current) buffer, -1 if none
  int stepWrites = -1;       // the Step kernel's NextState buffer, -1 if none
  int adjReads = -1;         // the step adjoint's adjoint of stepReads, -1 if none
  int adjWrites = -1;        // the step adjoint's adjoint of stepWrites, -1 if none
  /// Whether the step reads or writes the field: it then has a tape of T
  /// states in a rollout.
  bool taped() const { return stepReads >= 0 || stepWrites >= 0; }
  /// The buffer a rollout binds to the field's tape.
  int tape() const { return stepReads >= 0 ? stepReads : stepWrites; }
  /// The buffer a rollout binds to the field's adjoint ring (-1: none).
  int adjTape() const { return adjReads >= 0 ? adjReads : adjWrites; }
};

struct RolloutContract {
  int step = -1, stepAdj = -1;            // kernel indices (-1: none)
  std::vector<int> loss, lossAdj;         // Loss kernels and their adjoints (same order)
  std::vector<int> lossStep, lossStepAdj; // LossStep kernels and adjoints (same order)
  std::vector<int> init;                  // Init kernels
  // Adjoints are all there or none is: stepAdj, lossAdj and lossStepAdj are
  // cleared unless every loss kernel has one.
  std::vector<std::vector<int>> used; // per kernel: the buffers it references, ascending
  std::vector<StateField> fields;     // every state field, by its first buffer
  std::vector<int> fieldOf;           // per buffer: its state field (state roles and their
                                      // adjoints), else -1
  std::vector<int> kept;              // Temps kept per step (Buffer::tape) the step uses, ascending
  // What a runtime zeroes (docs/architecture.md, "Scratch that is not
  // zeroed"): a kernel that stores a scratch buffer whole before it reads it
  // (ir::writesWholeFirst) finds it as it is.
  std::vector<std::vector<int>> scratchZero; // per kernel: the Temps not kept and the
                                             // Temps' adjoints it uses but does not write
                                             // whole first, ascending
  std::vector<int> keptZero;  // kept Temps that a step's tape block holds as zeros before the
                              // step: those not written whole first by the first of step and
                              // step.adj that uses them, ascending
  int lossOutput = -1;        // the Output buffer "loss"
  int lossOutputAdj = -1;     // its adjoint, -1 if none
  int pointX = -1;            // the state field "point.x" (initial positions), -1 if none
  bool readsCommands = false; // some kernel reads a Command buffer
  /// Adjoint states each field's adjoint ring holds: the largest offset d a
  /// loss reads (x[t - d]) + 2.
  int adjSlots = 2;
  /// Reduced windows (the comps of loss.sample).
  int windowSlots = 0;
};

/// The contract of `m`. Throws evoc::Error ("module 'NAME': ...") where the
/// module breaks it: two Step kernels, state buffers of one field of other
/// types or shapes, an adjoint without a valid primal, an adjoint of a
/// command, a 'loss' output that is not a float buffer or is missing while
/// loss kernels exist. A module without a Step kernel has step = -1.
RolloutContract rolloutContract(const Module &m);

} // namespace evoc::ir
