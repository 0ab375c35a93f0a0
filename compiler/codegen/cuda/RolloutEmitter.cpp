// The fused rollout kernels: evoc_rollout_forward runs steps [a, b) of every
// robot (one block each) in one launch; evoc_rollout_losses runs the per-step
// losses over the T states of the tapes and reduces their windows;
// evoc_rollout_backward runs the per-step loss adjoints and the step
// adjoints from the last state down to t = 0. State pointers advance inside
// the kernel.
//
// Tape ABI (CudaRollout sets it up): for each state field, the table entries
// of its State and NextState buffers both hold the base of a tape of T
// states; those of their adjoints both hold a ring of RolloutInfo::adjSlots
// slots (slot t % adjSlots holds adj x[t]; t & 1 when there are two). A Temp
// the step keeps (Buffer::tape) has a tape of T - 1 steps like a state: step
// t writes slot t from zero, step.adj at t reads it. The other Temps are
// zeroed by the block before every call, as the IR contract asks. A Command
// buffer's entry holds its robot's command block (kCommandHeaderBytes of
// period, rows, columns and T, then the rows); the kernels point it at the
// row of the time it is read at, as the CPU rollout does.
//
// evoc_rollout_losses (a = T, b = the window records: windowSlots records of
// kWindowRecordBytes per robot) and evoc_rollout_backward (a = T, b = the
// same records) follow runtime/core/Rollout.cpp's forwardLossSteps and
// backwardLossSteps step for step: same kernel order, same seeds, the
// window reductions in double.
#include <algorithm>
#include <set>
#include <sstream>

#include "codegen/cuda/Internal.h"
#include "codegen/cuda/KernelPlan.h"
#include "ir/Names.h"
#include "ir/TimeRules.h"

namespace evoc::codegen::cuda {
namespace {

std::string fieldOf(const ir::Buffer &b) { return b.field.empty() ? b.name : b.field; }

std::set<int> usedBuffers(const std::vector<KernelPlan> &plans, int k) {
  const KernelPlan &p = plans[size_t(k)];
  std::set<int> u = p.loaded;
  u.insert(p.stored.begin(), p.stored.end());
  u.insert(p.accumulated.begin(), p.accumulated.end());
  return u;
}

/// Bytes of buffer b for the robot whose sizes are in `sizes`.
std::string bytesExpr(const ir::Module &m, int b) {
  return "(" + lengthExpr(m, b) + " * " +
         (m.buffers[b].elem == ir::Type::I ? "4" : "(long long)sizeof(F)") + ")";
}

} // namespace

std::string lengthExpr(const ir::Module &m, int b) {
  const ir::Buffer &B = m.buffers[b];
  std::string e = "(" + std::to_string(B.comps) + "LL";
  for (int s : B.sets)
    e += " * sizes[" + std::to_string(s) + "]";
  return e + ")";
}

RolloutInfo rolloutInfo(const ir::RolloutContract &c) {
  RolloutInfo info;
  info.step = c.step;
  info.stepAdj = c.stepAdj;
  for (const ir::StateField &f : c.fields)
    if (f.taped())
      info.fields.push_back(f);
  if (c.step >= 0) {
    info.stepZero = c.scratchZero[size_t(c.step)];
    info.stepZero.insert(info.stepZero.end(), c.keptZero.begin(), c.keptZero.end());
  }
  if (c.stepAdj >= 0)
    info.adjZero = c.scratchZero[size_t(c.stepAdj)];
  info.kept = c.kept;
  for (size_t i = 0; i < c.lossStep.size(); ++i)
    info.lossSteps.push_back({c.lossStep[i], i < c.lossStepAdj.size() ? c.lossStepAdj[i] : -1});
  info.adjSlots = c.adjSlots;
  info.windowSlots = c.windowSlots;
  return info;
}

namespace {

/// Writes the fused rollout kernels of one module.
class RolloutWriter {
public:
  RolloutWriter(const ir::Module &m, const RolloutInfo &info, const std::vector<KernelPlan> &plans)
      : m_(m), info_(info), plans_(plans), nb_(std::to_string(m.buffers.size())),
        ns_(std::to_string(m.sets.size())) {
    loss_ = m.findBuffer(ir::names::kLoss);
    sample_ = m.findBuffer(ir::names::kLossSample);
    for (size_t b = 0; b < m.buffers.size(); ++b) {
      const ir::Buffer &B = m.buffers[b];
      if (B.role == ir::Role::Window)
        window_ = int(b);
      if (B.role == ir::Role::Command)
        commands_ = true;
      if (B.role == ir::Role::State && B.time == ir::TimeRef::Fixed)
        fixedStates_ = true;
    }
    for (size_t b = 0; b < m.buffers.size(); ++b) {
      const ir::Buffer &B = m.buffers[b];
      if (B.role != ir::Role::Adjoint)
        continue;
      if (B.primal == loss_ && loss_ >= 0)
        lossAdj_ = int(b);
      if (B.primal == sample_ && sample_ >= 0)
        sampleAdj_ = int(b);
      if (B.primal == window_ && window_ >= 0)
        windowAdj_ = int(b);
    }
    reduce_.assign(size_t(info.windowSlots), ir::WindowReduce::Sum);
    for (const RolloutLossStep &ls : info.lossSteps) {
      const ir::Kernel &K = m.kernels[size_t(ls.kernel)];
      if (K.windowSlot >= 0 && K.windowSlot < info.windowSlots)
        reduce_[size_t(K.windowSlot)] = K.windowReduce;
    }
  }

