// Batched training of one fixed body and its validation grid.
#include "core/FixedTrain.h"

#include <cmath>

#include "core/Commands.h"
#include "core/Population.h"
#include "core/Rollout.h"
#include "core/ThreadPool.h"
#include "support/Error.h"

namespace evoc::runtime {

FixedTrainer::FixedTrainer(const ModuleInfo &info, const codegen::Executable &exe,
                           const Robot &robot, const TrainOptions &opts,
                           const codegen::Executable *lanesExe, int lanes)
    : info_(info), exe_(exe), opts_(opts), lanesExe_(lanes > 1 ? lanesExe : nullptr),
      lanes_(lanesExe_ ? lanes : 1) {
  if (!info.differentiable())
    throw Error("the module has no adjoint kernels; run autodiff before training");
  if (info.readsCommands && !opts.commands)
    throw Error("the experiment reads commands, but the trainer was given no commands block");
  opts_.batch = std::max<int64_t>(1, opts.batch);
  int threads = opts.threads > 0 ? opts.threads : defaultThreads();
  int64_t cases = opts.commands ? opts.commands->gridCases() : 0;
  threads = int(std::max<int64_t>(1, std::min<int64_t>(threads, std::max(opts_.batch, cases))));
  pool_ = std::make_unique<ThreadPool>(threads);
  copies_ = std::max(int(opts_.batch), pool_->size());
  pop_ = std::make_unique<Population>(info, std::vector<Robot>(size_t(copies_), robot));
  ws_.resize(size_t(pool_->size()));
  lanesWs_.resize(size_t(pool_->size()));
  for (int r = 0; r < copies_; ++r)
    pop_->initParams(r, opts.seed, 0);
  {
    Rollout ro(info, exe);
    for (int r = 0; r < copies_; ++r)
      ro.runInit(*pop_, r);
  }
  opt_ = std::make_unique<Optimizer>(opts.optimizer, pop_->layout(0).paramCount);
  carry_ = EpisodeCarry(opts.continuation, opts_.batch, pop_->layout(0).stateBytes());
}

FixedTrainer::~FixedTrainer() = default;

ParamSet FixedTrainer::params() const { return pop_->params(0); }

void FixedTrainer::setParams(const ParamSet &p) {
  pop_->checkParams(0, p);
  pop_->setParams(0, p);
}

void FixedTrainer::broadcast() {
  ParamSet p = pop_->params(0);
  for (int r = 1; r < copies_; ++r)
    pop_->setParams(r, p);
}

BatchStep FixedTrainer::iterate(int64_t it) {
  broadcast();
  const int B = int(opts_.batch);
  std::vector<RolloutOutcome> outs(static_cast<size_t>(B));
  const RolloutConfig base = rolloutConfig(opts_);
  // Episode b's config; its command table outlives the rollout, which reads it.
  auto episode = [&](int b, RolloutConfig &rc, CommandTable &table) {
    rc = base;
    if (opts_.commands) {
      table = drawCommands(*opts_.commands, opts_.steps, episodeStream(opts_.seed, 0, it, b));
      bindCommands(rc, *opts_.commands, table);
    }
    carry_.bind(rc, it, b);
  };
  // Items: the groups of lanes_ episodes in lanes, then one item per episode left.
  const int groups = lanesExe_ ? B / lanes_ : 0;
  const int first = groups * lanes_; // the first episode run on its own
  pool_->parallelFor(groups + (B - first), [&](int item, int w) {
    if (item >= groups) {
      const int b = first + (item - groups);
      if (!ws_[size_t(w)])
        ws_[size_t(w)] = std::make_unique<Rollout>(info_, exe_);
      RolloutConfig rc;
      CommandTable table;
      episode(b, rc, table);
      outs[size_t(b)] = ws_[size_t(w)]->run(*pop_, b, rc, true);
      return;
    }
    if (!lanesWs_[size_t(w)])
      lanesWs_[size_t(w)] = std::make_unique<Rollout>(info_, *lanesExe_, lanes_);
    Rollout &ro = *lanesWs_[size_t(w)];
    const int b0 = item * lanes_;
    std::vector<RolloutConfig> rcs(static_cast<size_t>(lanes_));
    std::vector<CommandTable> tables(static_cast<size_t>(lanes_));
    for (int l = 0; l < lanes_; ++l)
      episode(b0 + l, rcs[size_t(l)], tables[size_t(l)]);
    std::vector<RolloutOutcome> lane = ro.runLanes(*pop_, b0, rcs, true, b0);
    bool valid = true;
    for (int l = 0; l < lanes_; ++l) {
      valid &= lane[size_t(l)].valid;
      outs[size_t(b0 + l)] = std::move(lane[size_t(l)]);
    }
    for (int l = 0; valid && l < lanes_; ++l) { // episode b's gradient where run() leaves it
      std::byte *gb = pop_->arena(b0 + l, Arena::Grad);
      const std::vector<double> g = ro.laneGradient(l);
      for (size_t j = 0; j < g.size(); ++j)
        storeF(gb, int64_t(j), g[j], pop_->f32());
    }
  });
  BatchStep s;
  const bool f32 = pop_->f32();
  const int64_t np = pop_->layout(0).paramCount;
  std::vector<double> g(size_t(np), 0.0);
  for (int b = 0; b < B; ++b) { // in episode order: the sums do not depend on threads
    const RolloutOutcome &o = outs[size_t(b)];
    s.robotSteps += o.stepsRun;
    if (!o.valid) {
      s.valid = false;
      s.error = "episode " + std::to_string(b) + ": " + o.error;
      return s;
    }
    s.loss += o.loss / B;
    if (s.terms.empty())
      s.terms.assign(o.terms.size(), 0.0);
    for (size_t k = 0; k < o.terms.size(); ++k)
      s.terms[k] += o.terms[k] / B;
    const std::byte *gb = pop_->arena(b, Arena::Grad);
    for (int64_t j = 0; j < np; ++j)
      g[size_t(j)] += loadF(gb, j, f32);
  }
  std::byte *g0 = pop_->arena(0, Arena::Grad);
  double ss = 0;
  for (int64_t j = 0; j < np; ++j) {
    double v = g[size_t(j)] / B;
    ss += v * v;
    storeF(g0, j, v, f32);
  }
  s.gradNorm = std::sqrt(ss);
  opt_->update(pop_->arena(0, Arena::Param), g0, f32);
  return s;
}

Validation FixedTrainer::validate() {
  Validation v;
  if (!opts_.commands || opts_.commands->gridCases() == 0)
    return v;
  broadcast();
  const int n = int(opts_.commands->gridCases());
  v.cases.resize(size_t(n));
  const RolloutConfig base = rolloutConfig(opts_);
  pool_->parallelFor(n, [&](int c, int w) {
    if (!ws_[size_t(w)])
      ws_[size_t(w)] = std::make_unique<Rollout>(info_, exe_);
    CommandTable t = gridCommands(*opts_.commands, opts_.steps, c);
    RolloutConfig rc = base;
    bindCommands(rc, *opts_.commands, t);
    RolloutOutcome o = ws_[size_t(w)]->run(*pop_, w, rc, false);
    ValidationCase &vc = v.cases[size_t(c)];
    vc.commands.assign(t.values.begin(),
                       t.values.begin() + std::ptrdiff_t(opts_.commands->columns()));
    vc.valid = o.valid;
    vc.error = o.error;
    vc.loss = o.loss;
    vc.terms = o.terms;
  });
  for (const auto &c : v.cases) {
    if (!c.valid) {
      v.valid = false;
      continue;
    }
    v.meanLoss += c.loss / n;
    if (v.meanTerms.empty())
      v.meanTerms.assign(c.terms.size(), 0.0);
    for (size_t k = 0; k < c.terms.size(); ++k)
      v.meanTerms[k] += c.terms[k] / n;
  }
  return v;
}

std::vector<std::vector<double>> FixedTrainer::caseTrajectory(int64_t c, const std::string &field,
                                                              const std::vector<int64_t> &times) {
  if (!opts_.commands)
    throw Error("the experiment has no commands, so no validation cases");
  broadcast();
  CommandTable t = gridCommands(*opts_.commands, opts_.steps, c);
  RolloutConfig rc = rolloutConfig(opts_);
  bindCommands(rc, *opts_.commands, t);
  if (!ws_[0])
    ws_[0] = std::make_unique<Rollout>(info_, exe_);
  return ws_[0]->trajectory(*pop_, 0, rc, field, times);
}

} // namespace evoc::runtime
