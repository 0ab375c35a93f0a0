// CudaRollout: device memory layout of a population (regions that are zeroed
// together are contiguous; then the robots' command blocks and window
// records), the step and loss pointer tables, and the forward / backward
// launch sequence of the fused rollout kernels.
#include "cuda/CudaRollout.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>

#include "codegen/cuda/CudaBackend.h"
#include "core/Layout.h"
#include "ir/TimeRules.h"
#include "support/Error.h"

namespace evoc::cuda {

using namespace codegen::cuda;
using runtime::Arena;
using runtime::ModuleInfo;

namespace {

/// Where a buffer lives; regions zeroed at the same moment are contiguous.
enum Region { Persistent, Outputs, Grads, Zeroed, Tapes, NumRegions };

int64_t align64(int64_t n) { return (n + 63) & ~int64_t(63); }

} // namespace

struct CudaRollout::Impl {
  DeviceApi *dev; // null: only the layout (deviceBytesNeeded)
  const ir::Module &m;
  int nR, nB, nS;
  int64_t T;
  ModuleInfo mi;                 // the module's contract with the runtime (core/Layout.h)
  KernelPlans plans;             // the back end's plan of every kernel, made once
  RolloutInfo info;              // mi as the fused kernels bind it (the same contract)
  std::vector<int64_t> sizes;    // nR * nS
  std::vector<int> fieldOf;      // buffer -> field index (tape or adjoint tape), -1
  std::vector<Region> region;    // per buffer
  std::vector<int64_t> off, len; // nR * nB: byte offset (-1: none), byte length
  int64_t regionBegin[NumRegions + 1] = {};
  uint64_t base = 0;
  int64_t total = 0;
  uint64_t stepTable = 0, lossTable = 0, dSizes = 0, scratchTable = 0;
  CommandLayout cmd; // the episodes' command tables
  int64_t fb;        // bytes of a float of the module's precision

  Impl(DeviceApi *d, const ir::Module &mod, int n, const int64_t *sz, int64_t steps,
       const CommandLayout &commands)
      : dev(d), m(mod), nR(n), nB(static_cast<int>(mod.buffers.size())),
        nS(static_cast<int>(mod.sets.size())), T(steps), mi(mod), plans(mod), info(rolloutInfo(mi)),
        sizes(sz, sz + static_cast<size_t>(n) * mod.sets.size()), cmd(commands),
        fb(mod.precision == ir::Precision::F64 ? 8 : 4) {
    if (info.step < 0)
      throw Error("the CUDA rollout needs a module with a step kernel.");
    if (T < 2)
      throw Error("the CUDA rollout needs at least 2 states (steps >= 2).");
    checkCommands();
    fieldOf.assign(nB, -1);
    for (size_t f = 0; f < info.fields.size(); ++f) {
      const ir::StateField &F = info.fields[f];
      if (F.stepReads >= 0 && F.stepWrites < 0)
        throw Error("the CUDA rollout needs the step to write every state field it reads "
                    "(field " +
                    F.name + ").");
      for (int b : {F.stepReads, F.stepWrites, F.adjReads, F.adjWrites})
        if (b >= 0)
          fieldOf[b] = static_cast<int>(f);
    }
    classify();
    layout();
    if (!dev)
      return;
    checkFits();
    allocate();
    tables();
  }

  ~Impl() {
    if (base)
      dev->free(base);
  }

  /// A module that reads commands needs their layout, wide enough for every
  /// command buffer (the CPU rollout asserts the same per call).
  void checkCommands() {
    if (!mi.readsCommands) {
      cmd = {};
      return;
    }
    if (cmd.columns < 1 || cmd.rows < 1)
      throw Error("the experiment reads commands, but the CUDA rollout was given no command "
                  "table layout");
    for (const ir::Buffer &B : m.buffers)
      if (B.role == ir::Role::Command && B.column + B.comps > cmd.columns)
        throw Error("command buffer '" + B.name + "' lies outside the command row");
  }
  int64_t commandBlockBytes() const {
    return cmd.columns > 0 ? align64(kCommandHeaderBytes + cmd.rows * cmd.columns * fb) : 0;
  }
  /// Where the loss kernels (run at T-1) read command buffer b of robot r.
  uint64_t commandAt(int b, int r) const {
    const ir::Buffer &B = m.buffers[size_t(b)];
    const int64_t row =
        ir::commandRow(ir::stepOf(B.time, B.fixedTime, T - 1, T), cmd.period, cmd.rows);
    return base + uint64_t(cmdOff + r * commandBlockBytes() + kCommandHeaderBytes +
                           (row * cmd.columns + B.column) * fb);
  }

