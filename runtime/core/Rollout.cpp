// Rollouts: forward steps, loss kernels, checkpointed backward sweep.
#include "core/Rollout.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "ir/Names.h"
#include "ir/TimeRules.h"
#include "support/Error.h"

namespace evoc::runtime {

namespace {
void ensure(AlignedDoubles &v, int64_t bytes) {
  size_t n = size_t((bytes + 7) / 8);
  if (v.size() < n)
    v.resize(n);
}
} // namespace

int64_t resolveCheckpointK(const RolloutConfig &c, int64_t stateBytes, int64_t tapeBytes) {
  int64_t steps = std::max<int64_t>(c.steps - 1, 1);
  if (c.fullTape)
    return steps;
  if (c.checkpointK > 0)
    return std::clamp<int64_t>(c.checkpointK, 1, steps);
  if (stateBytes > 0 &&
      double(c.steps) * double(stateBytes + tapeBytes) <= double(c.fullTapeBudget))
    return steps;
  const double tapePerState = stateBytes > 0 ? double(tapeBytes) / double(stateBytes) : 0.0;
  int64_t k = std::llround(std::sqrt(double(steps) / (1 + tapePerState)));
  return std::clamp<int64_t>(k, 1, steps);
}

Rollout::Rollout(const ModuleInfo &info, const codegen::Executable &exe, int lanes)
    : info_(info), exe_(exe), lanes_(lanes), ptrs_(info.module->buffers.size(), nullptr) {
  const ir::Module &m = *info.module;
  if (lanes < 1)
    throw Error("a rollout runs at least one episode at a time (lanes >= 1)");
  seeds_.assign(size_t(lanes), 0.0);
  // In lanes the window products add into the lanes' gradients where no
  // kernel does: a kernel adding to them as well would sum in another order
  // than one episode at a time.
  for (const ir::WindowProduct &p : m.products)
    for (size_t k = 0; lanes > 1 && k < info.used.size(); ++k)
      for (int b : info.used[k])
        if (b == p.grad)
          throw Error("kernel '" + m.kernels[k].name + "' adds to '" + m.buffers[b].name +
                      "', which a window product computes: it cannot run in lanes");
  for (int b = 0; b < int(m.buffers.size()); ++b) {
    const auto &B = m.buffers[b];
    if (B.role == ir::Role::State && B.time == ir::TimeRef::Offset)
      maxOffset_ = std::max(maxOffset_, -B.fixedTime);
    readsCommands_ |= B.role == ir::Role::Command;
    if (B.role == ir::Role::Output && B.name == ir::names::kLossSample)
      sampleBuf_ = b, windowSlots_ = B.comps;
    if (B.role == ir::Role::Window)
      windowBuf_ = b;
    if (B.role == ir::Role::Output && B.name == ir::names::kLossTerms)
      termsBuf_ = b;
  }
  for (int b = 0; b < int(m.buffers.size()); ++b) {
    const auto &B = m.buffers[b];
    if (B.role == ir::Role::Adjoint && B.primal == windowBuf_ && windowBuf_ >= 0)
      windowAdj_ = b;
    if (B.role == ir::Role::Adjoint && B.primal == sampleBuf_ && sampleBuf_ >= 0)
      sampleAdj_ = b;
  }
  if ((sampleBuf_ < 0) != (windowBuf_ < 0))
    throw Error("the module has window samples without reduced windows (or the reverse)");
  slotReduce_.assign(size_t(windowSlots_), ir::WindowReduce::Sum);
  for (int k : info.lossStep)
    if (int slot = m.kernels[k].windowSlot; slot >= 0 && slot < windowSlots_)
      slotReduce_[size_t(slot)] = m.kernels[k].windowReduce;
}

void Rollout::seedOutputAdj(int buffer, int64_t index, double value) {
  seeds_.assign(size_t(lanes_), value);
  seedOutputAdj(buffer, index, seeds_);
}

void Rollout::seedOutputAdj(int buffer, int64_t index, const std::vector<double> &values) {
  std::memset(bytesOf(outAdj_), 0, size_t(L_->arenaBytes[int(Arena::OutputAdj)]));
  if (buffer >= 0)
    for (int l = 0; l < lanes_; ++l)
      storeF(bytesOf(outAdj_) + L_->offset[buffer], index * lanes_ + l, values[size_t(l)],
             pop_->f32());
}

std::byte *Rollout::arena(Arena a) {
  if (lanes_ > 1 && a == Arena::Grad)
    return bytesOf(gradW_);
  if (lanes_ > 1 && a == Arena::Output)
    return bytesOf(outW_);
  return pop_->arena(r_, a);
}

int64_t Rollout::fieldElems(int f) const {
  int64_t n = info_.fields[f].comps * L_->lanes;
  for (int set : info_.fields[f].sets)
    n *= L_->sizes[set];
  return n;
}

template <class Copy> void Rollout::forLaneElements(int l, Copy copy) const {
  const RobotLayout &S = pop_->layout(r_);
  for (int f = 0; f < int(info_.fields.size()); ++f) {
    const int64_t n = fieldElems(f) / lanes_;
    const int64_t eb = info_.fields[f].elem == ir::Type::F && !pop_->f32() ? 8 : 4;
    for (int64_t i = 0; i < n; ++i)
      copy(L_->fieldOffset[f] + (i * lanes_ + l) * eb, S.fieldOffset[f] + i * eb, size_t(eb));
  }
}

void Rollout::scatterLane(std::byte *wide, const std::byte *src, int l) const {
  forLaneElements(l, [&](int64_t w, int64_t o, size_t eb) { std::memcpy(wide + w, src + o, eb); });
}

void Rollout::gatherLane(std::byte *dst, const std::byte *wide, int l) const {
  forLaneElements(l, [&](int64_t w, int64_t o, size_t eb) { std::memcpy(dst + o, wide + w, eb); });
}

void Rollout::startStates(std::byte *x) {
  const RolloutConfig &c = *cfg_;
  if (lanes_ == 1) {
    if (c.startState)
      std::memcpy(x, c.startState, size_t(sb_));
    else
      pop_->initialState(r_, x, c.groundHeight, c.upAxis, c.terrain);
    return;
  }
  bool haveBody = false; // the body's own x[0], made once for the lanes that start there
  for (int l = 0; l < lanes_; ++l) {
    if (const std::byte *start = cfgs_[l].startState) {
      scatterLane(x, start, l);
      continue;
    }
    if (!haveBody)
      pop_->initialState(r_, bytesOf(laneState_), c.groundHeight, c.upAxis, c.terrain);
    haveBody = true;
    scatterLane(x, bytesOf(laneState_), l);
  }
}

void Rollout::prepare(Population &pop, int r, const RolloutConfig &cfg, bool backward) {
  if (cfg.steps < 1)
    throw Error("a rollout needs at least one state (steps >= 1)");
  if (lanes_ == 1)
    cfgs_ = &cfg;
  pop_ = &pop;
  r_ = r;
  if (lanes_ > 1) {
    wide_ = layoutRobot(info_, pop.layout(r).sizes, lanes_);
    L_ = &wide_;
  } else {
    L_ = &pop.layout(r);
  }
  cfg_ = &cfg;
  T_ = cfg.steps;
  sb_ = alignUp(L_->stateBytes()); // every snapshot starts on 64 bytes
  tb_ = alignUp(L_->tapeBytes());
  // The full-tape budget is per episode: a rollout of L lanes may hold L times it.
  RolloutConfig tape = cfg;
  tape.fullTapeBudget =
      cfg.fullTapeBudget > INT64_MAX / lanes_ ? INT64_MAX : cfg.fullTapeBudget * lanes_;
  K_ = resolveCheckpointK(tape, sb_, tb_);
  windows_ = backward ? std::max<int64_t>(1, (T_ - 1 + K_ - 1) / K_) : 0;
  // The states kept at once: a window being swept (K + 1) and, when a loss
  // window reads earlier states (x[t - d]), the d before it, d rounded up to
  // a multiple of K so that each recomputation starts on a checkpoint.
  offsetSpan_ = (maxOffset_ + K_ - 1) / K_ * K_;
  ringSize_ = backward ? K_ + offsetSpan_ + 1 : std::max<int64_t>(2, maxOffset_ + 1);
  ringSize_ = std::max<int64_t>(1, std::min(ringSize_, T_));
  adjSize_ = maxOffset_ + 2;
  const auto *A = L_->arenaBytes;
  ensure(temp_, A[int(Arena::Temp)]);
  ensure(tempAdj_, A[int(Arena::TempAdj)]);
  ensure(bodyAdj_, A[int(Arena::BodyAdj)]);
  ensure(outAdj_, A[int(Arena::OutputAdj)]);
  ensure(ring_, ringSize_ * sb_);
  ensure(ckpt_, windows_ * sb_);
  ensure(adjRing_, backward ? adjSize_ * sb_ : 0);
  ensure(tape_, ringSize_ * tb_);
  ensure(scratchState_, tb_ > 0 ? sb_ : 0);
  if (lanes_ > 1) {
    ensure(gradW_, A[int(Arena::Grad)]);
    ensure(outW_, A[int(Arena::Output)]);
    ensure(laneState_, pop.layout(r).stateBytes());
  }
  tapeStep_.assign(size_t(ringSize_), -1);
  if (readsCommands_ && cfg.commands) {
    if (cfg.commandRows < 1 || cfg.commandCount < 1)
      throw Error("the rollout was given an empty command table");
    const bool f32 = pop.f32();
    int64_t n = cfg.commandRows * cfg.commandCount;
    ensure(cmd_, n * lanes_ * 8);
    for (int l = 0; l < lanes_; ++l) { // interleaved, as every per-episode buffer
      const RolloutConfig &c = cfgs_[l];
      if (!c.commands || c.commandRows != cfg.commandRows || c.commandCount != cfg.commandCount ||
          c.commandPeriod != cfg.commandPeriod)
        throw Error("the episodes of one rollout in lanes need command tables of one shape");
      for (int64_t i = 0; i < n; ++i)
        storeF(bytesOf(cmd_), i * lanes_ + l, c.commands[i], f32);
    }
  }
  redValue_.assign(size_t(windowSlots_ * lanes_), 0.0);
  redArg_.assign(size_t(windowSlots_ * lanes_), -1);
  redCount_.assign(size_t(windowSlots_ * lanes_), 0);
  // Pinned states: x[0], x[T-1] and any fixed time a loss kernel reads.
  pinnedTimes_ = {0, T_ - 1};
  for (int b = 0; b < int(info_.module->buffers.size()); ++b) {
    const auto &B = info_.module->buffers[b];
    if (B.role != ir::Role::State || B.time != ir::TimeRef::Fixed)
      continue;
    if (T_ == 1 && !backward) // runInit: no loss runs
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
  bindFixed();
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

void Rollout::bindFixed() {
  const RobotLayout &L = *L_;
  const int nb = int(info_.module->buffers.size());
  fixed_.assign(size_t(nb), nullptr);
  zeroBytes_.assign(size_t(nb), 0);
  place_.assign(size_t(nb), Place::Fixed);
  tapeZero_.clear();
  const ir::Module &m = *info_.module;
  for (int b = 0; b < nb; ++b) {
    const int64_t off = L.offset[b];
    switch (info_.arena[b]) {
    case Arena::Body:
    case Arena::Param:
    case Arena::Grad:
    case Arena::Output:
      fixed_[b] = arena(info_.arena[b]) + off;
      break;
    case Arena::Temp:
      fixed_[b] = bytesOf(temp_) + off;
      zeroBytes_[b] = L.count[b] * info_.elemBytes(b);
      break;
    case Arena::TempAdj:
      fixed_[b] = bytesOf(tempAdj_) + off;
      zeroBytes_[b] = L.count[b] * info_.elemBytes(b);
      break;
    case Arena::BodyAdj:
      fixed_[b] = bytesOf(bodyAdj_) + off;
      break;
    case Arena::OutputAdj:
      fixed_[b] = bytesOf(outAdj_) + off;
      break;
    case Arena::Tape:
      place_[b] = Place::Tape;
      if (std::binary_search(info_.keptZero.begin(), info_.keptZero.end(), b))
        tapeZero_.emplace_back(off, L.count[b] * info_.elemBytes(b));
      break;
    case Arena::Command:
      place_[b] = Place::Other;
      break;
    case Arena::State:
    case Arena::StateAdj: {
      const bool adj = info_.arena[b] == Arena::StateAdj;
      const ir::Buffer &P = adj ? m.buffers[m.buffers[b].primal] : m.buffers[b];
      place_[b] = P.role == ir::Role::NextState    ? (adj ? Place::AdjNext : Place::Next)
                  : P.time == ir::TimeRef::Current ? (adj ? Place::AdjCur : Place::Cur)
                                                   : Place::Other;
      break;
    }
    }
  }
}

std::byte *Rollout::bindAt(int k, int b, int64_t t) {
  const ir::Module &m = *info_.module;
  const ir::Buffer &B = m.buffers[b];
  const int64_t off = L_->offset[b];
  switch (info_.arena[b]) {
  case Arena::Command: {
    if (!cfg_->commands)
      throw Error("the experiment reads commands ('" + B.field +
                  "'), but the rollout was given none");
    const int64_t row = ir::commandRow(ir::stepOf(B.time, B.fixedTime, t, T_), cfg_->commandPeriod,
                                       cfg_->commandRows);
    EVOC_ASSERT(B.column + B.comps <= cfg_->commandCount,
                "command buffer '" + B.name + "' lies outside the command row");
    return bytesOf(cmd_) + (row * cfg_->commandCount + B.column) * lanes_ * info_.elemBytes(b);
  }
  case Arena::State:
  case Arena::StateAdj: {
    bool adj = info_.arena[b] == Arena::StateAdj;
    const ir::Buffer &P = adj ? m.buffers[B.primal] : B;
    EVOC_ASSERT(P.role != ir::Role::NextState && P.time != ir::TimeRef::Current,
                "the call's own states are bound by place (bindFixed)");
    const int64_t when = ir::stepOf(P.time, P.fixedTime, t, T_);
    std::byte *base = nullptr;
    if (P.time == ir::TimeRef::Offset) {
      EVOC_ASSERT(when >= 0 && when >= ringLo_ && when <= ringHi_,
                  "kernel '" + m.kernels[k].name + "' reads '" + B.name +
                      "' at t = " + std::to_string(when) + ", which the rollout does not hold");
      base = adj ? adjAt(when) : slot(when);
    } else {
      base = adj ? pinnedAdj(when) : pinnedState(when);
    }
    EVOC_ASSERT(base, "kernel '" + m.kernels[k].name + "' reads '" + B.name +
                          "' where the rollout has no such state");
    return base + off;
  }
  case Arena::Tape:
  case Arena::Body:
  case Arena::Param:
  case Arena::Grad:
  case Arena::Output:
  case Arena::Temp:
  case Arena::TempAdj:
  case Arena::BodyAdj:
  case Arena::OutputAdj:
    break;
  }
  EVOC_ASSERT(false, "buffer '" + B.name + "' has a place of its own (bindFixed)");
  return nullptr;
}

std::byte *Rollout::stateAt(int k, int b, std::byte *base) const {
  EVOC_ASSERT(base, "kernel '" + info_.module->kernels[k].name + "' reads '" +
                        info_.module->buffers[b].name + "' where the rollout has no such state");
  return base + L_->offset[b];
}

// Binds every buffer kernel k uses for time t and calls it. `cur`/`next`
// are the states at t and t+1, `adjCur`/`adjNext` their adjoints.
void Rollout::call(int k, int64_t t, std::byte *cur, std::byte *next, std::byte *adjCur,
                   std::byte *adjNext) {
  const RobotLayout &L = *L_;
  // The states' bases by Place, Cur .. AdjNext.
  std::byte *const states[] = {cur, next, adjCur, adjNext};
  for (int b : info_.used[k]) {
    std::byte *p = nullptr;
    switch (place_[b]) {
    case Place::Fixed:
      p = fixed_[b];
      if (poison_ && zeroBytes_[b] > 0) // what a kernel may not read: NaN (or -1)
        std::memset(p, 0xff, size_t(zeroBytes_[b]));
      break;
    case Place::Cur:
    case Place::Next:
    case Place::AdjCur:
    case Place::AdjNext:
      p = stateAt(k, b, states[int(place_[b]) - int(Place::Cur)]);
      break;
    case Place::Tape: // only step and step.adj (ModuleInfo): both at t use block t
      p = tapeAt(t) + L.offset[b];
      break;
    case Place::Other:
      p = bindAt(k, b, t);
      break;
    }
    ptrs_[b] = p;
  }
  for (int b : info_.scratchZero[size_t(k)]) // the scratch it reads before it writes: zeros
    std::memset(fixed_[b], 0, size_t(zeroBytes_[b]));
  exe_.run(k, ptrs_.data(), L.sizes.data(), t); // (a kernel reads only the buffers it uses)
}

void Rollout::stepForward(int64_t t, std::byte *cur, std::byte *next) {
  // The step writes its kept temps there, those it does not store whole
  // first from zero (ModuleInfo::keptZero).
  if (poison_)
    std::memset(tapeAt(t), 0xff, size_t(tb_));
  for (auto [offset, bytes] : tapeZero_)
    std::memset(tapeAt(t) + offset, 0, size_t(bytes));
  tapeStep_[size_t(t % ringSize_)] = t;
  call(info_.step, t, cur, next, nullptr, nullptr);
  // A field the step does not write carries over unchanged.
  for (int f = 0; f < int(info_.fields.size()); ++f)
    if (info_.fields[f].stepWrites < 0) {
      int64_t off = L_->fieldOffset[f];
      int64_t end = f + 1 < int(info_.fields.size()) ? L_->fieldOffset[f + 1] : L_->stateBytes();
      std::memcpy(next + off, cur + off, size_t(end - off));
    }
}

namespace {
/// Whether any of p[0 .. n) is NaN, infinite or beyond `limit` in
/// magnitude: a branch-free pass (every step of every rollout runs this over
/// the whole state, so it is written with SSE2 for doubles, which every
/// x86-64 has and GCC does not use here on its own).
template <class F> bool anyBeyond(const F *p, int64_t n, F limit) {
  int64_t i = 0;
  bool bad = false;
#if defined(__SSE2__)
  if constexpr (sizeof(F) == 8) {
    const __m128d magnitude = _mm_castsi128_pd(_mm_set1_epi64x(0x7fffffffffffffff));
    const __m128d lim = _mm_set1_pd(limit);
    __m128d any = _mm_setzero_pd();
    for (; i + 2 <= n; i += 2) // not (|x| <= limit): NaN fails too
      any = _mm_or_pd(any, _mm_cmpnle_pd(_mm_and_pd(_mm_loadu_pd(p + i), magnitude), lim));
    bad = _mm_movemask_pd(any) != 0;
  }
#endif
  for (; i < n; ++i)
    bad |= !(std::fabs(p[i]) <= limit); // NaN fails too
  return bad;
}

template <class F> int64_t firstBeyond(const F *p, int64_t n, F limit) {
  constexpr int64_t kBlock = 64;
  for (int64_t i0 = 0; i0 < n; i0 += kBlock) {
    const int64_t e = std::min(n, i0 + kBlock);
    if (anyBeyond(p + i0, e - i0, limit))
      for (int64_t i = i0; i < e; ++i)
        if (!(std::fabs(p[i]) <= limit))
          return i;
  }
  return -1;
}
} // namespace

int64_t firstBeyondLimit(const double *p, int64_t n, double limit) {
  return firstBeyond(p, n, limit);
}
int64_t firstBeyondLimit(const float *p, int64_t n, float limit) {
  return firstBeyond(p, n, limit);
}

bool Rollout::boundedState(const std::byte *s, double limit, std::string &where, double &value,
                           int &lane) const {
  const bool f32 = pop_->f32();
  for (int f = 0; f < int(info_.fields.size()); ++f) {
    const auto &F = info_.fields[f];
    if (F.elem != ir::Type::F)
      continue;
    const int64_t n = fieldElems(f);
    const std::byte *p = s + L_->fieldOffset[f];
    const int64_t i = f32 ? firstBeyondLimit(reinterpret_cast<const float *>(p), n, float(limit))
                          : firstBeyondLimit(reinterpret_cast<const double *>(p), n, limit);
    if (i >= 0) {
      // 'point.x' of point 17: which element, so a particle that left its
      // grid (docs/language.md, "Grids and particles") can be found.
      where = "'" + F.name + "'";
      if (F.sets.size() == 1)
        where += fmt::format(" of {} {}", info_.module->sets[size_t(F.sets[0])].name,
                             i / lanes_ / F.comps);
      value = loadF(p, i, f32);
      lane = int(i % lanes_);
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
    int64_t n = F.comps * L.lanes;
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
  EVOC_ASSERT(lanes_ == 1, "Init kernels run one robot at a time, not in lanes");
  RolloutConfig cfg;
  cfg.steps = 1;
  prepare(pop, r, cfg, false);
  if (info_.init.empty())
    return;
  pop.initialState(r, pinnedState(0), 0.0, -1); // Init kernels see the body's points
  for (int k : info_.init)
    call(k, 0, pinnedState(0), nullptr, nullptr, nullptr);
}

// The per-step loss kernels at t (forward): linear windows accumulate into
// the loss; sample kernels give one value each, reduced here.
void Rollout::forwardLossSteps(int64_t t, std::byte *x) {
  const ir::Module &m = *info_.module;
  const bool f32 = pop_->f32();
  for (int k : info_.lossStep) {
    if (!lossStepAt(k, t))
      continue;
    const ir::Kernel &K = m.kernels[k];
    if (K.windowSlot < 0) {
      call(k, t, x, nullptr, nullptr, nullptr);
      continue;
    }
    std::byte *sample = buffer(sampleBuf_);
    for (int l = 0; l < lanes_; ++l)
      storeF(sample, K.windowSlot * lanes_ + l, 0.0, f32);
    call(k, t, x, nullptr, nullptr, nullptr);
    for (int l = 0; l < lanes_; ++l) {
      const size_t i = size_t(K.windowSlot * lanes_ + l);
      const double v = loadF(sample, int64_t(i), f32);
      bool first = redCount_[i]++ == 0;
      switch (K.windowReduce) {
      case ir::WindowReduce::Sum:
      case ir::WindowReduce::Mean:
        redValue_[i] = first ? v : redValue_[i] + v;
        break;
      case ir::WindowReduce::Max: // the first time the maximum is reached carries it
        if (first || v > redValue_[i])
          redValue_[i] = v, redArg_[i] = t;
        break;
      case ir::WindowReduce::Min:
        if (first || v < redValue_[i])
          redValue_[i] = v, redArg_[i] = t;
        break;
      }
    }
  }
}

// The adjoints of the per-step loss kernels at t: a linear window is seeded
// with the loss's adjoint (1), a sample kernel with its window's adjoint
// (divided by the count for a mean; only at the extreme's time for max/min).
void Rollout::backwardLossSteps(int64_t t, const std::vector<double> &windowAdj) {
  const ir::Module &m = *info_.module;
  for (size_t i = 0; i < info_.lossStep.size(); ++i) {
    int k = info_.lossStep[i];
    if (!lossStepAt(k, t))
      continue;
    const ir::Kernel &K = m.kernels[k];
    if (K.windowSlot < 0) {
      seedOutputAdj(info_.lossOutputAdj, 0, 1.0);
    } else {
      bool any = false; // a lane whose seed is not 0 (one lane: skip the call otherwise)
      for (int l = 0; l < lanes_; ++l) {
        const size_t w = size_t(K.windowSlot * lanes_ + l);
        double seed = windowAdj[w];
        if (K.windowReduce == ir::WindowReduce::Mean)
          seed /= double(redCount_[w]);
        else if ((K.windowReduce == ir::WindowReduce::Max ||
                  K.windowReduce == ir::WindowReduce::Min) &&
                 redArg_[w] != t)
          seed = 0;
        seeds_[size_t(l)] = seed;
        any |= seed != 0;
      }
      if (!any || sampleAdj_ < 0)
        continue;
      seedOutputAdj(sampleAdj_, K.windowSlot, seeds_);
    }
    call(info_.lossStepAdj[i], t, slot(t), nullptr, adjAt(t), nullptr);
  }
}

void Rollout::windowProducts(int64_t lo, int64_t hi) {
  const bool f32 = pop_->f32();
  const int64_t ld = tb_ / (f32 ? 4 : 8); // elements from one step's block to the next
  // In lanes, the products add into the wide Grad arena, lane by lane as one
  // episode adds into its own (no kernel adds to these gradients: the
  // constructor checked).
  const RobotLayout &S = pop_->layout(r_);
  for (const ir::WindowProduct &p : info_.module->products) {
    std::byte *g = arena(Arena::Grad) + L_->offset[p.grad];
    // Runs of steps in consecutive ring slots, latest first (the order in
    // which step.adj itself accumulated the gradient), of at most
    // kProductRun steps: the run's rows and inputs stay in L2 while the
    // product passes over them once per block of the gradient.
    for (int64_t b = hi; b > lo;) {
      const int64_t a = std::max({lo, (b - 1) - (b - 1) % ringSize_, b - kProductRun});
      exe_.windowProduct(f32, g, tapeAt(a) + L_->offset[p.rows], tapeAt(a) + L_->offset[p.x],
                         S.count[p.rows], S.count[p.x], b - a, ld, lanes_);
      b = a;
    }
  }
}

std::vector<double> Rollout::laneGradient(int lane) const {
  EVOC_ASSERT(lanes_ > 1 && L_ && lane >= 0 && lane < lanes_, "laneGradient: not in lanes");
  const bool f32 = pop_->f32();
  const RobotLayout &S = pop_->layout(r_);
  const auto *w = reinterpret_cast<const std::byte *>(gradW_.data());
  std::vector<double> g(static_cast<size_t>(S.paramCount));
  for (int64_t j = 0; j < S.paramCount; ++j)
    g[size_t(j)] = loadF(w, j * lanes_ + lane, f32);
  return g;
}

void Rollout::recomputeFrom(int64_t need) {
  if (need >= ringLo_)
    return;
  int64_t cp = need / K_ * K_;
  std::memcpy(slot(cp), bytesOf(ckpt_) + (cp / K_) * sb_, size_t(sb_));
  for (int64_t t = cp; t + 1 < ringLo_; ++t)
    stepForward(t, slot(t), slot(t + 1));
  // The step into the oldest state held came before it: run it again for
  // its kept temporaries (its state, already held, goes to scratch).
  if (tb_ > 0 && ringLo_ > cp)
    stepForward(ringLo_ - 1, slot(ringLo_ - 1), bytesOf(scratchState_));
  ringHi_ = std::min(ringHi_, cp + ringSize_ - 1);
  ringLo_ = cp;
}

RolloutOutcome Rollout::run(Population &pop, int r, const RolloutConfig &cfg, bool backward) {
  EVOC_ASSERT(lanes_ == 1, "a rollout in lanes runs with runLanes");
  if (backward && !info_.differentiable())
    throw Error("the module has no adjoint kernels; run autodiff before asking for gradients");
  firstName_ = r;
  prepare(pop, r, cfg, backward);
  return sweep(backward).front();
}

std::vector<RolloutOutcome> Rollout::runLanes(Population &pop, int r,
                                              const std::vector<RolloutConfig> &cfgs, bool backward,
                                              int firstName) {
  if (int(cfgs.size()) != lanes_)
    throw Error(fmt::format("a rollout in {} lanes was given {} episodes", lanes_, cfgs.size()));
  if (backward && !info_.differentiable())
    throw Error("the module has no adjoint kernels; run autodiff before asking for gradients");
  cfgs_ = cfgs.data();
  firstName_ = firstName;
  prepare(pop, r, cfgs.front(), backward);
  return sweep(backward);
}

void Rollout::lossesAfterForward(std::vector<RolloutOutcome> &outs) {
  const bool f32 = pop_->f32();
  for (int l = 0; l < lanes_; ++l)
    if (std::byte *fin = cfgs_[l].finalState) {
      if (lanes_ == 1)
        std::memcpy(fin, slot(T_ - 1), size_t(sb_));
      else
        gatherLane(fin, slot(T_ - 1), l);
    }
  if (windowBuf_ >= 0) {
    std::byte *w = buffer(windowBuf_);
    for (int64_t i = 0; i < windowSlots_ * lanes_; ++i) { // slot i / lanes_, lane i % lanes_
      double v = redValue_[size_t(i)];
      if (slotReduce_[size_t(i / lanes_)] == ir::WindowReduce::Mean) // the samples' sum, so far
        v /= double(std::max<int64_t>(redCount_[size_t(i)], 1));
      storeF(w, i, v, f32);
    }
  }
  for (int k : info_.loss)
    call(k, T_ - 1, pinnedState(T_ - 1), nullptr, nullptr, nullptr);
  for (int l = 0; l < lanes_; ++l) {
    RolloutOutcome &o = outs[size_t(l)];
    if (info_.lossOutput >= 0)
      o.loss = loadF(buffer(info_.lossOutput), l, f32);
    if (termsBuf_ >= 0) {
      const std::byte *tb = buffer(termsBuf_);
      for (int i = 0; i < info_.module->buffers[size_t(termsBuf_)].comps; ++i)
        o.terms.push_back(loadF(tb, i * lanes_ + l, f32));
    }
  }
}

int Rollout::nonFiniteGradientLane() {
  const bool f32 = pop_->f32();
  if (lanes_ == 1) {
    const std::byte *g = pop_->arena(r_, Arena::Grad);
    for (int64_t i = 0; i < L_->paramCount; ++i)
      if (!std::isfinite(loadF(g, i, f32)))
        return 0;
    return -1;
  }
  const int64_t np = pop_->layout(r_).paramCount;
  for (int64_t i = 0; i < np * lanes_; ++i)
    if (!std::isfinite(loadF(bytesOf(gradW_), i, f32))) // interleaved: lane i % lanes_
      return int(i % lanes_);
  return -1;
}

std::vector<RolloutOutcome> Rollout::sweep(bool backward) {
  const RolloutConfig &cfg = *cfg_;
  const bool f32 = pop_->f32();
  std::vector<RolloutOutcome> outs(static_cast<size_t>(lanes_));
  RolloutMemory M;
  M.stateBytes = sb_;
  M.storedStates = int64_t(pinnedTimes_.size()) + ringSize_ +
                   (backward ? windows_ + adjSize_ + int64_t(pinnedTimes_.size()) : 0);
  M.stateStoreBytes = M.storedStates * sb_;
  M.fullTapeBytes = T_ * sb_;
  M.tapeBytes = tb_;
  M.keptTempBytes = ringSize_ * tb_;
  M.windowSteps = backward ? K_ : 0;
  int64_t stepsRun = 0;
  auto finish = [&] {
    for (RolloutOutcome &o : outs)
      o.memory = M, o.stepsRun = stepsRun;
    return outs;
  };
  // Lane l is invalid (the others stop with it, their results incomplete).
  auto invalid = [&](int l, std::string why) {
    outs[size_t(l)].valid = false;
    outs[size_t(l)].error = fmt::format("robot {}: {}", firstName_ + l, why);
    return finish();
  };

  // Forward.
  std::memset(arena(Arena::Output), 0, size_t(L_->arenaBytes[int(Arena::Output)]));
  std::string where;
  for (int64_t t = 0; t < T_; ++t) {
    std::byte *x = slot(t);
    if (t == 0)
      startStates(x);
    else {
      stepForward(t - 1, slot(t - 1), x);
      ++stepsRun;
    }
    ringHi_ = t;
    ringLo_ = std::max<int64_t>(0, t - ringSize_ + 1);
    double v = 0;
    if (int lane = 0; !boundedState(x, cfg.stateLimit, where, v, lane)) {
      if (!std::isfinite(v))
        return invalid(lane, fmt::format("the state {} is NaN or infinite at t = {}", where, t));
      return invalid(lane, fmt::format("the simulation blew up: the state {} reached {:.3g} at "
                                       "t = {}, beyond world.state_limit = {:.3g} (a smaller "
                                       "world.dt or softer springs keep it stable)",
                                       where, v, t, cfg.stateLimit));
    }
    if (t % K_ == 0 && t / K_ < windows_)
      std::memcpy(bytesOf(ckpt_) + (t / K_) * sb_, x, size_t(sb_));
    if (std::byte *pin = pinnedState(t))
      std::memcpy(pin, x, size_t(sb_));
    forwardLossSteps(t, x);
  }
  lossesAfterForward(outs);
  for (int l = 0; l < lanes_; ++l)
    if (!std::isfinite(outs[size_t(l)].loss))
      return invalid(l, "the loss is NaN or infinite");
  if (!backward)
    return finish();

  // Backward sweep. Gradients, pinned adjoints and side adjoints start at 0.
  std::memset(arena(Arena::Grad), 0, size_t(L_->arenaBytes[int(Arena::Grad)]));
  std::memset(bytesOf(bodyAdj_), 0, size_t(L_->arenaBytes[int(Arena::BodyAdj)]));
  std::memset(bytesOf(pinnedAdj_), 0, size_t(pinnedTimes_.size() * sb_));
  std::memset(bytesOf(adjRing_), 0, size_t(adjSize_ * sb_));
  std::vector<double> windowAdj(size_t(windowSlots_ * lanes_), 0.0);
  for (size_t i = 0; i < info_.loss.size(); ++i) {
    seedOutputAdj(info_.lossOutputAdj, 0, 1.0);
    call(info_.lossAdj[i], T_ - 1, pinnedState(T_ - 1), nullptr, pinnedAdj(T_ - 1), nullptr);
    if (windowAdj_ >= 0)
      for (int64_t w = 0; w < windowSlots_ * lanes_; ++w)
        windowAdj[size_t(w)] += loadF(bytesOf(outAdj_) + L_->offset[windowAdj_], w, f32);
  }
  auto mergePinned = [&](int64_t t, std::byte *adj) {
    if (std::byte *pa = pinnedAdj(t))
      addFields(info_, *L_, f32, adj, pa, [](const StateField &) { return true; });
  };
  backwardLossSteps(T_ - 1, windowAdj);
  mergePinned(T_ - 1, adjAt(T_ - 1));
  for (int64_t w = windows_ - 1; w >= 0 && T_ > 1; --w) {
    int64_t c = w * K_, e = std::min(c + K_, T_ - 1);
    recomputeFrom(std::max<int64_t>(0, c - offsetSpan_));
    EVOC_ASSERT(ringHi_ >= e, "the rollout lost a state it still needs");
    // The window products of the steps swept since the last ones: added
    // every kProductRun steps, while those steps' rows and inputs are still
    // in cache (a full tape's one window would otherwise read all of them
    // back from memory at its end), latest first as always, so the sums
    // are the same bit for bit.
    int64_t productsFrom = e;
    for (int64_t t = e - 1; t >= c; --t) {
      std::byte *adjCur = adjAt(t), *adjNext = adjAt(t + 1);
      backwardLossSteps(t, windowAdj);
      EVOC_ASSERT(tb_ == 0 || tapeStep_[size_t(t % ringSize_)] == t,
                  "the rollout lost the kept temporaries of a step it still needs");
      call(info_.stepAdj, t, slot(t), slot(t + 1), adjCur, adjNext);
      addFields(info_, *L_, f32, adjCur, adjNext,
                [](const StateField &F) { return F.stepWrites < 0; });
      mergePinned(t, adjCur);
      std::memset(adjNext, 0, size_t(sb_)); // reused for time t + 1 - adjSize_
      if (productsFrom - t == kProductRun) {
        windowProducts(t, productsFrom);
        productsFrom = t;
      }
    }
    windowProducts(c, productsFrom);
  }
  if (int l = nonFiniteGradientLane(); l >= 0)
    return invalid(l, "the gradient is NaN or infinite");
  return finish();
}

std::vector<double> Rollout::initialAdjoint(int f) {
  EVOC_ASSERT(lanes_ == 1, "initialAdjoint: a rollout of one episode");
  EVOC_ASSERT(L_ && f >= 0 && f < int(info_.fields.size()), "initialAdjoint: no such field");
  int64_t n = info_.fields[f].comps;
  for (int s : info_.fields[f].sets)
    n *= L_->sizes[s];
  const std::byte *a = adjAt(0) + L_->fieldOffset[f];
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[size_t(i)] = loadF(a, i, pop_->f32());
  return v;
}

std::map<std::string, std::vector<double>> Rollout::bodyAdjoints() {
  EVOC_ASSERT(L_ && lanes_ == 1, "bodyAdjoints: no rollout of one episode ran");
  const ir::Module &m = *info_.module;
  std::map<std::string, std::vector<double>> out;
  for (int b = 0; b < int(m.buffers.size()); ++b) {
    if (info_.arena[b] != Arena::BodyAdj)
      continue;
    const ir::Buffer &primal = m.buffers[size_t(m.buffers[b].primal)];
    std::vector<double> v(static_cast<size_t>(L_->count[b]));
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = loadF(bytesOf(bodyAdj_) + L_->offset[b], int64_t(i), pop_->f32());
    out[primal.field.empty() ? primal.name : primal.field] = std::move(v);
  }
  return out;
}

std::vector<std::vector<double>>
Rollout::trajectory(Population &pop, int r, const RolloutConfig &cfg, const std::string &field,
                    const std::vector<int64_t> &times, std::vector<std::vector<double>> *outputs,
                    const std::string &outputField) {
  EVOC_ASSERT(lanes_ == 1, "trajectory: a rollout of one episode");
  prepare(pop, r, cfg, false);
  // The scratch buffer of the controller's output, read after each step.
  int ob = -1;
  if (outputs) {
    outputs->clear();
    const ir::Module &m = *info_.module;
    for (int b = 0; b < int(m.buffers.size()); ++b)
      if ((info_.arena[b] == Arena::Temp || info_.arena[b] == Arena::Tape) &&
          (m.buffers[b].field.empty() ? m.buffers[b].name : m.buffers[b].field) == outputField)
        ob = b;
  }
  size_t pending = 0; // requested states whose step output is still to come
  auto readOutput = [&](int64_t step) {
    const int64_t n = L_->count[ob];
    const std::byte *p =
        (info_.arena[ob] == Arena::Tape ? tapeAt(step) : bytesOf(temp_)) + L_->offset[ob];
    std::vector<double> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      v[size_t(i)] = loadF(p, i, pop.f32());
    return v;
  };
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
  for (int64_t t = 0; t < T_ && (next < times.size() || pending > 0); ++t) {
    std::byte *x = slot(t);
    if (t == 0)
      pop.initialState(r, x, cfg.groundHeight, cfg.upAxis, cfg.terrain);
    else
      stepForward(t - 1, slot(t - 1), x);
    if (ob >= 0 && t > 0)
      for (; pending > 0; --pending)
        outputs->push_back(readOutput(t - 1)); // what the step from t - 1 computed
    while (next < times.size() && times[next] == t) {
      if (ob >= 0)
        ++pending;
      std::vector<double> v(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i)
        v[i] = loadF(x + L_->fieldOffset[f], i, pop.f32());
      out.push_back(std::move(v));
      ++next;
    }
  }
  // The last requested state, if no step left it: the step before it.
  for (; ob >= 0 && pending > 0; --pending)
    outputs->push_back(outputs->empty() ? std::vector<double>() : outputs->back());
  if (ob >= 0 && outputs->size() != out.size())
    outputs->clear();
  return out;
}

} // namespace evoc::runtime