  std::string run() {
    if (info_.step < 0)
      return "";
    helpers();
    header("evoc_rollout_forward");
    o_ << "  for (long long t = evoc_a; t < evoc_b; ++t) {\n";
    bind(false, commandsOf({info_.step}));
    for (int b : info_.stepZero)
      o_ << "    evoc_zero(evoc_ptrs[" << b << "], " << bytesExpr(m_, b) << ");\n";
    o_ << "    __syncthreads();\n"
       << "    evoc_body" << info_.step << "(evoc_ptrs, sizes, scratch, t, evoc_sh, t == evoc_a);\n"
       << "    __syncthreads();\n  }\n}\n";
    if (!info_.lossSteps.empty())
      losses();
    if (info_.stepAdj >= 0)
      backward();
    if (info_.stepAdj >= 0 && !m_.products.empty())
      products();
    return o_.str();
  }

private:
  void helpers() {
    o_ << "\n// Fused rollout kernels (tape ABI: see docs/architecture.md, CUDA back end).\n"
       << "static __device__ void evoc_zero(void *p, long long bytes) {\n"
       << "  int *q = (int *)p;\n"
       << "  for (long long i = threadIdx.x; i < bytes / 4; i += EVOC_BLOCK) q[i] = 0;\n"
       << "}\n";
    if (commands_)
      o_ << "// The row of a robot's command block in force at `when` (ir/TimeRules.h).\n"
         << ir::kCommandRowCuda
         << "static __device__ void *evoc_command(void *block, long long when, long long column) "
            "{\n"
         << "  const long long *h = (const long long *)block; // period, rows, columns, T\n"
         << "  long long row = EVOC_COMMAND_ROW(when, h[0], h[1]);\n"
         << "  return (char *)block + " << kCommandHeaderBytes
         << " + (row * h[2] + column) * (long long)sizeof(F);\n"
         << "}\n";
    if (info_.windowSlots > 0)
      o_ << "struct evoc_window { double value, adj; long long arg, count; }; // "
         << kWindowRecordBytes << " bytes\n";
  }

  void header(const char *name) {
    o_ << kernelHead(name) << "  __shared__ F evoc_sh[EVOC_BLOCK];\n"
       << "  __shared__ void *evoc_ptrs[" << nb_ << "];\n"
       << "  void *const *table = evoc_buffers + (long long)blockIdx.x * " << nb_ << ";\n"
       << "  const long long *sizes = evoc_sizes + (long long)blockIdx.x * " << ns_ << ";\n"
       << "  char *scratch = evoc_scratch[blockIdx.x];\n";
  }

  /// The adjoint ring slot of time `t` (an expression).
  std::string slot(const std::string &t) const {
    if (info_.adjSlots == 2)
      return t == "t" ? "(t & 1)" : "((" + t + ") & 1)";
    return "((" + t + ") % " + std::to_string(info_.adjSlots) + ")";
  }

  const ir::StateField *field(const ir::Buffer &B) const {
    for (const ir::StateField &f : info_.fields)
      if (f.name == fieldOf(B))
        return &f;
    return nullptr;
  }

