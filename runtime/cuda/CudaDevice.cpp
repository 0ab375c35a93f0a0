// The GPU training device: one CudaRollout per chunk of robots, the
// training records (TrainKernels.h) next to it, and the learning iteration
// as a launch sequence (forward, state check, backward, gradient norm), the
// optimiser step and the best-parameter copy as launches too.
#include "cuda/CudaDevice.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "codegen/cuda/DeviceApi.h"
#include "codegen/cuda/TrainKernels.h"
#include "core/ThreadPool.h"
#include "core/Train.h"
#include "cuda/CudaRollout.h"
#include "support/Error.h"

namespace evoc::runtime::cuda {

namespace cg = codegen::cuda;

namespace {

int64_t align64(int64_t n) { return (n + 63) & ~int64_t(63); }

/// What the GPU path does not run yet, as a sentence; empty when it runs.
std::string unsupported(const ModuleInfo &info, const TrainOptions &o) {
  if (o.commands || info.readsCommands)
    return "commands (MULTITASK.md)";
  if (o.batch > 1)
    return "a batch of episodes per iteration (learn.batch > 1)";
  if (o.continuation.active())
    return "continued episodes (learn.episodes)";
  if (!info.lossStep.empty())
    return "per-step losses";
  if (!info.init.empty())
    return "init kernels";
  return "";
}

/// Device bytes of the training records, mask, Adam moments and best
/// parameters of robots [first, first + n).
int64_t recordBytes(const Population &pop, int first, int n, const TrainOptions &o) {
  int64_t total = align64(int64_t(n) * int64_t(sizeof(cg::TrainRecord))) + align64(4 * int64_t(n));
  const int64_t fb = pop.f32() ? 4 : 8;
  for (int r = first; r < first + n; ++r) {
    const int64_t np = pop.layout(r).paramCount;
    total += align64(np * fb);
    if (o.optimizer.kind == OptimizerKind::Adam)
      total += align64(2 * np * 8);
  }
  return total;
}

std::vector<int64_t> chunkSizes(const Population &pop, int first, int n) {
  std::vector<int64_t> sizes;
  for (int r = first; r < first + n; ++r)
    sizes.insert(sizes.end(), pop.layout(r).sizes.begin(), pop.layout(r).sizes.end());
  return sizes;
}

class CudaBatch final : public DeviceBatch {
public:
  CudaBatch(const ModuleInfo &info, const cg::CudaExecutable &exe, Population &pop, int first,
            int n, const TrainOptions &o, const std::vector<uint64_t> *ids,
            const std::vector<ParamSet> *init)
      : info_(info), m_(*info.module), pop_(pop), first_(first), n_(n), opts_(o) {
    initialise(ids, init);
    std::vector<int64_t> sizes = chunkSizes(pop, first, n);
    ro_ = std::make_unique<CudaRollout>(exe, m_, n, sizes.data(), o.steps);
    dev_ = &ro_->device();
    allocateRecords();
    uploadRobots();
  }

  ~CudaBatch() override {
    if (records_)
      dev_->free(records_);
  }

  void iterate(int64_t, bool backward, const std::vector<char> &active,
               std::vector<IterationResult> &out) override {
    uploadMask(active);
    ro_->forward();
    ro_->launch(cg::kTrainCheck, records_, int64_t(mask_), opts_.steps);
    if (backward) {
      ro_->zeroGradients();
      ro_->backward();
      ro_->launch(cg::kTrainNorm, records_, int64_t(mask_), 0);
    }
    std::vector<cg::TrainRecord> rec(static_cast<size_t>(n_));
    dev_->download(rec.data(), records_, rec.size() * sizeof(cg::TrainRecord));
    std::vector<double> loss = losses();
    for (int i = 0; i < n_; ++i) {
      if (!active[size_t(i)])
        continue;
      IterationResult &res = out[size_t(i)];
      res = IterationResult{};
      res.stepsRun = opts_.steps - 1;
      res.memory = memory(first_ + i);
      res.loss = loss[size_t(i)];
      const cg::TrainRecord &R = rec[size_t(i)];
      std::string why;
      if (R.badTime >= 0) {
        why = stateError(R);
        res.stepsRun = int64_t(R.badTime); // as the CPU, which stops there
      } else if (!std::isfinite(res.loss))
        why = "the loss is NaN or infinite";
      else if (backward && R.gradBad > 0)
        why = "the gradient is NaN or infinite";
      if (!why.empty()) {
        res.valid = false;
        res.error = fmt::format("robot {}: {}", first_ + i, why);
      }
      res.gradNorm = backward ? R.gradNorm : 0;
    }
  }

  void update(const std::vector<char> &active) override {
    if (std::none_of(active.begin(), active.end(), [](char c) { return c != 0; }))
      return;
    uploadMask(active);
    int kind = cg::kNormalizedStep;
    if (opts_.optimizer.kind == OptimizerKind::Adam)
      kind = cg::kAdam;
    else if (opts_.optimizer.kind == OptimizerKind::Sgd)
      kind = cg::kSgd;
    ro_->launch(cg::kTrainUpdate, records_, int64_t(mask_), kind);
  }

