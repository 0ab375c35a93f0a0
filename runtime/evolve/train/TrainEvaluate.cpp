// EvaluateFn / GaitFn on top of runtime::train and runtime::trajectory.
#include "evolve/train/TrainEvaluate.h"

#include "core/Device.h"
#include "core/Inherit.h"
#include "core/JsonIO.h"
#include "core/Population.h"
#include "ir/Names.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>

namespace evoc::evolve {

namespace {

// The initial weights of every body of a batch with inheritance: seeded as
// runtime::train would (opts.seed, design id), then the parent's trained
// weights wherever the body is unchanged.
std::vector<runtime::ParamSet> inheritedInit(const runtime::ModuleInfo &info,
                                             const runtime::TrainOptions &opts,
                                             const EvalBatch &batch, std::vector<int64_t> &copied) {
  if (batch.inherit.size() != batch.robots.size())
    throw Error(fmt::format("the batch has inheritance for {} of its {} robots",
                            batch.inherit.size(), batch.robots.size()));
  std::vector<runtime::ParamSet> init;
  copied.assign(batch.robots.size(), 0);
  for (size_t r = 0; r < batch.robots.size(); ++r) {
    // One robot at a time: a population of them all would hold every
    // robot's arenas at once (docs/evolution.md, "memory").
    runtime::Population pop(info, {batch.robots[r]});
    pop.initParams(0, opts.seed, batch.ids[r]);
    runtime::ParamSet seeded = pop.params(0);
    const Inheritance &in = batch.inherit[r];
    if (in.parentParams.is_null()) {
      init.push_back(std::move(seeded));
      continue;
    }
    runtime::InheritStats st;
    init.push_back(runtime::inheritParams(info, paramsFromJson(in.parentParams),
                                          {in.parentPointKeys, in.parentSpringKeys},
                                          {in.pointKeys, in.springKeys}, std::move(seeded), &st));
    copied[r] = st.copied;
  }
  return init;
}

} // namespace

EvaluateFn trainEvaluate(const runtime::ModuleInfo &info,
                         std::shared_ptr<runtime::TrainDevice> device, runtime::TrainOptions opts) {
  // A body whose first gradient is exactly zero cannot learn: its curve
  // would repeat one loss for every iteration (docs/evolution.md).
  opts.stopWithoutGradient = true;
  return [&info, device, opts](const EvalBatch &batch) {
    std::vector<int64_t> copied(batch.robots.size(), 0);
    std::vector<runtime::ParamSet> init;
    if (!batch.inherit.empty())
      init = inheritedInit(info, opts, batch, copied);
    auto results = std::make_shared<std::vector<runtime::TrainResult>>(runtime::train(
        info, *device, batch.robots, opts, &batch.ids, batch.inherit.empty() ? nullptr : &init));
    if (results->size() != batch.robots.size())
      throw Error(fmt::format("the trainer returned {} results for {} robots", results->size(),
                              batch.robots.size()));
    std::vector<Evaluation> out(results->size());
    for (size_t i = 0; i < results->size(); ++i) {
      runtime::TrainResult &r = (*results)[i];
      Evaluation &e = out[i];
      e.losses = r.losses;
      e.valid = r.valid;
      e.reason = r.error;
      e.robotSteps = r.robotSteps;
      e.gradNorms = r.gradNorms;
      e.inherited = copied[i];
      if (r.nothingToLearn)
        e.notTrained = "nothing to learn: the loss's gradient with respect to the controller's "
                       "weights is exactly zero (a body without an actuated spring), so one "
                       "evaluation stands for every iteration";
      const std::vector<std::string> &names = info.module->lossTerms;
      if (!r.terms.empty())
        for (size_t k = 0; k < names.size(); ++k) {
          std::vector<double> curve;
          for (const auto &pass : r.terms)
            curve.push_back(k < pass.size() ? pass[k] : std::nan(""));
          e.terms.emplace_back(names[k], std::move(curve));
        }
      // Gradients and per-rollout memory are not needed past this point.
      r.grad.clear();
      if (!r.bestParams.empty())
        r.params.clear();
      e.paramsFn = [results, i] {
        const auto &res = (*results)[i];
        return runtime::paramSetToJson(res.bestParams.empty() ? res.params : res.bestParams);
      };
    }
    return out;
  };
}

EvaluateFn trainEvaluate(const runtime::ModuleInfo &info, const codegen::Executable &exe,
                         runtime::TrainOptions opts) {
  return trainEvaluate(info, runtime::cpuDevice(info, exe, opts.threads), opts);
}

EvaluateFn trainEvaluate(const runtime::ModuleInfo &info, const codegen::Executable &exe,
                         runtime::TrainOptions opts, const FitnessSpec &fitness) {
  return trainEvaluate(info, runtime::cpuDevice(info, exe, opts.threads), opts, fitness);
}

EvaluateFn trainEvaluate(const runtime::ModuleInfo &info,
                         std::shared_ptr<runtime::TrainDevice> device, runtime::TrainOptions opts,
                         const FitnessSpec &fitness) {
  for (const InvalidRule &r : fitness.invalid) {
    if (r.kind == InvalidRule::Kind::LossAbove)
      opts.stopAbove = std::min(opts.stopAbove, r.threshold);
    else
      opts.stopJump = std::min(opts.stopJump, r.threshold);
  }
  return trainEvaluate(info, std::move(device), opts);
}

runtime::ParamSet paramsFromJson(const nlohmann::json &j) {
  nlohmann::json doc = {{"params", nlohmann::json::array({j})}};
  return runtime::parseParamsJson(doc.dump(), "trained parameters").at(0);
}

std::vector<std::vector<double>>
objectTrajectory(const runtime::ModuleInfo &info, const codegen::Executable &exe,
                 const runtime::Robot &robot, const runtime::ParamSet &params,
                 const runtime::TrainOptions &opts, const std::vector<int64_t> &times) {
  if (opts.terrain.objects.empty())
    return {};
  for (const auto &f : info.fields)
    if (f.name == "object.x")
      return runtime::trajectory(info, exe, robot, params, opts, "object.x", times);
  return {};
}

GaitFn trainGait(const runtime::ModuleInfo &info, const codegen::Executable &exe,
                 runtime::TrainOptions opts, std::vector<int64_t> times) {
  return [&info, &exe, opts, times](const runtime::Robot &robot, const nlohmann::json &params) {
    std::vector<GaitFrame> frames;
    if (!params.is_object())
      return frames;
    try {
      const runtime::ParamSet weights = paramsFromJson(params);
      auto xs = runtime::trajectory(info, exe, robot, weights, opts, ir::names::kPositions, times);
      const auto objects = objectTrajectory(info, exe, robot, weights, opts, times);
      for (size_t k = 0; k < xs.size() && k < times.size(); ++k)
        frames.push_back(GaitFrame{xs[k],
                                   {},
                                   fmt::format("t = {}", times[k]),
                                   k < objects.size() ? objects[k] : std::vector<double>{}});
    } catch (const Error &) {
      frames.clear(); // a picture is never worth failing the run for
    }
    return frames;
  };
}

} // namespace evoc::evolve
