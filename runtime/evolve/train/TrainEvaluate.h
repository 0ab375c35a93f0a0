// Glue between the evolution engine and the runtime's trainer: an EvaluateFn
// that learns every body's controller with runtime::train, and a GaitFn that
// records a trained robot's positions for the pictures. Separate target
// (evoc_evolve_train) so the engine itself needs no compiler or back end.
#pragma once

#include <memory>

#include "evolve/engine/Evolution.h"

#include "core/Layout.h"
#include "core/Train.h"

#include <cstdint>
#include <vector>

namespace evoc::evolve {

/// An EvaluateFn that trains each batch with runtime::train(info, exe,
/// robots, opts, &batch.ids): weights seeded from (opts.seed, design id), so
/// set opts.seed to the run's seed. Losses, validity, the trained
/// parameters (bestParams, else params; fetched lazily) and robot-steps come
/// from each TrainResult. With batch.inherit (inherit = weights) each body's
/// seeded weights pass through runtime::inheritParams (its parent's trained
/// weights where the body is unchanged) and go to train as `init`.
/// `info` and `exe` must outlive the function.
EvaluateFn trainEvaluate(const runtime::ModuleInfo &info, const codegen::Executable &exe,
                         runtime::TrainOptions opts);

/// The same, with the trainer stopping a body early as soon as its curve
/// breaks one of `fitness.invalid`'s rules (TrainOptions::stopAbove /
/// stopJump): such a body is invalid whatever comes after, so the verdict is
/// unchanged and its remaining iterations are saved.
EvaluateFn trainEvaluate(const runtime::ModuleInfo &info, const codegen::Executable &exe,
                         runtime::TrainOptions opts, const FitnessSpec &fitness);

/// Both of the above on any training device (core/Device.h): the CPU's
/// thread pool (what the overloads above use) or a GPU (runtime/cuda).
EvaluateFn trainEvaluate(const runtime::ModuleInfo &info,
                         std::shared_ptr<runtime::TrainDevice> device, runtime::TrainOptions opts);
EvaluateFn trainEvaluate(const runtime::ModuleInfo &info,
                         std::shared_ptr<runtime::TrainDevice> device, runtime::TrainOptions opts,
                         const FitnessSpec &fitness);

/// The world's objects' centres ("object.x") at `times` under `params`;
/// empty when the world has no objects (docs/language.md, "Objects").
std::vector<std::vector<double>>
objectTrajectory(const runtime::ModuleInfo &info, const codegen::Executable &exe,
                 const runtime::Robot &robot, const runtime::ParamSet &params,
                 const runtime::TrainOptions &opts, const std::vector<int64_t> &times);

/// A GaitFn: the robot's "point.x" at `times` (e.g. 0, T/3, 2T/3, T-1) under
/// the given trained parameters (PARAMS.json entry format). Returns no frames
/// when the parameters are missing or do not fit (the picture then shows the
/// rest pose).
GaitFn trainGait(const runtime::ModuleInfo &info, const codegen::Executable &exe,
                 runtime::TrainOptions opts, std::vector<int64_t> times);

/// Parameters in the PARAMS.json entry format -> a ParamSet.
runtime::ParamSet paramsFromJson(const nlohmann::json &j);

} // namespace evoc::evolve