  void keepBest(const std::vector<char> &keep) override {
    if (std::none_of(keep.begin(), keep.end(), [](char c) { return c != 0; }))
      return;
    uploadMask(keep);
    ro_->launch(cg::kTrainKeepBest, records_, int64_t(mask_), 0);
  }

  ParamSet params(int i) override {
    downloadArena(i, Arena::Param);
    return pop_.params(first_ + i);
  }

  ParamSet bestParams(int i) override {
    // The best slot holds the parameters in buffer order, as the Param arena.
    const int r = first_ + i;
    const int64_t np = pop_.layout(r).paramCount;
    dev_->download(pop_.arena(r, Arena::Param), best_[size_t(i)],
                   size_t(np * (pop_.f32() ? 4 : 8)));
    return pop_.params(r);
  }

  ParamSet grads(int i) override {
    downloadArena(i, Arena::Grad);
    return pop_.grads(first_ + i);
  }

private:
  // Robot i's buffers of a persistent arena, device -> its host copy in pop_.
  void downloadArena(int i, Arena a) {
    for (size_t b = 0; b < m_.buffers.size(); ++b)
      if (info_.arena[b] == a)
        ro_->download(int(b), i, pop_.buffer(first_ + i, int(b)));
  }

  // Seeded weights, then `init` where given, on the host (no init kernels:
  // refused by the device before this).
  void initialise(const std::vector<uint64_t> *ids, const std::vector<ParamSet> *init) {
    ThreadPool pool(std::min(opts_.threads > 0 ? opts_.threads : defaultThreads(), n_));
    pool.parallelFor(n_, [&](int i, int) {
      const int r = first_ + i;
      pop_.initParams(r, opts_.seed, ids ? (*ids)[size_t(r)] : uint64_t(r));
      if (init)
        pop_.setParams(r, (*init)[size_t(r)]);
    });
  }

  void allocateRecords() {
    const int64_t bytes = recordBytes(pop_, first_, n_, opts_);
    records_ = dev_->alloc(size_t(bytes));
    dev_->zero(records_, size_t(bytes)); // Adam's moments start at zero
    mask_ = records_ + uint64_t(align64(int64_t(n_) * int64_t(sizeof(cg::TrainRecord))));
    uint64_t top = mask_ + uint64_t(align64(4 * int64_t(n_)));
    std::vector<cg::TrainRecord> rec(static_cast<size_t>(n_));
    const bool adam = opts_.optimizer.kind == OptimizerKind::Adam;
    for (int i = 0; i < n_; ++i) {
      const int64_t np = pop_.layout(first_ + i).paramCount;
      cg::TrainRecord &R = rec[size_t(i)];
      R.step = opts_.optimizer.step;
      R.lr = opts_.optimizer.lr;
      R.beta1 = opts_.optimizer.beta1;
      R.beta2 = opts_.optimizer.beta2;
      R.eps = opts_.optimizer.eps;
      R.stateLimit = opts_.stateLimit;
      R.best = top;
      best_.push_back(top);
      top += uint64_t(align64(np * (pop_.f32() ? 4 : 8)));
      if (adam) {
        R.moments = top;
        top += uint64_t(align64(2 * np * 8));
      }
    }
    dev_->upload(records_, rec.data(), rec.size() * sizeof(cg::TrainRecord));
  }

  void uploadMask(const std::vector<char> &on) {
    std::vector<int32_t> m(static_cast<size_t>(n_));
    for (int i = 0; i < n_; ++i)
      m[size_t(i)] = on[size_t(i)] ? 1 : 0;
    dev_->upload(mask_, m.data(), m.size() * 4);
  }

  // Bodies and parameters buffer by buffer (one copy for the chunk each);
  // x[0] of every state field robot by robot, from its initial state.
  void uploadRobots() {
    std::vector<const void *> host(static_cast<size_t>(n_));
    for (size_t b = 0; b < m_.buffers.size(); ++b) {
      Arena a = info_.arena[b];
      if (a != Arena::Body && a != Arena::Param)
        continue;
      for (int i = 0; i < n_; ++i)
        host[size_t(i)] = pop_.buffer(first_ + i, int(b));
      ro_->uploadAll(int(b), host.data());
    }
    std::vector<std::byte> snap;
    for (int i = 0; i < n_; ++i) {
      const int r = first_ + i;
      const RobotLayout &L = pop_.layout(r);
      snap.assign(size_t(L.stateBytes()), std::byte{0});
      pop_.initialState(r, snap.data(), opts_.groundHeight, opts_.upAxis,
                        opts_.terrain.empty() ? nullptr : &opts_.terrain);
      for (size_t f = 0; f < info_.fields.size(); ++f) {
        const StateField &F = info_.fields[f];
        const std::byte *x0 = snap.data() + L.fieldOffset[f];
        if (F.stepWrites >= 0) {
          ro_->upload(F.stepReads >= 0 ? F.stepReads : F.stepWrites, i, x0);
          continue;
        }
        for (size_t b = 0; b < m_.buffers.size(); ++b) // a state no step writes: as is
          if (info_.fieldOf[b] == int(f) && m_.buffers[b].role == ir::Role::State)
            ro_->upload(int(b), i, x0);
      }
    }
  }

