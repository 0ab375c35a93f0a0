// The fused rollout kernels: evoc_rollout_forward runs steps [a, b) of every
// robot (one block each) in one launch; evoc_rollout_backward runs the step
// adjoints from t = a down to b. State pointers advance inside the kernel.
//
// Tape ABI (CudaRollout sets it up): for each state field, the table entries
// of its State and NextState buffers both hold the base of a tape of T
// states; those of their adjoints both hold two slots (t & 1 holds adj x[t]).
// A Temp the step keeps (Buffer::tape) has a tape of T - 1 steps like a
// state: step t writes slot t from zero, step.adj at t reads it. The other
// Temps are zeroed by the block before every call, as the IR contract asks.
#include <set>
#include <sstream>

#include "codegen/cuda/Internal.h"
#include "codegen/cuda/KernelPlan.h"

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

RolloutInfo rolloutInfo(const ir::Module &m, const std::vector<KernelPlan> &plans) {
  RolloutInfo info;
  for (size_t k = 0; k < m.kernels.size(); ++k)
    if (m.kernels[k].kind == ir::KernelKind::Step && info.step < 0)
      info.step = static_cast<int>(k);
  if (info.step < 0)
    return info;
  for (size_t k = 0; k < m.kernels.size(); ++k)
    if (m.kernels[k].kind == ir::KernelKind::StepAdj && m.kernels[k].primal == info.step)
      info.stepAdj = static_cast<int>(k);
  auto field = [&](const std::string &name) -> RolloutField & {
    for (RolloutField &f : info.fields)
      if (f.name == name)
        return f;
    info.fields.push_back({name});
    return info.fields.back();
  };
  std::set<int> used = usedBuffers(plans, info.step);
  if (info.stepAdj >= 0) {
    std::set<int> ua = usedBuffers(plans, info.stepAdj);
    used.insert(ua.begin(), ua.end());
  }
  for (int b : used) {
    const ir::Buffer &B = m.buffers[b];
    if (B.role == ir::Role::State && B.time == ir::TimeRef::Current)
      field(fieldOf(B)).cur = b;
    if (B.role == ir::Role::NextState)
      field(fieldOf(B)).next = b;
  }
  for (RolloutField &f : info.fields)
    for (size_t b = 0; b < m.buffers.size(); ++b)
      if (m.buffers[b].role == ir::Role::Adjoint && used.count(static_cast<int>(b))) {
        if (m.buffers[b].primal == f.cur && f.cur >= 0)
          f.adjCur = static_cast<int>(b);
        if (m.buffers[b].primal == f.next && f.next >= 0)
          f.adjNext = static_cast<int>(b);
      }
  for (int b : usedBuffers(plans, info.step))
    if (m.buffers[b].role == ir::Role::Temp)
      info.stepZero.push_back(b);
  for (int b : used)
    if (m.buffers[b].tape)
      info.kept.push_back(b);
  if (info.stepAdj >= 0)
    for (int b : usedBuffers(plans, info.stepAdj)) {
      const ir::Buffer &B = m.buffers[b];
      if ((B.role == ir::Role::Temp && !B.tape) ||
          (B.role == ir::Role::Adjoint && m.buffers[B.primal].role == ir::Role::Temp))
        info.adjZero.push_back(b);
    }
  return info;
}