  /// The time a State or Command buffer is read at, as an expression
  /// (evoc_T: the rollout's states, in the kernels that know it).
  std::string when(int b) const {
    const ir::Buffer &B = m_.buffers[size_t(b)];
    switch (B.time) {
    case ir::TimeRef::Current:
      return "t";
    case ir::TimeRef::Offset:
      return "t + (" + std::to_string(B.fixedTime) + ")";
    case ir::TimeRef::First:
      return "0";
    case ir::TimeRef::Last:
      return B.role == ir::Role::Command
                 ? "((const long long *)table[" + std::to_string(b) + "])[3] - 1"
                 : "evoc_T - 1";
    case ir::TimeRef::Fixed:
      return std::to_string(B.fixedTime);
    }
    return "t";
  }

  std::set<int> used(const std::vector<int> &kernels) const {
    std::set<int> u;
    for (int k : kernels)
      if (k >= 0) {
        std::set<int> uk = usedBuffers(plans_, k);
        u.insert(uk.begin(), uk.end());
      }
    return u;
  }
  std::set<int> commandsOf(const std::vector<int> &kernels) const {
    std::set<int> out;
    for (int b : used(kernels))
      if (m_.buffers[size_t(b)].role == ir::Role::Command)
        out.insert(b);
    return out;
  }

  /// Thread 0 points the table's entries at time t: the step's fields (and
  /// with `adjoint` their adjoint ring), its kept temps, and the buffers in
  /// `extra` (states at other times and their adjoints, commands).
  void bind(bool adjoint, const std::set<int> &extra) {
    o_ << "    if (threadIdx.x == 0) {\n"
       << "      for (int i = 0; i < " << nb_ << "; ++i) evoc_ptrs[i] = table[i];\n";
    for (const ir::StateField &f : info_.fields) {
      int any = f.tape();
      o_ << "      { // field " << f.name << "\n"
         << "        char *tape = (char *)table[" << any << "];\n"
         << "        long long len = " << bytesExpr(m_, any) << ";\n";
      if (f.stepReads >= 0)
        o_ << "        evoc_ptrs[" << f.stepReads << "] = tape + t * len;\n";
      if (f.stepWrites >= 0)
        o_ << "        evoc_ptrs[" << f.stepWrites << "] = tape + (t + 1) * len;\n";
      int adj = f.adjTape();
      if (adjoint && adj >= 0) {
        o_ << "        char *atape = (char *)table[" << adj << "];\n";
        if (f.adjReads >= 0)
          o_ << "        evoc_ptrs[" << f.adjReads << "] = atape + " << slot("t") << " * len;\n";
        if (f.adjWrites >= 0)
          o_ << "        evoc_ptrs[" << f.adjWrites << "] = atape + " << slot("t + 1")
             << " * len;\n";
      }
      o_ << "      }\n";
    }
    for (int b : info_.kept)
      o_ << "      evoc_ptrs[" << b << "] = (char *)table[" << b << "] + t * " << bytesExpr(m_, b)
         << "; // kept temp " << m_.buffers[b].name << "\n";
    for (int b : extra)
      bindExtra(b, adjoint);
    o_ << "    }\n    __syncthreads();\n";
  }

  void bindExtra(int b, bool adjoint) {
    const ir::Buffer &B = m_.buffers[size_t(b)];
    if (B.role == ir::Role::Command) {
      o_ << "      evoc_ptrs[" << b << "] = evoc_command(table[" << b << "], " << when(b) << ", "
         << B.column << "); // " << B.name << "\n";
      return;
    }
    const bool adj =
        B.role == ir::Role::Adjoint && m_.buffers[size_t(B.primal)].role == ir::Role::State;
    if (B.role != ir::Role::State && !adj)
      return;
    const int p = adj ? B.primal : b;
    const ir::StateField *f = field(m_.buffers[size_t(p)]);
    if (!f || b == f->stepReads || b == f->stepWrites ||
        (adjoint && (b == f->adjReads || b == f->adjWrites)))
      return;
    const ir::TimeRef time = m_.buffers[size_t(p)].time;
    // A pinned time's adjoint keeps its own buffer, merged at its time.
    if (adj && (!adjoint || (time != ir::TimeRef::Current && time != ir::TimeRef::Offset)))
      return;
    const int tape = adj ? f->adjTape() : f->tape();
    if (tape < 0)
      return;
    o_ << "      evoc_ptrs[" << b << "] = (char *)table[" << tape << "] + "
       << (adj ? slot(when(p)) : "(" + when(p) + ")") << " * " << bytesExpr(m_, tape) << "; // "
       << B.name << "\n";
  }

