// Rollouts: forward steps, loss kernels, checkpointed backward sweep.
#include "core/Rollout.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "support/Error.h"

namespace evoc::runtime {

namespace {
std::byte *bytesOf(AlignedDoubles &v) { return reinterpret_cast<std::byte *>(v.data()); }
void ensure(AlignedDoubles &v, int64_t bytes) {
  size_t n = size_t((bytes + 7) / 8);
  if (v.size() < n)
    v.resize(n);
}
} // namespace

int64_t resolveCheckpointK(const RolloutConfig &c) {
  int64_t steps = std::max<int64_t>(c.steps - 1, 1);
  if (c.fullTape)
    return steps;
  int64_t k = c.checkpointK > 0 ? c.checkpointK : std::llround(std::sqrt(double(steps)));
  return std::clamp<int64_t>(k, 1, steps);
}

Rollout::Rollout(const ModuleInfo &info, const codegen::Executable &exe)
    : info_(info), exe_(exe), ptrs_(info.module->buffers.size(), nullptr) {}

void Rollout::prepare(Population &pop, int r, const RolloutConfig &cfg, bool backward) {
  if (cfg.steps < 1)
    throw Error("a rollout needs at least one state (steps >= 1)");
  pop_ = &pop;
  r_ = r;
  L_ = &pop.layout(r);
  T_ = cfg.steps;
  K_ = resolveCheckpointK(cfg);
  windows_ = std::max<int64_t>(1, (T_ - 1 + K_ - 1) / K_);
  lastStart_ = (windows_ - 1) * K_;
  if (!backward) // forward only: nothing is stored but two rolling states
    windows_ = 0, lastStart_ = T_;
  sb_ = alignUp(L_->stateBytes()); // every snapshot starts on 64 bytes
  const auto *A = L_->arenaBytes;
  ensure(temp_, A[int(Arena::Temp)]);
  ensure(tempAdj_, A[int(Arena::TempAdj)]);
  ensure(bodyAdj_, A[int(Arena::BodyAdj)]);
  ensure(outAdj_, A[int(Arena::OutputAdj)]);
  ensure(rolling_, 2 * sb_);
  ensure(ckpt_, std::max<int64_t>(windows_ - 1, 0) * sb_);
  windowStates_ = !backward      ? 0
                  : windows_ > 1 ? std::max(K_ + 1, T_ - lastStart_)
                                 : T_ - lastStart_;
  ensure(window_, windowStates_ * sb_);
  ensure(adj_, backward ? 2 * sb_ : 0);
  // Pinned states: x[0], x[T-1] and any fixed time a loss kernel reads.
  pinnedTimes_ = {0, T_ - 1};
  for (int b = 0; b < int(info_.module->buffers.size()); ++b) {
    const auto &B = info_.module->buffers[b];
    if (B.role != ir::Role::State || B.time != ir::TimeRef::Fixed)
      continue;
    if (B.fixedTime < 0 || B.fixedTime >= T_)
      throw Error(fmt::format("loss buffer '{}' reads the state at t = {}, outside the "
                              "rollout's {} states",
                              B.name, B.fixedTime, T_));
    pinnedTimes_.push_back(B.fixedTime);
  }
  std::sort(pinnedTimes_.begin(), pinnedTimes_.end());
  pinnedTimes_.erase(std::unique(pinnedTimes_.begin(), pinnedTimes_.end()), pinnedTimes_.end());
  ensure(pinned_, int64_t(pinnedTimes_.size()) * sb_);
  ensure(pinnedAdj_, backward ? int64_t(pinnedTimes_.size()) * sb_ : 0);
}

std::byte *Rollout::slot(int64_t t) {
  if (t >= lastStart_)
    return bytesOf(window_) + (t - lastStart_) * sb_;
  if (windows_ > 0 && t % K_ == 0)
    return bytesOf(ckpt_) + (t / K_) * sb_;
  return bytesOf(rolling_) + (t & 1) * sb_;
}

std::byte *Rollout::pinnedState(int64_t t) {
  auto it = std::find(pinnedTimes_.begin(), pinnedTimes_.end(), t);
  return it == pinnedTimes_.end() ? nullptr : bytesOf(pinned_) + (it - pinnedTimes_.begin()) * sb_;
}

std::byte *Rollout::pinnedAdj(int64_t t) {
  auto it = std::find(pinnedTimes_.begin(), pinnedTimes_.end(), t);
  return it == pinnedTimes_.end() ? nullptr
                                  : bytesOf(pinnedAdj_) + (it - pinnedTimes_.begin()) * sb_;
}

bool Rollout::lossStepAt(int k, int64_t t) const {
  const auto &K = info_.module->kernels[k];
  int64_t end = K.windowEnd < 0 ? T_ + K.windowEnd : K.windowEnd;
  return t >= K.windowBegin && t <= end;
}

// Binds every buffer kernel k uses for time t and calls it. `cur`/`next`
// are the states at t and t+1, `adjCur`/`adjNext` their adjoints.
void Rollout::call(int k, int64_t t, std::byte *cur, std::byte *next, std::byte *adjCur,
                   std::byte *adjNext) {
  const ir::Module &m = *info_.module;
  const RobotLayout &L = *L_;
  for (int b : info_.used[k]) {
    const ir::Buffer &B = m.buffers[b];
    int64_t off = L.offset[b];
    std::byte *p = nullptr;
    switch (info_.arena[b]) {
    case Arena::Body:
    case Arena::Param:
    case Arena::Grad:
    case Arena::Output:
      p = pop_->arena(r_, info_.arena[b]) + off;
      break;
    case Arena::Temp:
      p = bytesOf(temp_) + off;
      std::memset(p, 0, size_t(L.count[b] * info_.elemBytes(b)));
      break;
    case Arena::TempAdj:
      p = bytesOf(tempAdj_) + off;
      std::memset(p, 0, size_t(L.count[b] * info_.elemBytes(b)));
      break;
    case Arena::BodyAdj:
      p = bytesOf(bodyAdj_) + off;
      break;
    case Arena::OutputAdj:
      p = bytesOf(outAdj_) + off;
      break;
    case Arena::State:
    case Arena::StateAdj: {
      bool adj = info_.arena[b] == Arena::StateAdj;
      const ir::Buffer &P = adj ? m.buffers[B.primal] : B;
      std::byte *base = nullptr;
      if (P.role == ir::Role::NextState)
        base = adj ? adjNext : next;
      else if (P.time == ir::TimeRef::Current)
        base = adj ? adjCur : cur;
      else {
        int64_t when = P.time == ir::TimeRef::First  ? 0
                       : P.time == ir::TimeRef::Last ? T_ - 1
                                                     : P.fixedTime;
        base = adj ? pinnedAdj(when) : pinnedState(when);
      }
      EVOC_ASSERT(base, "kernel '" + m.kernels[k].name + "' reads '" + B.name +
                            "' where the rollout has no such state");
      p = base + off;
      break;
    }
    }
    ptrs_[b] = p;
  }
  exe_.run(k, ptrs_.data(), L.sizes.data(), t);
  for (int b : info_.used[k])
    ptrs_[b] = nullptr;
}

void Rollout::stepForward(int64_t t, std::byte *cur, std::byte *next) {
  call(info_.step, t, cur, next, nullptr, nullptr);
  // A field the step does not write carries over unchanged.
  for (int f = 0; f < int(info_.fields.size()); ++f)
    if (info_.fields[f].stepWrites < 0) {
      int64_t off = L_->fieldOffset[f];
      int64_t end = f + 1 < int(info_.fields.size()) ? L_->fieldOffset[f + 1] : L_->stateBytes();
      std::memcpy(next + off, cur + off, size_t(end - off));
    }
}

bool Rollout::finiteState(const std::byte *s, std::string &where) const {
  bool f32 = pop_->f32();
  for (int f = 0; f < int(info_.fields.size()); ++f) {
    const auto &F = info_.fields[f];
    if (F.elem != ir::Type::F)
      continue;
    int64_t n = F.comps;
    for (int set : F.sets)
      n *= L_->sizes[set];
    const std::byte *p = s + L_->fieldOffset[f];
    for (int64_t i = 0; i < n; ++i)
      if (!std::isfinite(loadF(p, i, f32))) {
        where = F.name;
        return false;
      }
  }
  return true;
}

namespace {
// dst[f] += src[f] over the float fields f that `pick` selects.
template <class Pick>
void addFields(const ModuleInfo &info, const RobotLayout &L, bool f32, std::byte *dst,
               const std::byte *src, Pick pick) {
  for (int f = 0; f < int(info.fields.size()); ++f) {
    const auto &F = info.fields[f];
    if (F.elem != ir::Type::F || !pick(F))
      continue;
    int64_t n = F.comps;
    for (int set : F.sets)
      n *= L.sizes[set];
    std::byte *d = dst + L.fieldOffset[f];
    const std::byte *s = src + L.fieldOffset[f];
    for (int64_t i = 0; i < n; ++i)
      storeF(d, i, loadF(d, i, f32) + loadF(s, i, f32), f32);
  }
}
} // namespace

void Rollout::runInit(Population &pop, int r) {
  RolloutConfig cfg;
  cfg.steps = 1;
  prepare(pop, r, cfg, false);
  if (info_.init.empty())
    return;
  pop.initialState(r, pinnedState(0), 0.0, -1); // Init kernels see the body's points
  for (int k : info_.init)
    call(k, 0, pinnedState(0), nullptr, nullptr, nullptr);
}

RolloutOutcome Rollout::run(Population &pop, int r, const RolloutConfig &cfg, bool backward) {
  if (backward && !info_.differentiable())
    throw Error("the module has no adjoint kernels; run autodiff before asking for gradients");
  prepare(pop, r, cfg, backward);
  const bool f32 = pop.f32();
  RolloutOutcome out;
  auto &M = out.memory;
  M.stateBytes = sb_;
  M.storedStates = int64_t(pinnedTimes_.size()) + 2 +
                   (backward ? std::max<int64_t>(windows_ - 1, 0) + windowStates_ + 2 : 0);
  M.stateStoreBytes = M.storedStates * sb_;
  M.fullTapeBytes = T_ * sb_;
  auto invalid = [&](std::string why) {
    out.valid = false;
    out.error = fmt::format("robot {}: {}", r, why);
    return out;
  };

  // Forward.
  std::memset(pop.arena(r, Arena::Output), 0, size_t(L_->arenaBytes[int(Arena::Output)]));
  std::string where;
  for (int64_t t = 0; t < T_; ++t) {
    std::byte *x = slot(t);
    if (t == 0)
      pop.initialState(r, x, cfg.groundHeight, cfg.upAxis);
    else {
      stepForward(t - 1, slot(t - 1), x);
      ++out.stepsRun;
    }
    if (!finiteState(x, where))
      return invalid(fmt::format("the state '{}' is NaN or infinite at t = {}", where, t));
    if (std::byte *pin = pinnedState(t))
      std::memcpy(pin, x, size_t(sb_));
    for (int k : info_.lossStep)
      if (lossStepAt(k, t))
        call(k, t, x, nullptr, nullptr, nullptr);
  }
  for (int k : info_.loss)
    call(k, T_ - 1, pinnedState(T_ - 1), nullptr, nullptr, nullptr);
  if (info_.lossOutput >= 0)
    out.loss = loadF(pop.buffer(r, info_.lossOutput), 0, f32);
  if (!std::isfinite(out.loss))
    return invalid("the loss is NaN or infinite");
  if (!backward)
    return out;

  // Backward sweep. Gradients, pinned adjoints and side adjoints start at 0.
  std::memset(pop.arena(r, Arena::Grad), 0, size_t(L_->arenaBytes[int(Arena::Grad)]));
  std::memset(bytesOf(bodyAdj_), 0, size_t(L_->arenaBytes[int(Arena::BodyAdj)]));
  std::memset(bytesOf(pinnedAdj_), 0, size_t(pinnedTimes_.size() * sb_));
  auto seedLoss = [&] {
    std::memset(bytesOf(outAdj_), 0, size_t(L_->arenaBytes[int(Arena::OutputAdj)]));
    if (info_.lossOutputAdj >= 0)
      storeF(bytesOf(outAdj_) + L_->offset[info_.lossOutputAdj], 0, 1.0, f32);
  };
  std::byte *adjCur = bytesOf(adj_), *adjNext = bytesOf(adj_) + sb_;
  auto mergePinned = [&](int64_t t, std::byte *adj) {
    if (std::byte *pa = pinnedAdj(t))
      addFields(info_, *L_, f32, adj, pa, [](const StateField &) { return true; });
  };
  for (size_t i = 0; i < info_.loss.size(); ++i) {
    seedLoss();
    call(info_.lossAdj[i], T_ - 1, pinnedState(T_ - 1), nullptr, pinnedAdj(T_ - 1), nullptr);
  }
  std::memset(adjNext, 0, size_t(sb_));
  for (size_t i = 0; i < info_.lossStep.size(); ++i)
    if (lossStepAt(info_.lossStep[i], T_ - 1)) {
      seedLoss();
      call(info_.lossStepAdj[i], T_ - 1, slot(T_ - 1), nullptr, adjNext, nullptr);
    }
  mergePinned(T_ - 1, adjNext);
  for (int64_t w = windows_ - 1; w >= 0 && T_ > 1; --w) {
    int64_t c = w * K_, e = std::min(c + K_, T_ - 1);
    std::byte *win = bytesOf(window_);
    if (w != windows_ - 1) { // recompute the window from its checkpoint
      std::memcpy(win, bytesOf(ckpt_) + w * sb_, size_t(sb_));
      for (int64_t t = c; t < e; ++t)
        stepForward(t, win + (t - c) * sb_, win + (t - c + 1) * sb_);
    }
    for (int64_t t = e - 1; t >= c; --t) {
      std::byte *x = win + (t - c) * sb_, *xn = x + sb_;
      std::memset(adjCur, 0, size_t(sb_));
      for (size_t i = 0; i < info_.lossStep.size(); ++i)
        if (lossStepAt(info_.lossStep[i], t)) {
          seedLoss();
          call(info_.lossStepAdj[i], t, x, nullptr, adjCur, nullptr);
        }
      call(info_.stepAdj, t, x, xn, adjCur, adjNext);
      addFields(info_, *L_, f32, adjCur, adjNext,
                [](const StateField &F) { return F.stepWrites < 0; });
      if (t != T_ - 1)
        mergePinned(t, adjCur);
      std::swap(adjCur, adjNext);
    }
  }
  const std::byte *g = pop.arena(r, Arena::Grad);
  for (int64_t i = 0; i < L_->paramCount; ++i)
    if (!std::isfinite(loadF(g, i, f32)))
      return invalid("the gradient is NaN or infinite");
  return out;
}

std::vector<std::vector<double>> Rollout::trajectory(Population &pop, int r,
                                                     const RolloutConfig &cfg,
                                                     const std::string &field,
                                                     const std::vector<int64_t> &times) {
  prepare(pop, r, cfg, false);
  int f = 0;
  while (f < int(info_.fields.size()) && info_.fields[f].name != field)
    ++f;
  if (f == int(info_.fields.size()))
    throw Error("the module has no state field '" + field + "'");
  int64_t n = info_.fields[f].comps;
  for (int s : info_.fields[f].sets)
    n *= L_->sizes[s];
  std::vector<std::vector<double>> out;
  size_t next = 0;
  for (int64_t t = 0; t < T_ && next < times.size(); ++t) {
    std::byte *x = slot(t);
    if (t == 0)
      pop.initialState(r, x, cfg.groundHeight, cfg.upAxis);
    else
      stepForward(t - 1, slot(t - 1), x);
    while (next < times.size() && times[next] == t) {
      std::vector<double> v(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i)
        v[i] = loadF(x + L_->fieldOffset[f], i, pop.f32());
      out.push_back(std::move(v));
      ++next;
    }
  }
  return out;
}

} // namespace evoc::runtime