  std::vector<double> losses() {
    std::vector<double> out(static_cast<size_t>(n_), std::numeric_limits<double>::quiet_NaN());
    if (info_.lossOutput < 0)
      return out;
    std::vector<double> d(static_cast<size_t>(n_));
    std::vector<float> f(static_cast<size_t>(n_));
    std::vector<void *> host(static_cast<size_t>(n_));
    for (int i = 0; i < n_; ++i)
      host[size_t(i)] = pop_.f32() ? static_cast<void *>(&f[size_t(i)]) : &d[size_t(i)];
    ro_->downloadAll(info_.lossOutput, host.data());
    for (int i = 0; i < n_; ++i)
      out[size_t(i)] = pop_.f32() ? double(f[size_t(i)]) : d[size_t(i)];
    return out;
  }

  // The CPU rollout's sentence for a state beyond the limit.
  std::string stateError(const cg::TrainRecord &R) const {
    const std::string &name = ro_->fieldName(int(R.badField));
    const auto t = int64_t(R.badTime);
    if (!std::isfinite(R.badValue))
      return fmt::format("the state '{}' is NaN or infinite at t = {}", name, t);
    return fmt::format("the simulation blew up: the state '{}' reached {:.3g} at t = {}, beyond "
                       "world.state_limit = {:.3g} (a smaller world.dt or softer springs keep "
                       "it stable)",
                       name, R.badValue, t, opts_.stateLimit);
  }

  // The GPU keeps every state: a full tape of T snapshots.
  RolloutMemory memory(int r) const {
    RolloutMemory M;
    M.stateBytes = pop_.layout(r).stateBytes();
    M.storedStates = opts_.steps;
    M.stateStoreBytes = M.fullTapeBytes = opts_.steps * M.stateBytes;
    return M;
  }

  const ModuleInfo &info_;
  const ir::Module &m_;
  Population &pop_;
  int first_, n_;
  TrainOptions opts_;
  std::unique_ptr<CudaRollout> ro_;
  cg::DeviceApi *dev_ = nullptr;
  uint64_t records_ = 0, mask_ = 0;
  std::vector<uint64_t> best_;
};

class CudaDevice final : public TrainDevice {
public:
  CudaDevice(const ModuleInfo &info, const cg::CudaExecutable &exe) : info_(info), exe_(exe) {}

  std::string name() const override { return exe_.deviceName(); }

  int chunk(const Population &pop, int first, const TrainOptions &o) const override {
    const cg::DeviceMemory mem = exe_.device().memory();
    const int n = pop.size() - first;
    if (mem.free < 0)
      return n;
    // Leave a tenth of the free memory (and 64 MiB) for the driver and the
    // module; the most robots from `first` on that fit (bytes grow with the
    // count, so a binary search finds it).
    const int64_t budget = mem.free - std::max<int64_t>(mem.free / 10, int64_t(64) << 20);
    if (cudaTrainBytes(info_, pop, first, n, o) <= budget)
      return n;
    int count = 1, hi = n; // fits(count) or count == 1; !fits(hi)
    while (hi - count > 1) {
      int mid = count + (hi - count) / 2;
      if (cudaTrainBytes(info_, pop, first, mid, o) <= budget)
        count = mid;
      else
        hi = mid;
    }
    return count; // one robot that does not fit is refused by CudaRollout, with the numbers
  }

  void check(const TrainOptions &o) const override {
    if (std::string what = unsupported(info_, o); !what.empty())
      throw Error("--backend cuda does not train experiments with " + what +
                  " yet; use --backend cpu (the default)");
  }

  std::unique_ptr<DeviceBatch> open(Population &pop, int first, int n, const TrainOptions &o,
                                    const std::vector<uint64_t> *ids,
                                    const std::vector<ParamSet> *init) override {
    check(o);
    return std::make_unique<CudaBatch>(info_, exe_, pop, first, n, o, ids, init);
  }

private:
  const ModuleInfo &info_;
  const cg::CudaExecutable &exe_;
};

} // namespace

int64_t cudaTrainBytes(const ModuleInfo &info, const Population &pop, int first, int count,
                       const TrainOptions &o) {
  std::vector<int64_t> sizes = chunkSizes(pop, first, count);
  return CudaRollout::deviceBytesNeeded(*info.module, count, sizes.data(), o.steps) +
         recordBytes(pop, first, count, o);
}

std::unique_ptr<TrainDevice> cudaDevice(const ModuleInfo &info,
                                        const codegen::cuda::CudaExecutable &exe) {
  return std::make_unique<CudaDevice>(info, exe);
}

} // namespace evoc::runtime::cuda
