// CUDA source of the training kernels (TrainKernels.h): per robot, the
// gradient norm, the optimiser step over its parameter buffers in buffer
// order, the copy of its parameters to the best slot, and the scan of its
// state tapes for the first value beyond world.state_limit. The arithmetic
// follows runtime/core/Optimizer.cpp in double, whatever F is.
#include <sstream>
#include <utility>
#include <vector>

#include "codegen/cuda/Internal.h"
#include "codegen/cuda/TrainKernels.h"
#include "support/Optimizers.h"

namespace evoc::codegen::cuda {
namespace {

/// The module's parameters and their gradients, in buffer order.
std::vector<std::pair<int, int>> paramsAndGrads(const ir::Module &m) {
  std::vector<std::pair<int, int>> out;
  for (size_t b = 0; b < m.buffers.size(); ++b) {
    if (m.buffers[b].role != ir::Role::Param)
      continue;
    int g = -1;
    for (size_t a = 0; a < m.buffers.size(); ++a)
      if (m.buffers[a].role == ir::Role::Adjoint && m.buffers[a].primal == int(b))
        g = int(a);
    out.push_back({int(b), g});
  }
  return out;
}

const char *cudaType(double *) { return "double"; }
const char *cudaType(uint64_t *) { return "unsigned long long"; }

const char *kBlockSum = R"(static __device__ double evoc_block_sum(double x, double *sh) {
  const int tid = threadIdx.x;
  sh[tid] = x;
  __syncthreads();
  for (int s = EVOC_BLOCK / 2; s > 0; s >>= 1) {
    if (tid < s) sh[tid] += sh[tid + s];
    __syncthreads();
  }
  double r = sh[0];
  __syncthreads();
  return r;
}
)";

/// Writes the training kernels, one method each, into one source. They
/// share a prologue (header) and the loop over every parameter element
/// (eachParam), so those are members rather than repeated.
class TrainEmitter {
public:
  TrainEmitter(const ir::Module &m, const RolloutInfo &info,
               std::vector<std::pair<int, int>> paramsAndGrads)
      : m(m), info(info), pg(std::move(paramsAndGrads)), nb(std::to_string(m.buffers.size())),
        ns(std::to_string(m.sets.size())) {}

  std::string run() {
    o << "\n// Training kernels (runtime/cuda).\n" << trainRecordSource() << kBlockSum;
    norm();
    update();
    accumulate();
    mean();
    carry();
    keepBest();
    check();
    return o.str();
  }

private:
  const ir::Module &m;
  const RolloutInfo &info;
  const std::vector<std::pair<int, int>> pg;
  const std::string nb, ns;
  std::ostringstream o;

  void header(const char *name) {
    o << kernelHead(name) << "  const int *mask = (const int *)evoc_a;\n"
      << "  if (mask && !mask[blockIdx.x]) return;\n"
      << "  void *const *table = evoc_buffers + (long long)blockIdx.x * " << nb << ";\n"
      << "  const long long *sizes = evoc_sizes + (long long)blockIdx.x * " << ns << ";\n"
      << "  evoc_train_record *R = (evoc_train_record *)evoc_scratch + blockIdx.x;\n"
      << "  const int tid = threadIdx.x;\n"
      << "  (void)table; (void)sizes; (void)R; (void)tid;\n";
  }

  // Writes `body` inside a loop over each parameter buffer's elements, with
  // p (the parameter), g (its gradient), i (the element) and j (the index
  // in the robot's concatenated parameters) in scope.
  void eachParam(const std::string &body) {
    o << "  long long base = 0;\n";
    for (const auto &[p, g] : pg)
      o << "  {\n"
        << "    F *p = (F *)table[" << p << "];\n"
        << "    const F *g = (const F *)table[" << g << "];\n"
        << "    const long long n = " << lengthExpr(m, p) << ";\n"
        << "    for (long long i = tid; i < n; i += EVOC_BLOCK) {\n"
        << "      const long long j = base + i;\n"
        << "      (void)p; (void)g; (void)j;\n"
        << "      " << body << "\n"
        << "    }\n"
        << "    base += n;\n"
        << "  }\n";
  }