  /// Refuses a population the device cannot hold, before anything is
  /// allocated.
  void checkFits() {
    const int64_t tapes = regionBegin[Tapes + 1] - regionBegin[Tapes];
    char share[160];
    std::snprintf(share, sizeof share,
                  "%.2f GiB of it the full tapes of %lld states and kept temporaries",
                  double(tapes) / double(1ull << 30), static_cast<long long>(T));
    checkDeviceMemory(dev->memory(), total,
                      "the CUDA rollout of " + std::to_string(nR) + " robots x " +
                          std::to_string(T) + " states (" + share + ")",
                      "lower evolve.population (the robots rolled out together), world.steps "
                      "(every state of a robot stays on the GPU) or the body's size");
  }

  int tapeBuffer(int f) const { return info.fields[f].tape(); }
  int adjTapeBuffer(int f) const { return info.fields[f].adjTape(); }
  int fieldByName(const std::string &n) const {
    for (size_t f = 0; f < info.fields.size(); ++f)
      if (info.fields[f].name == n)
        return static_cast<int>(f);
    return -1;
  }
  std::string fieldName(int b) const {
    return m.buffers[b].field.empty() ? m.buffers[b].name : m.buffers[b].field;
  }
  /// The state index a loss kernel's State buffer refers to: the loss
  /// kernels run once, at t = T - 1 (ir/TimeRules.h).
  int64_t stateIndex(const ir::Buffer &B) const {
    return std::clamp<int64_t>(ir::stepOf(B.time, B.fixedTime, T - 1, T), 0, T - 1);
  }

  // Regions by the runtime's arenas: tapes for the step's state fields,
  // gradients (of parameters and bodies), outputs, and what is zeroed before
  // a sweep (temps and every other adjoint); bodies, parameters and states
  // no step writes persist.
  void classify() {
    region.assign(nB, Persistent);
    for (int b = 0; b < nB; ++b) {
      const int f = fieldOf[b];
      if (f >= 0 && (b == info.fields[f].stepReads || b == info.fields[f].stepWrites)) {
        region[b] = Tapes;
        continue;
      }
      switch (mi.arena[size_t(b)]) {
      case Arena::Output:
        region[b] = Outputs;
        break;
      case Arena::Grad:
      case Arena::BodyAdj:
        region[b] = Grads;
        break;
      case Arena::Tape: // kept per step: a tape like a state field's
        region[b] = Tapes;
        break;
      case Arena::Temp:
      case Arena::TempAdj:
      case Arena::OutputAdj:
      case Arena::StateAdj:
        region[b] = Zeroed; // temps, their adjoints, adjoint tapes, loss.adj, pinned adjoints
        break;
      case Arena::Command: // the robot's command block (layout)
        region[b] = NumRegions;
        break;
      case Arena::Body:
      case Arena::Param:
      case Arena::State:
        break;
      }
    }
  }

  int64_t bytes(int b, int r) const {
    int64_t n = ir::bufferLength(m, b, sizes.data() + static_cast<size_t>(r) * nS);
    return n * (m.buffers[b].elem == ir::Type::I ? 4 : (m.precision == ir::Precision::F64 ? 8 : 4));
  }

