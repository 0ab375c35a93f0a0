// The names through which the compiler, the back ends and the runtimes find
// the buffers and kernels that have a part in every rollout: irgen creates
// them, autodiff, the CUDA generator and the runtimes look them up. One
// constant each, so that a rename is a compile error instead of a silent
// miss (docs/architecture.md, "The one contract").
#pragma once

namespace evoc::ir::names {

/// The robot's loss (Role::Output, one entry).
inline constexpr const char *kLoss = "loss";
/// The loss terms reported beside it (Role::Output, Module::lossTerms).
inline constexpr const char *kLossTerms = "loss.terms";
/// One value per window slot, written by a window's sample kernel.
inline constexpr const char *kLossSample = "loss.sample";
/// The reduced windows the "loss" kernel reads (Role::Window).
inline constexpr const char *kLossWindow = "loss.window";
/// The step kernel and its adjoint.
inline constexpr const char *kStep = "step";
inline constexpr const char *kStepAdjoint = "step.adj";
/// The state field of the points' positions (the stdlib's body model):
/// what pictures and videos trace, and what the initial placement lifts.
inline constexpr const char *kPositions = "point.x";

} // namespace evoc::ir::names