  /// The bytes of one state of buffer b, as a C expression.
  std::string stateBytes(int b) const {
    return lengthExpr(m, b) + " * " +
           (m.buffers[b].elem == ir::Type::I ? "4" : "(long long)sizeof(F)");
  }

  void norm() {
    header(kTrainNorm);
    o << "  __shared__ double sh[EVOC_BLOCK];\n"
      << "  double ss = 0, bad = 0;\n";
    eachParam("const double x = (double)g[i]; ss += x * x; if (!isfinite(x)) bad = 1;");
    o << "  ss = evoc_block_sum(ss, sh);\n"
      << "  bad = evoc_block_sum(bad, sh);\n"
      << "  if (tid == 0) { R->gradNorm = sqrt(ss); R->gradBad = bad > 0 ? 1 : 0; }\n"
      << "}\n";
  }

  void update() {
    header(kTrainUpdate);
    o << "  __shared__ double evoc_t[3];\n"
      << "  if (tid == 0) {\n"
      << "    evoc_t[0] = R->step / (R->gradNorm + 1e-6);\n"
      << "    evoc_t[1] = R->b1t * R->beta1;\n"
      << "    evoc_t[2] = R->b2t * R->beta2;\n"
      << "  }\n"
      << "  __syncthreads();\n"
      << "  const double scale = evoc_t[0], b1t = evoc_t[1], b2t = evoc_t[2];\n"
      << "  double *mom = (double *)R->moments;\n"
      << "  long long np = 0;\n";
    for (const auto &[p, g] : pg)
      o << "  np += " << lengthExpr(m, p) << ";\n";
    o << "  (void)mom; (void)np;\n"
      << "  if (evoc_b == " << int(OptimizerKind::NormalizedStep) << ") {\n";
    eachParam("p[i] = (F)((double)p[i] - scale * (double)g[i]);");
    o << "  } else if (evoc_b == " << int(OptimizerKind::Adam) << ") {\n";
    eachParam("const double gi = (double)g[i];\n"
              "      mom[j] = R->beta1 * mom[j] + (1 - R->beta1) * gi;\n"
              "      mom[np + j] = R->beta2 * mom[np + j] + (1 - R->beta2) * gi * gi;\n"
              "      const double mh = mom[j] / (1 - b1t), vh = mom[np + j] / (1 - b2t);\n"
              "      p[i] = (F)((double)p[i] - R->lr * mh / (sqrt(vh) + R->eps));");
    o << "  } else {\n";
    eachParam("p[i] = (F)((double)p[i] - R->lr * (double)g[i]);");
    o << "  }\n"
      << "  __syncthreads();\n"
      << "  if (tid == 0) {\n"
      << "    R->t += 1;\n"
      << "    if (evoc_b == " << int(OptimizerKind::Adam) << ") { R->b1t = b1t; R->b2t = b2t; }\n"
      << "  }\n"
      << "}\n";
  }

  void accumulate() {
    header(kTrainAccumulate);
    o << "  double *gs = (double *)R->gsum;\n";
    eachParam("gs[j] = (evoc_b == 0 ? 0.0 : gs[j]) + (double)g[i];");
    o << "}\n";
  }

  void mean() {
    header(kTrainMean);
    o << "  const double *gs = (const double *)R->gsum;\n";
    eachParam("((F *)g)[i] = (F)(gs[j] / (double)evoc_b);");
    o << "}\n";
  }

  // The state fields' snapshot, field after field (their bytes, unpadded).
  void carry() {
    header(kTrainCarry);
    o << "  const long long T = (long long)R->steps, mode = evoc_b >> 32;\n"
      << "  long long snap = 0;\n";
    for (const ir::StateField &f : info.fields)
      o << "  snap += " << stateBytes(f.tape()) << ";\n";
    o << "  char *block = (char *)R->carry + (evoc_b & 0xffffffffLL) * snap;\n";
    for (const ir::StateField &f : info.fields) {
      int any = f.tape();
      o << "  { // field " << f.name << "\n"
        << "    const long long bytes = " << stateBytes(any) << ";\n"
        << "    int *tape = (int *)table[" << any << "];\n"
        << "    int *x = mode == " << kSaveLast << " ? tape + (T - 1) * (bytes / 4) : tape;\n"
        << "    int *s = (int *)block;\n"
        << "    for (long long i = tid; i < bytes / 4; i += EVOC_BLOCK) {\n"
        << "      if (mode == " << kLoadFirst << ") x[i] = s[i]; else s[i] = x[i];\n"
        << "    }\n"
        << "    block += bytes;\n"
        << "  }\n";
    }
    o << "}\n";
  }

