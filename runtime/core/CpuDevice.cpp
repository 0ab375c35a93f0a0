// The CPU device: a thread pool over the robots of a batch, one Rollout
// workspace per thread, per robot its optimiser and carried episode states.
#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

#include <fmt/format.h>

#include "core/Commands.h"
#include "core/Device.h"
#include "core/Optimizer.h"
#include "core/ThreadPool.h"
#include "core/Train.h"

namespace evoc::runtime {

void initRobot(Population &pop, int r, Rollout &ro, uint64_t seed, uint64_t id,
               const ParamSet *init) {
  pop.initParams(r, seed, id);
  ro.runInit(pop, r);
  if (init)
    pop.setParams(r, *init);
}

namespace {

class CpuBatch final : public DeviceBatch {
public:
  CpuBatch(const ModuleInfo &info, const codegen::Executable &exe, int threads, Population &pop,
           int first, int n, const TrainOptions &o, const std::vector<uint64_t> *ids,
           const std::vector<ParamSet> *init)
      : info_(info), exe_(exe), pop_(pop), first_(first), opts_(o), rc_(rolloutConfig(o)),
        pool_(std::min(threads > 0 ? threads : defaultThreads(), std::max(n, 1))),
        ws_(size_t(pool_.size())), robots_(size_t(n)), order_(size_t(n)) {
    // Larger robots first: the threads then finish together instead of one
    // waiting on the last large robot (a robot's cost grows with its
    // weights and its state). Every robot computes alone, so the order
    // changes no result.
    std::iota(order_.begin(), order_.end(), 0);
    auto cost = [&](int i) {
      const RobotLayout &L = pop_.layout(first_ + i);
      return L.paramCount + L.stateBytes() / 8;
    };
    std::stable_sort(order_.begin(), order_.end(), [&](int a, int b) { return cost(a) > cost(b); });
    pool_.parallelFor(n, [&](int i, int w) {
      const int r = first_ + i;
      PerRobot &R = robots_[size_t(i)];
      R.id = ids ? (*ids)[size_t(r)] : uint64_t(r);
      initRobot(pop_, r, rollout(w), opts_.seed, R.id, init ? &(*init)[size_t(r)] : nullptr);
      R.opt = std::make_unique<Optimizer>(opts_.optimizer, pop_.layout(r).paramCount);
      R.carry = EpisodeCarry(opts_.continuation, std::max<int64_t>(1, opts_.batch),
                             pop_.layout(r).stateBytes());
    });
  }

  void iterate(int64_t it, bool backward, const std::vector<char> &active,
               std::vector<IterationResult> &out) override {
    pool_.parallelFor(int(robots_.size()), [&](int j, int w) {
      const int i = order_[size_t(j)];
      if (!active[size_t(i)])
        return;
      const int r = first_ + i;
      RolloutOutcome o = episodes(rollout(w), i, it, backward);
      IterationResult &res = out[size_t(i)];
      res = IterationResult{};
      static_cast<RolloutOutcome &>(res) = std::move(o);
      if (!res.valid || !backward)
        return;
      const std::byte *g = pop_.arena(r, Arena::Grad);
      double ss = 0;
      for (int64_t j = 0; j < pop_.layout(r).paramCount; ++j) {
        double gj = loadF(g, j, pop_.f32());
        ss += gj * gj;
      }
      res.gradNorm = std::sqrt(ss);
    });
  }

  void update(const std::vector<char> &active) override {
    pool_.parallelFor(int(robots_.size()), [&](int i, int) {
      if (active[size_t(i)])
        robots_[size_t(i)].opt->update(pop_.arena(first_ + i, Arena::Param),
                                       pop_.arena(first_ + i, Arena::Grad), pop_.f32());
    });
  }

  void keepBest(const std::vector<char> &keep) override {
    for (size_t i = 0; i < robots_.size(); ++i)
      if (keep[i])
        robots_[i].best = pop_.params(first_ + int(i));
  }

