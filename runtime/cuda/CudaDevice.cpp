// The GPU training device: one CudaRollout per chunk of robots, the
// training records (TrainKernels.h) next to it, and the learning iteration
// as a launch sequence per episode (commands and x[0], forward, state check,
// backward, gradient norm, the batch's gradient sum), the optimiser step and
// the best-parameter copy as launches too.
#include "cuda/CudaDevice.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "codegen/cuda/DeviceApi.h"
#include "codegen/cuda/TrainKernels.h"
#include "core/Commands.h"
#include "core/Device.h"
#include "core/Population.h"
#include "core/Rollout.h"
#include "core/ThreadPool.h"
#include "core/Train.h"
#include "cuda/CudaRollout.h"
#include "ir/Names.h"

namespace evoc::cuda {

namespace cg = codegen::cuda;
using namespace runtime;

namespace {

int64_t align64(int64_t n) { return (n + 63) & ~int64_t(63); }

int64_t batchOf(const TrainOptions &o) { return std::max<int64_t>(1, o.batch); }

/// The command tables' layout of the experiment's episodes (none without commands).
CommandLayout commandLayout(const ModuleInfo &info, const TrainOptions &o) {
  CommandLayout c;
  if (!o.commands || !info.readsCommands)
    return c;
  c.columns = o.commands->columns();
  c.rows = commandRows(*o.commands, o.steps);
  c.period = o.commands->period;
  return c;
}

/// Bytes of one snapshot of robot r's tape fields (the fields the step
/// reads or writes, in the rollout's order): what a continued episode carries.
int64_t snapshotBytes(const ModuleInfo &info, const Population &pop, int r) {
  int64_t total = 0;
  for (const StateField &F : info.fields)
    if (F.taped()) {
      const int b = F.tape();
      total += pop.layout(r).count[size_t(b)] * info.elemBytes(b);
    }
  return total;
}

/// Device bytes of the training records, mask, Adam moments, best
/// parameters, a batch's gradient sums and the carried episode states of
/// robots [first, first + n).
int64_t recordBytes(const ModuleInfo &info, const Population &pop, int first, int n,
                    const TrainOptions &o) {
  int64_t total = align64(int64_t(n) * int64_t(sizeof(cg::TrainRecord))) + align64(4 * int64_t(n));
  const int64_t fb = pop.f32() ? 4 : 8;
  for (int r = first; r < first + n; ++r) {
    const int64_t np = pop.layout(r).paramCount;
    total += align64(np * fb);
    if (o.optimizer.kind == OptimizerKind::Adam)
      total += align64(2 * np * 8);
    if (batchOf(o) > 1)
      total += align64(np * 8);
    if (o.continuation.active())
      total += align64((batchOf(o) + 1) * snapshotBytes(info, pop, r));
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
      : info_(info), m_(*info.module), exe_(exe), pop_(pop), first_(first), n_(n), opts_(o),
        batch_(batchOf(o)) {
    for (int i = 0; i < n; ++i)
      ids_.push_back(ids ? (*ids)[size_t(first + i)] : uint64_t(first + i));
    initialise(init);
    std::vector<int64_t> sizes = chunkSizes(pop, first, n);
    ro_ = std::make_unique<CudaRollout>(exe, m_, n, sizes.data(), o.steps, commandLayout(info, o));
    dev_ = &ro_->device();
    allocateRecords();
    uploadRobots();
    if (opts_.continuation.active()) { // every robot's x[0], for the episodes that start afresh
      filled_.assign(size_t(batch_), 0);
      ro_->launch(cg::kTrainCarry, records_, 0, carryArg(cg::kSaveFirst, batch_));
    }
  }

  ~CudaBatch() override {
    if (records_)
      dev_->free(records_);
  }

  // CpuBatch::episodes on every robot at once: episode after episode, each
  // one forward (and backward) launch sequence over the chunk; the first
  // invalid episode of a robot is its verdict, else the mean loss and the
  // mean gradient (summed in double on the device).
  void iterate(int64_t it, bool backward, const std::vector<char> &active,
               std::vector<IterationResult> &out) override {
    uploadMask(active);
    std::vector<std::vector<cg::TrainRecord>> rec(static_cast<size_t>(batch_));
    std::vector<std::vector<double>> loss(static_cast<size_t>(batch_));
    std::vector<std::vector<std::vector<double>>> terms(static_cast<size_t>(batch_));
    for (int64_t b = 0; b < batch_; ++b) {
      startEpisode(it, b);
      ro_->forward();
      if (opts_.continuation.active())
        ro_->launch(cg::kTrainCarry, records_, int64_t(mask_), carryArg(cg::kSaveLast, b));
      ro_->launch(cg::kTrainCheck, records_, int64_t(mask_), opts_.steps);
      if (backward) {
        ro_->zeroGradients();
        ro_->backward();
        ro_->launch(cg::kTrainNorm, records_, int64_t(mask_), 0);
        if (batch_ > 1)
          ro_->launch(cg::kTrainAccumulate, records_, int64_t(mask_), b);
      }
      rec[size_t(b)] = records();
      loss[size_t(b)] = losses();
      terms[size_t(b)] = lossTerms();
    }
    std::vector<cg::TrainRecord> last = rec.back();
    if (backward && batch_ > 1) { // the mean gradient and its norm
      ro_->launch(cg::kTrainMean, records_, int64_t(mask_), batch_);
      ro_->launch(cg::kTrainNorm, records_, int64_t(mask_), 0);
      last = records();
    }
    for (int i = 0; i < n_; ++i) {
      if (!active[size_t(i)])
        continue;
      IterationResult &res = out[size_t(i)];
      res = IterationResult{};
      res.memory = memory(first_ + i);
      for (int64_t b = 0; b < batch_ && res.valid; ++b) {
        const cg::TrainRecord &R = rec[size_t(b)][size_t(i)];
        const double l = loss[size_t(b)][size_t(i)];
        std::string why;
        int64_t steps = opts_.steps - 1;
        if (R.badTime >= 0) {
          why = stateError(R);
          steps = int64_t(R.badTime); // as the CPU, which stops there
        } else if (!std::isfinite(l))
          why = "the loss is NaN or infinite";
        else if (backward && R.gradBad > 0)
          why = "the gradient is NaN or infinite";
        if (!why.empty()) { // the CPU returns this episode's outcome
          res.valid = false;
          res.error = fmt::format("robot {}: {}", first_ + i, why);
          res.stepsRun = steps;
          res.loss = batch_ == 1 ? l : 0;
          break;
        }
        res.stepsRun += steps;
        res.loss = batch_ == 1 ? l : res.loss + l / double(batch_);
        const std::vector<double> &t =
            terms[size_t(b)][size_t(i)]; // the episodes' mean, as the CPU
        res.terms.resize(t.size(), 0.0);
        for (size_t k = 0; k < t.size(); ++k)
          res.terms[k] = batch_ == 1 ? t[k] : res.terms[k] + t[k] / double(batch_);
      }
      if (res.valid && backward)
        res.gradNorm = last[size_t(i)].gradNorm;
    }
  }

  void update(const std::vector<char> &active) override {
    if (std::none_of(active.begin(), active.end(), [](char c) { return c != 0; }))
      return;
    uploadMask(active);
    // The update kernel switches on the kind's value (support/Optimizers.h).
    ro_->launch(cg::kTrainUpdate, records_, int64_t(mask_), int64_t(opts_.optimizer.kind));
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

  // Seeded weights, the module's Init kernels (run by the CUDA executable,
  // one robot at a time), then `init` where given: initRobot, as the CPU device.
  void initialise(const std::vector<ParamSet> *init) {
    if (!info_.init.empty()) {
      Rollout ro(info_, exe_);
      for (int i = 0; i < n_; ++i)
        initRobot(pop_, first_ + i, ro, opts_.seed, ids_[size_t(i)],
                  init ? &(*init)[size_t(first_ + i)] : nullptr);
      return;
    }
    ThreadPool pool(std::min(opts_.threads > 0 ? opts_.threads : defaultThreads(), n_));
    pool.parallelFor(n_, [&](int i, int) {
      const int r = first_ + i;
      pop_.initParams(r, opts_.seed, ids_[size_t(i)]);
      if (init)
        pop_.setParams(r, (*init)[size_t(r)]);
    });
  }

  // Episode b of iteration `it`: its commands (drawn per robot from the
  // stream the CPU device draws them from) and its x[0] (carried from the
  // previous iteration's episode b, or the robot's initial state).
  void startEpisode(int64_t it, int64_t b) {
    if (opts_.commands && info_.readsCommands) {
      std::vector<CommandTable> tables(static_cast<size_t>(n_));
      std::vector<const double *> values(static_cast<size_t>(n_));
      for (int i = 0; i < n_; ++i) {
        tables[size_t(i)] = drawCommands(*opts_.commands, opts_.steps,
                                         episodeStream(opts_.seed, ids_[size_t(i)], it, b));
        values[size_t(i)] = tables[size_t(i)].values.data();
      }
      ro_->uploadCommands(values.data());
    }
    if (!opts_.continuation.active())
      return;
    const bool carried = filled_[size_t(b)] && opts_.continuation.continues(it, b);
    ro_->launch(cg::kTrainCarry, records_, int64_t(mask_),
                carryArg(cg::kLoadFirst, carried ? b : batch_));
    filled_[size_t(b)] = 1;
  }

  static int64_t carryArg(cg::TrainCarry mode, int64_t snapshot) {
    return int64_t(mode) * (int64_t(1) << 32) + snapshot;
  }

  std::vector<cg::TrainRecord> records() {
    std::vector<cg::TrainRecord> rec(static_cast<size_t>(n_));
    dev_->download(rec.data(), records_, rec.size() * sizeof(cg::TrainRecord));
    return rec;
  }

  void allocateRecords() {
    const int64_t bytes = recordBytes(info_, pop_, first_, n_, opts_);
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
      R.steps = double(opts_.steps);
      R.best = top;
      best_.push_back(top);
      top += uint64_t(align64(np * (pop_.f32() ? 4 : 8)));
      if (adam) {
        R.moments = top;
        top += uint64_t(align64(2 * np * 8));
      }
      if (batch_ > 1) {
        R.gsum = top;
        top += uint64_t(align64(np * 8));
      }
      if (opts_.continuation.active()) {
        R.carry = top;
        top += uint64_t(align64((batch_ + 1) * snapshotBytes(info_, pop_, first_ + i)));
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
          ro_->upload(F.tape(), i, x0);
          continue;
        }
        for (size_t b = 0; b < m_.buffers.size(); ++b) // a state no step writes: as is
          if (info_.fieldOf[b] == int(f) && m_.buffers[b].role == ir::Role::State)
            ro_->upload(int(b), i, x0);
      }
    }
  }

  // Every robot's reported loss terms (Module::lossTerms): the Output
  // "loss.terms", read as the CPU's Rollout reads it; none without one.
  std::vector<std::vector<double>> lossTerms() {
    std::vector<std::vector<double>> out(static_cast<size_t>(n_));
    const int b = m_.findBuffer(ir::names::kLossTerms);
    if (b < 0 || m_.buffers[size_t(b)].role != ir::Role::Output)
      return out;
    std::vector<std::vector<std::byte>> raw(static_cast<size_t>(n_));
    std::vector<void *> host(static_cast<size_t>(n_));
    for (int i = 0; i < n_; ++i) {
      raw[size_t(i)].resize(size_t(pop_.layout(first_ + i).count[size_t(b)] * info_.elemBytes(b)));
      host[size_t(i)] = raw[size_t(i)].data();
    }
    ro_->downloadAll(b, host.data());
    for (int i = 0; i < n_; ++i)
      for (int k = 0; k < m_.buffers[size_t(b)].comps; ++k)
        out[size_t(i)].push_back(loadF(raw[size_t(i)].data(), k, pop_.f32()));
    return out;
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

  // The CPU rollout's sentence for a state beyond the limit (Rollout::
  // boundedState): the field and, over one set, its element.
  std::string stateError(const cg::TrainRecord &R) const {
    const ir::StateField &F = ro_->field(int(R.badField));
    std::string where = "'" + F.name + "'";
    if (F.sets.size() == 1 && R.badIndex >= 0)
      where += fmt::format(" of {} {}", info_.module->sets[size_t(F.sets[0])].name,
                           int64_t(R.badIndex) / F.comps);
    const auto t = int64_t(R.badTime);
    if (!std::isfinite(R.badValue))
      return fmt::format("the state {} is NaN or infinite at t = {}", where, t);
    return fmt::format("the simulation blew up: the state {} reached {:.3g} at t = {}, beyond "
                       "world.state_limit = {:.3g} (a smaller world.dt or softer springs keep "
                       "it stable)",
                       where, R.badValue, t, opts_.stateLimit);
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
  const cg::CudaExecutable &exe_;
  Population &pop_;
  int first_, n_;
  TrainOptions opts_;
  int64_t batch_;             // episodes per iteration
  std::vector<uint64_t> ids_; // per robot: the id seeding its weights and commands
  std::unique_ptr<CudaRollout> ro_;
  cg::DeviceApi *dev_ = nullptr;
  uint64_t records_ = 0, mask_ = 0;
  std::vector<uint64_t> best_;
  std::vector<char> filled_; // per episode: a state is carried (EpisodeCarry's)
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

  std::unique_ptr<DeviceBatch> open(Population &pop, int first, int n, const TrainOptions &o,
                                    const std::vector<uint64_t> *ids,
                                    const std::vector<ParamSet> *init) override {
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
  return CudaRollout::deviceBytesNeeded(*info.module, count, sizes.data(), o.steps,
                                        commandLayout(info, o)) +
         recordBytes(info, pop, first, count, o);
}

std::unique_ptr<TrainDevice> cudaDevice(const ModuleInfo &info,
                                        const codegen::cuda::CudaExecutable &exe) {
  return std::make_unique<CudaDevice>(info, exe);
}

} // namespace evoc::cuda