  void keepBest() {
    header(kTrainKeepBest);
    o << "  F *best = (F *)R->best;\n";
    eachParam("best[j] = p[i];");
    o << "}\n";
  }

  // The first (time, field, element) whose value is NaN, infinite or beyond
  // the limit, as the CPU rollout reports it (it checks every state).
  void check() {
    header(kTrainCheck);
    o << "  __shared__ long long kk[EVOC_BLOCK];\n"
      << "  __shared__ double vv[EVOC_BLOCK];\n"
      << "  const double limit = R->stateLimit;\n"
      << "  const long long T = evoc_b;\n"
      << "  long long key = -1; double val = 0;\n";
    int nf = 0;
    for (const ir::StateField &f : info.fields) {
      int any = f.tape();
      if (m.buffers[any].elem != ir::Type::F) {
        ++nf;
        continue;
      }
      o << "  { // field " << f.name << "\n"
        << "    const F *tape = (const F *)table[" << any << "];\n"
        << "    const long long n = " << lengthExpr(m, any) << ";\n"
        << "    for (long long t = 0; t < T; ++t) {\n"
        << "      if (key >= 0 && key < (t * " << info.fields.size() << " + " << nf
        << ") * 4294967296LL) break; // an earlier state is bad already\n"
        << "      for (long long i = tid; i < n; i += EVOC_BLOCK) {\n"
        << "        const double x = (double)tape[t * n + i];\n"
        << "        if (!(fabs(x) <= limit)) {\n"
        << "          const long long k = (t * " << info.fields.size() << " + " << nf
        << ") * 4294967296LL + i;\n"
        << "          if (key < 0 || k < key) { key = k; val = x; }\n"
        << "          break;\n"
        << "        }\n"
        << "      }\n"
        << "    }\n"
        << "  }\n";
      ++nf;
    }
    o << "  kk[tid] = key; vv[tid] = val;\n"
      << "  __syncthreads();\n"
      << "  for (int s = EVOC_BLOCK / 2; s > 0; s >>= 1) {\n"
      << "    if (tid < s && kk[tid + s] >= 0 && (kk[tid] < 0 || kk[tid + s] < kk[tid])) {\n"
      << "      kk[tid] = kk[tid + s]; vv[tid] = vv[tid + s];\n"
      << "    }\n"
      << "    __syncthreads();\n"
      << "  }\n"
      << "  if (tid == 0) {\n"
      << "    const long long k = kk[0] < 0 ? -1 : kk[0] / 4294967296LL;\n"
      << "    R->badTime = k < 0 ? -1.0 : (double)(k / " << info.fields.size() << ");\n"
      << "    R->badField = k < 0 ? -1.0 : (double)(k % " << info.fields.size() << ");\n"
      << "    R->badValue = vv[0];\n"
      << "    R->badIndex = k < 0 ? -1.0 : (double)(kk[0] % 4294967296LL);\n"
      << "  }\n"
      << "}\n";
  }
};

} // namespace

std::string trainRecordSource() {
  std::string out = "struct evoc_train_record { // TrainKernels.h's TrainRecord\n";
#define EVOC_FIELD(type, name, init, what)                                                         \
  out += std::string("  ") + cudaType(static_cast<type *>(nullptr)) + " " #name "; // " what "\n";
  EVOC_TRAIN_RECORD(EVOC_FIELD)
#undef EVOC_FIELD
  return out + "};\n";
}

std::string emitTrainKernels(const ir::Module &m, const RolloutInfo &info) {
  if (info.step < 0 || info.stepAdj < 0)
    return "";
  auto pg = paramsAndGrads(m);
  for (const auto &[p, g] : pg)
    if (g < 0)
      return ""; // a parameter without a gradient: nothing to train on the GPU
  return TrainEmitter(m, info, std::move(pg)).run();
}

} // namespace evoc::codegen::cuda