  ParamSet params(int i) override { return pop_.params(first_ + i); }
  ParamSet bestParams(int i) override { return robots_[size_t(i)].best; }
  ParamSet grads(int i) override { return pop_.grads(first_ + i); }

private:
  struct PerRobot {
    uint64_t id = 0;
    std::unique_ptr<Optimizer> opt;
    EpisodeCarry carry;
    ParamSet best;
    std::vector<double> gsum; // the batch's gradient sum
  };

  Rollout &rollout(int w) {
    if (!ws_[size_t(w)])
      ws_[size_t(w)] = std::make_unique<Rollout>(info_, exe_);
    return *ws_[size_t(w)];
  }

  // One iteration's episodes of robot i: the mean loss, the mean gradient
  // left in the Grad arena (backward) or nothing (forward only).
  RolloutOutcome episodes(Rollout &ro, int i, int64_t iter, bool backward) {
    const int r = first_ + i;
    PerRobot &R = robots_[size_t(i)];
    const int64_t batch = std::max<int64_t>(1, opts_.batch);
    const int64_t np = pop_.layout(r).paramCount;
    RolloutOutcome mean;
    for (int64_t b = 0; b < batch; ++b) {
      RolloutConfig rcb = rc_;
      CommandTable table;
      if (opts_.commands) {
        table =
            drawCommands(*opts_.commands, opts_.steps, episodeStream(opts_.seed, R.id, iter, b));
        bindCommands(rcb, *opts_.commands, table);
      }
      R.carry.bind(rcb, iter, b);
      RolloutOutcome o = ro.run(pop_, r, rcb, backward);
      if (batch == 1 || !o.valid)
        return o;
      if (b == 0) {
        mean = o;
        mean.loss = 0;
        mean.terms.assign(o.terms.size(), 0.0);
        R.gsum.assign(size_t(np), 0.0);
      } else
        mean.stepsRun += o.stepsRun;
      mean.loss += o.loss / double(batch);
      for (size_t k = 0; k < o.terms.size() && k < mean.terms.size(); ++k)
        mean.terms[k] += o.terms[k] / double(batch);
      if (backward) {
        const std::byte *g = pop_.arena(r, Arena::Grad);
        for (int64_t j = 0; j < np; ++j)
          R.gsum[size_t(j)] += loadF(g, j, pop_.f32());
      }
    }
    if (backward) {
      std::byte *g = pop_.arena(r, Arena::Grad);
      for (int64_t j = 0; j < np; ++j)
        storeF(g, j, R.gsum[size_t(j)] / double(batch), pop_.f32());
    }
    return mean;
  }

  const ModuleInfo &info_;
  const codegen::Executable &exe_;
  Population &pop_;
  int first_;
  TrainOptions opts_;
  RolloutConfig rc_;
  ThreadPool pool_;
  std::vector<std::unique_ptr<Rollout>> ws_;
  std::vector<PerRobot> robots_;
  std::vector<int> order_; // the robots by decreasing cost: iterate()'s work order
};

class CpuDevice final : public TrainDevice {
public:
  CpuDevice(const ModuleInfo &info, const codegen::Executable &exe, int threads)
      : info_(info), exe_(exe), threads_(threads) {}
  std::string name() const override {
    return fmt::format("cpu ({} threads)", threads_ > 0 ? threads_ : defaultThreads());
  }
  int chunk(const Population &pop, int first, const TrainOptions &) const override {
    return pop.size() - first;
  }
  std::unique_ptr<DeviceBatch> open(Population &pop, int first, int n, const TrainOptions &o,
                                    const std::vector<uint64_t> *ids,
                                    const std::vector<ParamSet> *init) override {
    return std::make_unique<CpuBatch>(info_, exe_, o.threads > 0 ? o.threads : threads_, pop, first,
                                      n, o, ids, init);
  }

private:
  const ModuleInfo &info_;
  const codegen::Executable &exe_;
  int threads_;
};

} // namespace

std::unique_ptr<TrainDevice> cpuDevice(const ModuleInfo &info, const codegen::Executable &exe,
                                       int threads) {
  return std::make_unique<CpuDevice>(info, exe, threads);
}

} // namespace evoc::runtime