  /// What the CPU rollout zeroes before a per-step loss kernel (or its
  /// adjoint) runs: its temps, their adjoints and the outputs' adjoints.
  std::vector<int> zeroed(int k) const {
    std::vector<int> out;
    for (int b : usedBuffers(plans_, k)) {
      const ir::Buffer &B = m_.buffers[size_t(b)];
      if (B.role == ir::Role::Temp && !B.tape)
        out.push_back(b);
      if (B.role == ir::Role::Adjoint) {
        const ir::Role r = m_.buffers[size_t(B.primal)].role;
        if (r == ir::Role::Temp || r == ir::Role::Output || r == ir::Role::Window)
          out.push_back(b);
      }
    }
    return out;
  }

  std::string inWindow(const ir::Kernel &K) const {
    std::string end = K.windowEnd < 0 ? "evoc_T + (" + std::to_string(K.windowEnd) + ")"
                                      : std::to_string(K.windowEnd);
    return "t >= " + std::to_string(K.windowBegin) + " && t <= " + end;
  }

  std::string windows() const {
    return "  evoc_window *W = (evoc_window *)evoc_b + (long long)blockIdx.x * " +
           std::to_string(info_.windowSlots) + ";\n";
  }

  std::vector<int> lossKernels(bool adjoint) const {
    std::vector<int> ks;
    for (const RolloutLossStep &ls : info_.lossSteps)
      ks.push_back(adjoint ? ls.adjoint : ls.kernel);
    return ks;
  }

  // forwardLossSteps at every t, then the windows as the CPU rollout writes them.
  void losses() {
    header("evoc_rollout_losses");
    o_ << "  const long long evoc_T = evoc_a;\n";
    const int S = info_.windowSlots;
    if (S > 0)
      o_ << windows() << "  if (threadIdx.x == 0)\n"
         << "    for (int s = 0; s < " << S << "; ++s) { W[s].value = 0; W[s].adj = 0; "
         << "W[s].arg = -1; W[s].count = 0; }\n";
    o_ << "  for (long long t = 0; t < evoc_T; ++t) {\n";
    bind(false, used(lossKernels(false)));
    for (const RolloutLossStep &ls : info_.lossSteps) {
      const ir::Kernel &K = m_.kernels[size_t(ls.kernel)];
      const bool sampled = K.windowSlot >= 0 && sample_ >= 0;
      o_ << "    if (" << inWindow(K) << ") { // " << K.name << "\n";
      for (int z : zeroed(ls.kernel))
        o_ << "      evoc_zero(evoc_ptrs[" << z << "], " << bytesExpr(m_, z) << ");\n";
      if (sampled)
        o_ << "      if (threadIdx.x == 0) ((F *)evoc_ptrs[" << sample_ << "])[" << K.windowSlot
           << "] = (F)0;\n";
      o_ << "      __syncthreads();\n"
         << "      evoc_body" << ls.kernel << "(evoc_ptrs, sizes, scratch, t, evoc_sh, 1);\n"
         << "      __syncthreads();\n";
      if (sampled) {
        o_ << "      if (threadIdx.x == 0) {\n"
           << "        evoc_window &w = W[" << K.windowSlot << "];\n"
           << "        const double v = (double)((const F *)evoc_ptrs[" << sample_ << "])["
           << K.windowSlot << "];\n"
           << "        const bool first = w.count++ == 0;\n";
        switch (K.windowReduce) {
        case ir::WindowReduce::Sum:
        case ir::WindowReduce::Mean:
          o_ << "        w.value = first ? v : w.value + v;\n";
          break;
        case ir::WindowReduce::Max: // the first time the maximum is reached carries it
          o_ << "        if (first || v > w.value) { w.value = v; w.arg = t; }\n";
          break;
        case ir::WindowReduce::Min:
          o_ << "        if (first || v < w.value) { w.value = v; w.arg = t; }\n";
          break;
        }
        o_ << "      }\n      __syncthreads();\n";
      }
      o_ << "    }\n";
    }
    o_ << "  }\n";
    if (S > 0 && window_ >= 0) {
      o_ << "  if (threadIdx.x == 0) {\n"
         << "    F *win = (F *)table[" << window_ << "];\n";
      for (int s = 0; s < S; ++s)
        if (reduce_[size_t(s)] == ir::WindowReduce::Mean)
          o_ << "    win[" << s << "] = (F)(W[" << s << "].value / (double)(W[" << s
             << "].count > 1 ? W[" << s << "].count : 1));\n";
        else
          o_ << "    win[" << s << "] = (F)W[" << s << "].value;\n";
      o_ << "  }\n";
    }
    o_ << "}\n";
  }

  /// Whether a kernel uses the robot's scratch (records, incidence lists).
  bool usesScratch(int k) const {
    return k >= 0 && (!plans_[size_t(k)].sites.empty() || !plans_[size_t(k)].groups.empty());
  }