  void layout() {
    off.assign(static_cast<size_t>(nR) * nB, -1);
    len.assign(off.size(), 0);
    int64_t top = 0;
    for (int reg = 0; reg < NumRegions; ++reg) {
      regionBegin[reg] = top;
      // Buffer-major: buffer b of every robot is one contiguous run, so a
      // whole population's buffer moves in one copy (uploadAll).
      for (int b = 0; b < nB; ++b)
        for (int r = 0; r < nR; ++r) {
          if (region[b] != reg)
            continue;
          int f = fieldOf[b];
          // State and NextState of a field share one tape; adjoints two slots.
          if (f >= 0 && reg == Tapes && b != tapeBuffer(f))
            continue;
          if (f >= 0 && reg == Zeroed && b != adjTapeBuffer(f))
            continue;
          size_t i = static_cast<size_t>(r) * nB + b;
          len[i] = bytes(b, r);
          int64_t copies = reg == Tapes ? T : (f >= 0 ? info.adjSlots : 1);
          off[i] = top;
          top += align64(len[i] * copies);
        }
    }
    regionBegin[NumRegions] = top;
    // Command blocks, robot after robot (one upload per episode), then the
    // reduced windows' records.
    cmdOff = top;
    for (int r = 0; r < nR; ++r)
      for (int b = 0; b < nB; ++b)
        if (region[b] == NumRegions) {
          size_t i = static_cast<size_t>(r) * nB + b;
          off[i] = cmdOff + r * commandBlockBytes();
          len[i] = bytes(b, r);
        }
    top += nR * commandBlockBytes();
    windowOff = top;
    if (!info.lossSteps.empty())
      top += align64(int64_t(nR) * std::max(info.windowSlots, 1) * kWindowRecordBytes);
    // Fields: the partner buffer points at the same tape.
    for (int r = 0; r < nR; ++r)
      for (int b = 0; b < nB; ++b) {
        int f = fieldOf[b];
        if (f < 0)
          continue;
        int owner = region[b] == Tapes ? tapeBuffer(f) : adjTapeBuffer(f);
        size_t i = static_cast<size_t>(r) * nB + b, o = static_cast<size_t>(r) * nB + owner;
        off[i] = off[o];
        len[i] = bytes(b, r);
      }
    scratchOff.assign(static_cast<size_t>(nR), 0);
    for (int r = 0; r < nR; ++r) {
      const int64_t scratchPerRobot = plans.maxScratchBytes(sizes.data() + size_t(r) * nS);
      scratchOff[r] = top;
      top += align64(scratchPerRobot + 8);
    }
    tablesOff = top;
    top += align64(int64_t(nR) * nB * 8) * 2 + align64(int64_t(nR) * nS * 8) +
           align64(int64_t(nR) * 8);
    total = top;
  }
  int64_t tablesOff = 0;             // the pointer tables, sizes and scratch table
  int64_t cmdOff = 0, windowOff = 0; // command blocks, window records
  std::vector<int64_t> scratchOff;   // per robot

  void allocate() {
    base = dev->alloc(static_cast<size_t>(total));
    stepTable = base + tablesOff;
    lossTable = stepTable + align64(int64_t(nR) * nB * 8);
    dSizes = lossTable + align64(int64_t(nR) * nB * 8);
    scratchTable = dSizes + align64(int64_t(nR) * nS * 8);
    std::vector<uint64_t> scr(nR);
    for (int r = 0; r < nR; ++r)
      scr[r] = base + scratchOff[r];
    dev->upload(scratchTable, scr.data(), scr.size() * 8);
    dev->upload(dSizes, sizes.data(), sizes.size() * 8);
  }

  void tables() {
    std::vector<uint64_t> step(static_cast<size_t>(nR) * nB, 0), lossT;
    for (size_t i = 0; i < step.size(); ++i)
      if (off[i] >= 0)
        step[i] = base + static_cast<uint64_t>(off[i]);
    lossT = step;
    // Loss kernels see states at fixed times of the tapes, and the adjoint
    // of the last state lands in the slot the backward sweep starts from.
    for (int b = 0; b < nB; ++b) {
      const ir::Buffer &B = m.buffers[b];
      bool state = B.role == ir::Role::State;
      bool stateAdj = B.role == ir::Role::Adjoint && m.buffers[B.primal].role == ir::Role::State;
      if (!state && !stateAdj)
        continue;
      const ir::Buffer &P = state ? B : m.buffers[B.primal];
      int f = fieldByName(P.field.empty() ? P.name : P.field);
      if (f < 0)
        continue; // a state no step writes: not a tape (uploaded as is)
      int64_t t = stateIndex(P);
      for (int r = 0; r < nR; ++r) {
        size_t i = static_cast<size_t>(r) * nB + b;
        size_t ti = static_cast<size_t>(r) * nB + tapeBuffer(f);
        int64_t l = bytes(b, r);
        if (state) {
          lossT[i] = base + static_cast<uint64_t>(off[ti] + t * l);
        } else if (t == T - 1 && adjTapeBuffer(f) >= 0) {
          size_t ai = static_cast<size_t>(r) * nB + adjTapeBuffer(f);
          lossT[i] = base + static_cast<uint64_t>(off[ai] + ((T - 1) % info.adjSlots) * l);
        }
      }
    }
    for (int b = 0; b < nB; ++b)
      if (region[b] == NumRegions)
        for (int r = 0; r < nR; ++r)
          lossT[static_cast<size_t>(r) * nB + b] = commandAt(b, r);
    dev->upload(stepTable, step.data(), step.size() * 8);
    dev->upload(lossTable, lossT.data(), lossT.size() * 8);
    lossTableHost = std::move(lossT);
  }
  std::vector<uint64_t> lossTableHost;

