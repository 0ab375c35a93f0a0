// Learning loops over a population, run by a thread pool; `evoc sim`.
#include "core/Train.h"

#include <chrono>
#include <cmath>
#include <limits>
#include <memory>

#include <fmt/format.h>

#include "core/Commands.h"
#include "core/Device.h"
#include "core/Population.h"
#include "core/Rng.h"
#include "core/ThreadPool.h"
#include "support/Error.h"

namespace evoc::runtime {

RolloutConfig rolloutConfig(const TrainOptions &o) {
  RolloutConfig rc;
  rc.steps = o.steps;
  rc.checkpointK = o.checkpointK;
  rc.fullTape = o.fullTape;
  rc.fullTapeBudget = o.fullTapeBudget;
  rc.groundHeight = o.groundHeight;
  rc.terrain = o.terrain.empty() ? nullptr : &o.terrain;
  rc.upAxis = o.upAxis;
  rc.stateLimit = o.stateLimit;
  return rc;
}

int64_t Continuation::step(int64_t it) const {
  int64_t grown = growEvery > 0 && it > after ? (it - after) / growEvery : 0;
  return std::max<int64_t>(1, std::min(resetEveryMax, resetEvery + grown));
}

bool Continuation::continues(int64_t it, int64_t b) const {
  if (!active() || it < after)
    return false;
  int64_t s = step(it);
  return b % s != it % s;
}

EpisodeCarry::EpisodeCarry(const Continuation &c, int64_t batch, int64_t stateBytes)
    : cont_(c), stateBytes_(stateBytes) {
  if (c.active()) {
    states_.assign(size_t(batch), std::vector<std::byte>(size_t(stateBytes)));
    filled_.assign(size_t(batch), 0);
  }
}

void EpisodeCarry::bind(RolloutConfig &rc, int64_t it, int64_t b) {
  if (!cont_.active())
    return;
  std::byte *s = states_.at(size_t(b)).data();
  if (filled_[size_t(b)] && cont_.continues(it, b))
    rc.startState = s;
  rc.finalState = s;
  filled_[size_t(b)] = 1;
}

std::vector<std::string> EpisodeCarry::save() const {
  static const char *digits = "0123456789abcdef";
  std::vector<std::string> out;
  for (size_t b = 0; b < states_.size() && filled_[b]; ++b) {
    std::string h;
    h.reserve(states_[b].size() * 2);
    for (std::byte x : states_[b]) {
      h += digits[std::to_integer<unsigned>(x) >> 4];
      h += digits[std::to_integer<unsigned>(x) & 15];
    }
    out.push_back(std::move(h));
  }
  return out;
}

void EpisodeCarry::load(const std::vector<std::string> &hex) {
  if (hex.size() > states_.size())
    throw Error(
        fmt::format("{} carried episode states for a batch of {}", hex.size(), states_.size()));
  auto nibble = [](char c) -> int {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  for (size_t b = 0; b < hex.size(); ++b) {
    if (int64_t(hex[b].size()) != 2 * stateBytes_)
      throw Error(fmt::format("carried episode state {} has {} hex digits, expected {}", b,
                              hex[b].size(), 2 * stateBytes_));
    for (int64_t i = 0; i < stateBytes_; ++i) {
      int hi = nibble(hex[b][size_t(2 * i)]), lo = nibble(hex[b][size_t(2 * i + 1)]);
      if (hi < 0 || lo < 0)
        throw Error(fmt::format("carried episode state {} is not hexadecimal", b));
      states_[b][size_t(i)] = std::byte(hi * 16 + lo);
    }
    filled_[b] = 1;
  }
}

uint64_t episodeStream(uint64_t seed, uint64_t robotId, int64_t iteration, int64_t episode) {
  return mixSeed(mixSeed(mixSeed(mixSeed(seed, 0xC0FFEE5EEDull), robotId), uint64_t(iteration)),
                 uint64_t(episode));
}

namespace {

// The learning loop of one chunk of robots [first, first + n) on a device:
// max(1, iterations) forward + backward passes with an optimiser step after
// each (iterations > 0), the early stops, the best parameters, and one last
// forward-only pass of the final weights.
void learn(DeviceBatch &batch, int first, int n, const TrainOptions &opts,
           std::vector<TrainResult> &results) {
  const int iters = std::max(1, opts.iterations);
  std::vector<char> active(size_t(n), 1), improved(size_t(n), 0);
  std::vector<double> best(size_t(n), std::numeric_limits<double>::infinity());
  std::vector<IterationResult> out(static_cast<size_t>(n));
  // Robot i's pass: its steps (and a backward pass's memory) and, when
  // valid, its loss join its result; an invalid pass ends its learning.
  // False when it is not (or no longer) learning.
  auto record = [&](int i, const IterationResult &o, bool backward) {
    if (!active[size_t(i)])
      return false;
    TrainResult &res = results[size_t(first + i)];
    res.robotSteps += o.stepsRun;
    if (backward)
      res.memory = o.memory;
    if (!o.valid) {
      res.valid = false;
      res.error = o.error;
      active[size_t(i)] = 0;
      return false;
    }
    res.losses.push_back(o.loss);
    if (!o.terms.empty())
      res.terms.push_back(o.terms);
    return true;
  };
  // TrainOptions::stopWithoutGradient: the episodes of every iteration are
  // the same ones, so a zero gradient now means a zero gradient forever.
  const bool sameEpisodes = !opts.commands && !opts.continuation.active();
  for (int it = 0; it < iters; ++it) {
    batch.iterate(it, true, active, out);
    std::fill(improved.begin(), improved.end(), 0);
    for (int i = 0; i < n; ++i) {
      const IterationResult &o = out[size_t(i)];
      if (!record(i, o, true))
        continue;
      TrainResult &res = results[size_t(first + i)];
      res.gradNorms.push_back(o.gradNorm);
      if (opts.keepBestParams && o.loss < best[size_t(i)]) {
        best[size_t(i)] = o.loss;
        improved[size_t(i)] = 1;
      }
      if (it + 1 == iters && opts.keepGrad)
        res.grad = batch.grads(i);
      size_t nl = res.losses.size();
      if (std::abs(o.loss) > opts.stopAbove ||
          (nl > 1 && std::abs(o.loss - res.losses[nl - 2]) >= opts.stopJump)) {
        res.stoppedEarly = true;
        if (opts.keepGrad)
          res.grad = batch.grads(i);
        active[size_t(i)] = 0;
      } else if (opts.stopWithoutGradient && opts.iterations > 0 && it == 0 && sameEpisodes &&
                 o.gradNorm == 0) {
        res.nothingToLearn = true;
        if (opts.keepGrad)
          res.grad = batch.grads(i);
        active[size_t(i)] = 0;
      }
    }
    batch.keepBest(improved);
    if (opts.iterations > 0)
      batch.update(active);
  }
  // As ELDiR (docs/evolution.md): the weights after the last update are
  // evaluated once more, forward only (no gradient is needed), so the last
  // update counts too.
  if (opts.iterations > 0) {
    batch.iterate(iters, false, active, out);
    std::fill(improved.begin(), improved.end(), 0);
    for (int i = 0; i < n; ++i)
      if (record(i, out[size_t(i)], false))
        improved[size_t(i)] = opts.keepBestParams && out[size_t(i)].loss < best[size_t(i)];
    batch.keepBest(improved);
  }
  for (int i = 0; i < n; ++i) {
    TrainResult &res = results[size_t(first + i)];
    if (opts.keepBestParams && best[size_t(i)] < std::numeric_limits<double>::infinity())
      res.bestParams = batch.bestParams(i);
    if (opts.keepParams)
      res.params = batch.params(i);
    res.loss = res.losses.empty() || !res.valid ? std::numeric_limits<double>::quiet_NaN()
                                                : res.losses.back();
  }
}

/// Trains robots [s0, s1) of `robots` as one population (train()'s slice),
/// into results[s0 .. s1).
void trainSlice(const ModuleInfo &info, TrainDevice &device, const std::vector<Robot> &robots,
                const TrainOptions &opts, const std::vector<uint64_t> *ids,
                const std::vector<ParamSet> *init, int s0, int s1,
                std::vector<TrainResult> &results) {
  const bool whole = s0 == 0 && s1 == int(robots.size());
  const int n = s1 - s0;
  std::vector<Robot> part;
  std::vector<uint64_t> partIds;
  std::vector<ParamSet> partInit;
  if (!whole) {
    part.assign(robots.begin() + s0, robots.begin() + s1);
    for (int r = s0; r < s1; ++r) // without ids, a robot's id is its index
      partIds.push_back(ids ? (*ids)[size_t(r)] : uint64_t(r));
    if (init)
      partInit.assign(init->begin() + s0, init->begin() + s1);
  }
  Population pop = whole ? Population(info, robots) : Population(info, std::move(part));
  const std::vector<uint64_t> *sliceIds = whole ? ids : &partIds;
  const std::vector<ParamSet> *sliceInit = whole ? init : init ? &partInit : nullptr;
  if (sliceInit) // every error a user can cause is raised here, before any thread runs
    for (int r = 0; r < n; ++r)
      pop.checkParams(r, (*sliceInit)[size_t(r)]);
  std::vector<TrainResult> sliceResults(static_cast<size_t>(n));
  for (int first = 0; first < n;) {
    const int count = std::clamp(device.chunk(pop, first, opts), 1, n - first);
    std::unique_ptr<DeviceBatch> batch = device.open(pop, first, count, opts, sliceIds, sliceInit);
    learn(*batch, first, count, opts, sliceResults);
    first += count;
  }
  std::move(sliceResults.begin(), sliceResults.end(), results.begin() + s0);
}

} // namespace

int64_t trainSliceBytes(const ModuleInfo &info, const Robot &r) {
  constexpr int64_t kLearningCopies = 4;
  const RobotLayout l = layoutRobot(info, setSizes(*info.module, r));
  int64_t bytes = 8 * l.paramCount * kLearningCopies;
  for (Arena a : {Arena::Body, Arena::Param, Arena::Grad, Arena::Output})
    bytes += l.arenaBytes[int(a)];
  return bytes;
}

std::vector<TrainResult> train(const ModuleInfo &info, TrainDevice &device,
                               const std::vector<Robot> &robots, const TrainOptions &opts,
                               const std::vector<uint64_t> *ids,
                               const std::vector<ParamSet> *init) {
  const int n = int(robots.size());
  if (ids && int(ids->size()) != n)
    throw Error(fmt::format("{} robot ids for {} robots", ids->size(), n));
  if (init && int(init->size()) != n)
    throw Error(fmt::format("the parameters are given for {} robots, but there are {} robots",
                            init->size(), n));
  if (opts.steps < 1)
    throw Error("steps must be at least 1");
  if (!info.differentiable())
    throw Error("the module has no adjoint kernels; run autodiff before training");
  if (!opts.commands && info.readsCommands)
    throw Error("the experiment's controller or loss reads commands, but the trainer was given "
                "no commands block");
  std::vector<TrainResult> results(static_cast<size_t>(n));
  // The robots are held in slices of at most opts.sliceBytes of population
  // memory (and of the learning state a device keeps per parameter), so a
  // population of any size trains within the memory a few slices need.
  // Each robot learns alone, seeded by its id: the results do not depend on
  // the slicing.
  int64_t sliceBytes = 0;
  auto fits = [&](const Robot &r) {
    sliceBytes += trainSliceBytes(info, r);
    return sliceBytes <= opts.sliceBytes;
  };
  for (int s0 = 0; s0 < n;) {
    int s1 = s0 + 1;
    sliceBytes = 0;
    fits(robots[size_t(s0)]);
    while (s1 < n && fits(robots[size_t(s1)]))
      ++s1;
    trainSlice(info, device, robots, opts, ids, init, s0, s1, results);
    s0 = s1;
  }
  return results;
}

std::vector<TrainResult> train(const ModuleInfo &info, const codegen::Executable &exe,
                               const std::vector<Robot> &robots, const TrainOptions &opts,
                               const std::vector<uint64_t> *ids,
                               const std::vector<ParamSet> *init) {
  std::unique_ptr<TrainDevice> cpu = cpuDevice(info, exe, opts.threads);
  return train(info, *cpu, robots, opts, ids, init);
}

SimResult simulate(const ir::Module &m, const codegen::Executable &exe,
                   const std::vector<Robot> &robots,
                   const std::optional<std::vector<ParamSet>> &params, const SimOptions &opts) {
  ModuleInfo info(m);
  std::unique_ptr<TrainDevice> cpu = cpuDevice(info, exe, opts.threads);
  return simulate(info, *cpu, robots, params, opts);
}

SimResult simulate(const ModuleInfo &info, TrainDevice &device, const std::vector<Robot> &robots,
                   const std::optional<std::vector<ParamSet>> &params, const SimOptions &opts) {
  auto t0 = std::chrono::steady_clock::now();
  SimResult out;
  out.results = train(info, device, robots, opts, nullptr, params ? &*params : nullptr);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  int64_t steps = 0;
  for (const auto &r : out.results)
    steps += r.robotSteps;
  out.robotStepsPerSecond = out.seconds > 0 ? double(steps) / out.seconds : 0;
  return out;
}

std::vector<std::vector<double>> trajectory(const ModuleInfo &info, const codegen::Executable &exe,
                                            const Robot &robot, const ParamSet &params,
                                            const TrainOptions &opts, const std::string &field,
                                            const std::vector<int64_t> &times,
                                            std::vector<std::vector<double>> *outputs,
                                            const std::string &outputField) {
  Population pop(info, {robot});
  pop.initParams(0, opts.seed, 0);
  Rollout ro(info, exe);
  ro.runInit(pop, 0);
  pop.setParams(0, params);
  RolloutConfig rc = rolloutConfig(opts);
  CommandTable table; // a picture's commands: the grid's first case, else one draw
  if (opts.commands) {
    table = opts.commands->gridCases() > 0
                ? gridCommands(*opts.commands, opts.steps, 0)
                : drawCommands(*opts.commands, opts.steps, episodeStream(opts.seed, 0, 0, 0));
    bindCommands(rc, *opts.commands, table);
  }
  return ro.trajectory(pop, 0, rc, field, times, outputs, outputField);
}

InputGradients inputGradients(const ModuleInfo &info, const codegen::Executable &exe,
                              const Robot &robot, const ParamSet &params, const TrainOptions &opts,
                              const std::string &field) {
  if (opts.commands)
    throw Error("gradients with respect to the body and the initial state are not available for "
                "experiments with commands");
  int f = 0;
  while (f < int(info.fields.size()) && info.fields[f].name != field)
    ++f;
  if (f == int(info.fields.size()))
    throw Error("the module has no state field '" + field + "'");
  Population pop(info, {robot});
  pop.initParams(0, opts.seed, 0);
  Rollout ro(info, exe);
  ro.runInit(pop, 0);
  pop.setParams(0, params);
  RolloutOutcome o = ro.run(pop, 0, rolloutConfig(opts), /*backward=*/true);
  InputGradients g;
  g.valid = o.valid;
  g.error = o.error;
  g.loss = o.loss;
  if (o.valid) {
    g.initial = ro.initialAdjoint(f);
    g.body = ro.bodyAdjoints();
  }
  return g;
}

} // namespace evoc::runtime