  // The weight gradients' window products (ir::WindowProduct) over the steps
  // [evoc_b, evoc_a] of the tapes: one thread per gradient entry, adding the
  // terms latest step first as step.adj did (Executable::windowProduct).
  void products() {
    header("evoc_rollout_products");
    for (const ir::WindowProduct &p : m_.products)
      o_ << "  { // " << m_.buffers[p.grad].name << " += sum_t " << m_.buffers[p.rows].name
         << "_t x " << m_.buffers[p.x].name << "_t\n"
         << "    const long long S = " << lengthExpr(m_, p.rows) << ", U = " << lengthExpr(m_, p.x)
         << ";\n"
         << "    F *g = (F *)table[" << p.grad << "];\n"
         << "    const F *rows = (const F *)table[" << p.rows << "], *x = (const F *)table[" << p.x
         << "];\n"
         << "    for (long long i = threadIdx.x; i < S * U; i += EVOC_BLOCK) {\n"
         << "      const long long s = i / U, u = i % U;\n"
         << "      F acc = g[i];\n"
         << "      for (long long t = evoc_a; t >= evoc_b; --t) {\n"
         << "        const F r = rows[t * S + s];\n"
         << "        acc += r == F(0) ? F(0) : r * x[t * U + u];\n"
         << "      }\n"
         << "      g[i] = acc;\n"
         << "    }\n  }\n";
    o_ << "  (void)scratch; (void)sizes; (void)evoc_sh; (void)evoc_ptrs;\n}\n";
  }

  void backward() {
    header("evoc_rollout_backward");
    o_ << "  const long long evoc_T = evoc_a;\n";
    // Adjoints of states at pinned times, merged into adj x[t] at their time
    // (the loss kernels' table points x[T-1]'s straight into the ring).
    std::vector<int> pinned;
    for (size_t b = 0; b < m_.buffers.size(); ++b) {
      const ir::Buffer &B = m_.buffers[b];
      if (B.role != ir::Role::Adjoint || m_.buffers[size_t(B.primal)].role != ir::Role::State)
        continue;
      const ir::TimeRef time = m_.buffers[size_t(B.primal)].time;
      const ir::StateField *f = field(m_.buffers[size_t(B.primal)]);
      if (f && f->adjTape() >= 0 && (time == ir::TimeRef::Fixed || time == ir::TimeRef::Last))
        pinned.push_back(int(b)); // (x[0]'s adjoint reaches nothing: not merged)
    }
    if (info_.lossSteps.empty() && !fixedStates_) {
      // Only the step adjoint: each call writes adj x[t] afresh.
      o_ << "  for (long long t = evoc_T - 2; t >= 0; --t) {\n";
      bind(true, commandsOf({info_.stepAdj}));
      for (const ir::StateField &f : info_.fields)
        if (f.adjReads >= 0)
          o_ << "    evoc_zero(evoc_ptrs[" << f.adjReads << "], " << bytesExpr(m_, f.adjReads)
             << ");\n";
      stepAdjoint("t == evoc_T - 2");
      o_ << "  }\n}\n";
      return;
    }
    // backwardLossSteps at t, the step adjoint at t, the pinned adjoints of
    // time t; adj x[t + 1] is then zeroed for its reuse (the CPU's ring).
    const int S = info_.windowSlots;
    if (S > 0) {
      o_ << windows();
      if (windowAdj_ >= 0)
        o_ << "  if (threadIdx.x == 0)\n"
           << "    for (int s = 0; s < " << S << "; ++s) W[s].adj = (double)((const F *)table["
           << windowAdj_ << "])[s];\n"
           << "  __syncthreads();\n";
    }
    std::vector<int> ks = lossKernels(true);
    ks.push_back(info_.stepAdj);
    bool shared = false; // a per-step loss adjoint overwrites the step adjoint's scratch
    for (const RolloutLossStep &ls : info_.lossSteps)
      shared = shared || usesScratch(ls.adjoint);
    o_ << "  for (long long t = evoc_T - 1; t >= 0; --t) {\n";
    bind(true, used(ks));
    for (const RolloutLossStep &ls : info_.lossSteps)
      lossStepAdjoint(ls);
    o_ << "    if (t < evoc_T - 1) {\n";
    stepAdjoint(shared ? "1" : "t == evoc_T - 2");
    o_ << "    }\n";
    for (int b : pinned) {
      const ir::StateField &f = *field(m_.buffers[size_t(m_.buffers[size_t(b)].primal)]);
      const int ring = f.adjTape();
      o_ << "    if (t == " << when(m_.buffers[size_t(b)].primal) << ") { // "
         << m_.buffers[size_t(b)].name << " joins adj x[t]\n"
         << "      F *d = (F *)((char *)table[" << ring << "] + " << slot("t") << " * "
         << bytesExpr(m_, ring) << ");\n"
         << "      const F *s = (const F *)evoc_ptrs[" << b << "];\n"
         << "      for (long long i = threadIdx.x; i < " << lengthExpr(m_, b)
         << "; i += EVOC_BLOCK) d[i] += s[i];\n"
         << "      __syncthreads();\n"
         << "    }\n";
    }
    o_ << "    if (t < evoc_T - 1) {\n";
    for (const ir::StateField &f : info_.fields)
      if (int ring = f.adjTape(); ring >= 0)
        o_ << "      evoc_zero((char *)table[" << ring << "] + " << slot("t + 1") << " * "
           << bytesExpr(m_, ring) << ", " << bytesExpr(m_, ring) << ");\n";
    o_ << "      __syncthreads();\n    }\n  }\n}\n";
  }