  void zeroRegion(Region reg) {
    if (regionBegin[reg + 1] > regionBegin[reg])
      dev->zero(base + regionBegin[reg],
                static_cast<size_t>(regionBegin[reg + 1] - regionBegin[reg]));
  }
};

CudaRollout::CudaRollout(const CudaExecutable &exe, const ir::Module &m, int nRobots,
                         const int64_t *sizes, int64_t T, const CommandLayout &commands)
    : p_(std::make_unique<Impl>(&exe.device(), m, nRobots, sizes, T, commands)) {}

CudaRollout::~CudaRollout() = default;

void CudaRollout::upload(int b, int r, const void *host) {
  size_t i = static_cast<size_t>(r) * p_->nB + b;
  EVOC_ASSERT(p_->off[i] >= 0, "CudaRollout::upload: buffer has no device memory");
  p_->dev->upload(p_->base + p_->off[i], host, static_cast<size_t>(p_->len[i]));
}

void CudaRollout::download(int b, int r, void *host) const {
  size_t i = static_cast<size_t>(r) * p_->nB + b;
  EVOC_ASSERT(p_->off[i] >= 0, "CudaRollout::download: buffer has no device memory");
  int64_t at = p_->off[i];
  if (p_->region[b] == Tapes)
    at += (p_->T - 1) * p_->len[i]; // the last state
  p_->dev->download(host, p_->base + at, static_cast<size_t>(p_->len[i]));
}

/// The contiguous device run of buffer b over all robots: [first, end).
static std::pair<int64_t, int64_t> run(const std::vector<int64_t> &off,
                                       const std::vector<int64_t> &len, int nR, int nB, int b) {
  size_t last = static_cast<size_t>(nR - 1) * nB + b;
  return {off[static_cast<size_t>(b)], off[last] + len[last]};
}

void CudaRollout::uploadAll(int b, const void *const *host) {
  Impl &p = *p_;
  EVOC_ASSERT(p.off[static_cast<size_t>(b)] >= 0, "CudaRollout::uploadAll: no device memory");
  auto [first, end] = run(p.off, p.len, p.nR, p.nB, b);
  // Tapes: x[0] of every robot sits at its tape's start, but the tapes
  // interleave T states; copy robot by robot there.
  if (p.region[b] == Tapes) {
    for (int r = 0; r < p.nR; ++r)
      upload(b, r, host[r]);
    return;
  }
  std::vector<char> stage(static_cast<size_t>(end - first), 0);
  for (int r = 0; r < p.nR; ++r) {
    size_t i = static_cast<size_t>(r) * p.nB + b;
    std::memcpy(stage.data() + (p.off[i] - first), host[r], static_cast<size_t>(p.len[i]));
  }
  p.dev->upload(p.base + first, stage.data(), stage.size());
}

void CudaRollout::downloadAll(int b, void *const *host) const {
  const Impl &p = *p_;
  EVOC_ASSERT(p.off[static_cast<size_t>(b)] >= 0, "CudaRollout::downloadAll: no device memory");
  if (p.region[b] == Tapes) {
    for (int r = 0; r < p.nR; ++r)
      download(b, r, host[r]);
    return;
  }
  auto [first, end] = run(p.off, p.len, p.nR, p.nB, b);
  std::vector<char> stage(static_cast<size_t>(end - first));
  p.dev->download(stage.data(), p.base + first, stage.size());
  for (int r = 0; r < p.nR; ++r) {
    size_t i = static_cast<size_t>(r) * p.nB + b;
    std::memcpy(host[r], stage.data() + (p.off[i] - first), static_cast<size_t>(p.len[i]));
  }
}

void CudaRollout::uploadCommands(const double *const *values) {
  Impl &p = *p_;
  const int64_t block = p.commandBlockBytes();
  if (block == 0)
    return;
  std::vector<char> stage(static_cast<size_t>(p.nR * block), 0);
  const int64_t n = p.cmd.rows * p.cmd.columns;
  for (int r = 0; r < p.nR; ++r) {
    char *b = stage.data() + r * block;
    const int64_t head[4] = {p.cmd.period, p.cmd.rows, p.cmd.columns, p.T};
    std::memcpy(b, head, sizeof head);
    for (int64_t i = 0; i < n; ++i) {
      char *at = b + kCommandHeaderBytes + i * p.fb;
      if (p.fb == 8)
        std::memcpy(at, &values[r][i], 8);
      else {
        const auto f = static_cast<float>(values[r][i]); // as the CPU's storeF
        std::memcpy(at, &f, 4);
      }
    }
  }
  p.dev->upload(p.base + uint64_t(p.cmdOff), stage.data(), stage.size());
}

void CudaRollout::forward() {
  Impl &p = *p_;
  p.zeroRegion(Outputs);
  p.dev->launch("evoc_rollout_forward", p.nR, {p.stepTable, p.dSizes, p.scratchTable, 0, p.T - 1});
  if (!p.info.lossSteps.empty())
    p.dev->launch("evoc_rollout_losses", p.nR,
                  {p.stepTable, p.dSizes, p.scratchTable, p.T, int64_t(p.base) + p.windowOff});
  for (int k : p.mi.loss) {
    p.zeroRegion(Zeroed);
    p.dev->launch(kernelSymbol(k), p.nR, {p.lossTable, p.dSizes, p.scratchTable, p.T - 1, 0});
  }
}

void CudaRollout::backward() {
  Impl &p = *p_;
  if (p.info.stepAdj < 0)
    throw Error("the module was not differentiated: no step adjoint to run.");
  p.zeroRegion(Zeroed);
  const int seed = p.mi.lossOutputAdj; // the loss's adjoint, seeded with 1
  if (seed >= 0) {
    double one = 1.0;
    float onef = 1.0f;
    for (int r = 0; r < p.nR; ++r)
      p.dev->upload(p.lossTableHost[static_cast<size_t>(r) * p.nB + seed],
                    p.m.precision == ir::Precision::F64 ? static_cast<const void *>(&one) : &onef,
                    p.m.precision == ir::Precision::F64 ? 8 : 4);
  }
  for (int k : p.mi.lossAdj)
    p.dev->launch(kernelSymbol(k), p.nR, {p.lossTable, p.dSizes, p.scratchTable, p.T - 1, 0});
  p.dev->launch("evoc_rollout_backward", p.nR,
                {p.stepTable, p.dSizes, p.scratchTable, p.T, int64_t(p.base) + p.windowOff});
  if (!p.m.products.empty() && p.T > 1) // the weight gradients of all T - 1 steps at once
    p.dev->launch("evoc_rollout_products", p.nR,
                  {p.stepTable, p.dSizes, p.scratchTable, p.T - 2, 0});
}

void CudaRollout::launch(const std::string &symbol, uint64_t scratch, int64_t a, int64_t b) {
  p_->dev->launch(symbol, p_->nR, {p_->stepTable, p_->dSizes, scratch, a, b});
}

DeviceApi &CudaRollout::device() const { return *p_->dev; }

const std::string &CudaRollout::fieldName(int f) const {
  return p_->info.fields.at(size_t(f)).name;
}

const ir::StateField &CudaRollout::field(int f) const { return p_->info.fields.at(size_t(f)); }

void CudaRollout::zeroGradients() { p_->zeroRegion(Grads); }

int64_t CudaRollout::deviceBytes() const { return p_->total; }

int64_t CudaRollout::deviceBytesNeeded(const ir::Module &m, int nRobots, const int64_t *sizes,
                                       int64_t T, const CommandLayout &commands) {
  return Impl(nullptr, m, nRobots, sizes, T, commands).total;
}

} // namespace evoc::cuda