std::string emitRolloutKernels(const ir::Module &m, const RolloutInfo &info) {
  if (info.step < 0)
    return "";
  std::ostringstream o;
  const std::string nb = std::to_string(m.buffers.size()), ns = std::to_string(m.sets.size());
  o << "\n// Fused rollout kernels (tape ABI: see docs/architecture.md, CUDA back end).\n"
    << "static __device__ void evoc_zero(void *p, long long bytes) {\n"
    << "  int *q = (int *)p;\n"
    << "  for (long long i = threadIdx.x; i < bytes / 4; i += EVOC_BLOCK) q[i] = 0;\n"
    << "}\n";
  auto header = [&](const char *name) {
    o << "extern \"C\" __global__ void __launch_bounds__(EVOC_BLOCK)\n"
      << name << "(void *const *evoc_buffers, const long long *evoc_sizes, "
      << "char *const *evoc_scratch, long long evoc_a, long long evoc_b) {\n"
      << "  __shared__ F evoc_sh[EVOC_BLOCK];\n"
      << "  __shared__ void *evoc_ptrs[" << nb << "];\n"
      << "  void *const *table = evoc_buffers + (long long)blockIdx.x * " << nb << ";\n"
      << "  const long long *sizes = evoc_sizes + (long long)blockIdx.x * " << ns << ";\n"
      << "  char *scratch = evoc_scratch[blockIdx.x];\n";
  };
  auto bind = [&](bool adjoint) {
    o << "    if (threadIdx.x == 0) {\n"
      << "      for (int i = 0; i < " << nb << "; ++i) evoc_ptrs[i] = table[i];\n";
    for (const RolloutField &f : info.fields) {
      int any = f.cur >= 0 ? f.cur : f.next;
      o << "      { // field " << f.name << "\n"
        << "        char *tape = (char *)table[" << any << "];\n"
        << "        long long len = " << bytesExpr(m, any) << ";\n";
      if (f.cur >= 0)
        o << "        evoc_ptrs[" << f.cur << "] = tape + t * len;\n";
      if (f.next >= 0)
        o << "        evoc_ptrs[" << f.next << "] = tape + (t + 1) * len;\n";
      int adj = f.adjCur >= 0 ? f.adjCur : f.adjNext;
      if (adjoint && adj >= 0) {
        o << "        char *atape = (char *)table[" << adj << "];\n";
        if (f.adjCur >= 0)
          o << "        evoc_ptrs[" << f.adjCur << "] = atape + (t & 1) * len;\n";
        if (f.adjNext >= 0)
          o << "        evoc_ptrs[" << f.adjNext << "] = atape + ((t + 1) & 1) * len;\n";
      }
      o << "      }\n";
    }
    for (int b : info.kept)
      o << "      evoc_ptrs[" << b << "] = (char *)table[" << b << "] + t * " << bytesExpr(m, b)
        << "; // kept temp " << m.buffers[b].name << "\n";
    o << "    }\n    __syncthreads();\n";
  };
  header("evoc_rollout_forward");
  o << "  for (long long t = evoc_a; t < evoc_b; ++t) {\n";
  bind(false);
  for (int b : info.stepZero)
    o << "    evoc_zero(evoc_ptrs[" << b << "], " << bytesExpr(m, b) << ");\n";
  o << "    __syncthreads();\n"
    << "    evoc_body" << info.step << "(evoc_ptrs, sizes, scratch, t, evoc_sh, t == evoc_a);\n"
    << "    __syncthreads();\n  }\n}\n";
  if (info.stepAdj < 0)
    return o.str();
  header("evoc_rollout_backward");
  o << "  for (long long t = evoc_a; t >= evoc_b; --t) {\n";
  bind(true);
  for (const RolloutField &f : info.fields)
    if (f.adjCur >= 0)
      o << "    evoc_zero(evoc_ptrs[" << f.adjCur << "], " << bytesExpr(m, f.adjCur) << ");\n";
  for (int b : info.adjZero)
    o << "    evoc_zero(evoc_ptrs[" << b << "], " << bytesExpr(m, b) << ");\n";
  o << "    __syncthreads();\n"
    << "    evoc_body" << info.stepAdj << "(evoc_ptrs, sizes, scratch, t, evoc_sh, t == evoc_a);\n"
    << "    __syncthreads();\n  }\n}\n";
  // The weight gradients' window products (ir::WindowProduct) over the steps
  // [evoc_b, evoc_a] of the tapes: one thread per gradient entry, adding the
  // terms latest step first as step.adj did (Executable::windowProduct).
  header("evoc_rollout_products");
  for (const ir::WindowProduct &p : m.products)
    o << "  { // " << m.buffers[p.grad].name << " += sum_t " << m.buffers[p.rows].name << "_t x "
      << m.buffers[p.x].name << "_t\n"
      << "    const long long S = " << lengthExpr(m, p.rows) << ", U = " << lengthExpr(m, p.x)
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
  o << "  (void)scratch; (void)sizes;\n}\n";
  return o.str();
}

} // namespace evoc::codegen::cuda