  void stepAdjoint(const std::string &first) {
    for (int b : info_.adjZero)
      o_ << "    evoc_zero(evoc_ptrs[" << b << "], " << bytesExpr(m_, b) << ");\n";
    o_ << "    __syncthreads();\n"
       << "    evoc_body" << info_.stepAdj << "(evoc_ptrs, sizes, scratch, t, evoc_sh, " << first
       << ");\n"
       << "    __syncthreads();\n";
  }

  // The CPU's seeds: a linear window gets the loss's adjoint (1), a sampled
  // one its window's adjoint (/ count for a mean; only at the extreme's time
  // for max and min).
  void lossStepAdjoint(const RolloutLossStep &ls) {
    if (ls.adjoint < 0)
      return;
    const ir::Kernel &K = m_.kernels[size_t(ls.kernel)];
    const bool sampled = K.windowSlot >= 0;
    if (sampled && sampleAdj_ < 0)
      return; // the CPU rollout skips it
    o_ << "    if (" << inWindow(K) << ") { // " << m_.kernels[size_t(ls.adjoint)].name << "\n";
    int seedBuf = lossAdj_, seedAt = 0;
    if (sampled) {
      const std::string w = "W[" + std::to_string(K.windowSlot) + "]";
      o_ << "      double seed = " << w << ".adj;\n";
      if (K.windowReduce == ir::WindowReduce::Mean)
        o_ << "      seed /= (double)" << w << ".count;\n";
      else if (K.windowReduce == ir::WindowReduce::Max || K.windowReduce == ir::WindowReduce::Min)
        o_ << "      if (" << w << ".arg != t) seed = 0;\n";
      seedBuf = sampleAdj_;
      seedAt = K.windowSlot;
    } else {
      o_ << "      const double seed = 1.0;\n";
    }
    o_ << (sampled ? "      if (seed != 0) {\n" : "      {\n");
    for (int z : zeroed(ls.adjoint))
      o_ << "        evoc_zero(evoc_ptrs[" << z << "], " << bytesExpr(m_, z) << ");\n";
    o_ << "        __syncthreads();\n";
    if (seedBuf >= 0)
      o_ << "        if (threadIdx.x == 0) ((F *)evoc_ptrs[" << seedBuf << "])[" << seedAt
         << "] = (F)seed;\n"
         << "        __syncthreads();\n";
    o_ << "        evoc_body" << ls.adjoint << "(evoc_ptrs, sizes, scratch, t, evoc_sh, 1);\n"
       << "        __syncthreads();\n"
       << "      }\n"
       << "    }\n";
  }

  const ir::Module &m_;
  const RolloutInfo &info_;
  const std::vector<KernelPlan> &plans_;
  const std::string nb_, ns_;
  std::ostringstream o_;
  int loss_ = -1, sample_ = -1, window_ = -1;
  int lossAdj_ = -1, sampleAdj_ = -1, windowAdj_ = -1;
  bool commands_ = false, fixedStates_ = false;
  std::vector<ir::WindowReduce> reduce_; // per window slot
};

} // namespace

std::string emitRolloutKernels(const ir::Module &m, const RolloutInfo &info,
                               const std::vector<KernelPlan> &plans) {
  return RolloutWriter(m, info, plans).run();
}

} // namespace evoc::codegen::cuda
