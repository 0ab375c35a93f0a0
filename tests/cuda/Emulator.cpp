// EmulatedExecutable: generated CUDA compiled as C++ and run with one host
// thread per CUDA thread.
#include "Emulator.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "codegen/cuda/CudaBackend.h"
#include "codegen/cuda/KernelPlan.h"

namespace evoc::cudatest {
namespace {

const char *kHeader = R"(// CUDA built-ins for a CPU emulation of one block at a time.
#include <math.h>
#include <string.h>
#include <barrier>
#include <thread>
#include <vector>
struct evoc_dim3 { unsigned x, y, z; };
thread_local evoc_dim3 threadIdx, blockIdx;
static std::barrier<> *evoc_bar;
static inline void __syncthreads() { evoc_bar->arrive_and_wait(); }
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(n)
#define __shared__ static // one block runs at a time
#define __restrict__ __restrict
static inline double __longlong_as_double(long long x) { double d; memcpy(&d, &x, 8); return d; }
static inline float __int_as_float(unsigned x) { float f; memcpy(&f, &x, 4); return f; }
)";

const char *kFooter = R"(
typedef void (*evoc_kfn)(void *const *, const long long *, char *const *, long long);
extern "C" void evoc_emu_launch(evoc_kfn fn, int nBlocks, void *const *bufs,
                                const long long *sizes, char *const *scratch, long long t) {
  for (int b = 0; b < nBlocks; ++b) {
    std::barrier<> bar(EVOC_BLOCK);
    evoc_bar = &bar;
    std::vector<std::thread> ts;
    for (unsigned i = 0; i < EVOC_BLOCK; ++i)
      ts.emplace_back([=] {
        threadIdx = {i, 0, 0};
        blockIdx = {unsigned(b), 0, 0};
        fn(bufs, sizes, scratch, t);
      });
    for (auto &th : ts) th.join();
  }
}
)";

using LaunchFn = void (*)(void *, int, void *const *, const long long *, char *const *, long long);

} // namespace

struct EmulatedExecutable::State {
  void *lib = nullptr;
  LaunchFn launch = nullptr;
  std::vector<void *> fns;
  std::vector<codegen::cuda::KernelPlan> plans; // sites only (Inst pointers unused)
  ir::Precision prec;
  size_t nBuffers = 0, nSets = 0;
};

EmulatedExecutable::EmulatedExecutable(const ir::Module &m, const std::string &workDir)
    : s_(std::make_unique<State>()) {
  // A fresh name per instance: a library with thread_local data may stay
  // loaded after dlclose, and dlopen of the same path would return it.
  static std::atomic<int> counter{0};
  std::string stem = workDir + "/emu_" + m.name + "_" +
                     (m.precision == ir::Precision::F64 ? "f64_" : "f32_") +
                     std::to_string(counter++);
  std::string src = stem + ".cpp", so = stem + ".so";
  {
    std::ofstream f(src);
    f << kHeader << codegen::cuda::emitCuda(m) << kFooter;
  }
  std::string cmd = std::string(EVOC_HOST_CXX) +
                    " -std=c++20 -O1 -ffp-contract=off -fPIC -shared -pthread -w -o " + so +
                    " " + src + " 2> " + workDir + "/emu_build.log";
  if (std::system(cmd.c_str()) != 0)
    throw std::runtime_error("emulator: host compile failed, see " + workDir + "/emu_build.log");
  s_->lib = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!s_->lib)
    throw std::runtime_error(std::string("emulator: dlopen: ") + dlerror());
  s_->launch = reinterpret_cast<LaunchFn>(dlsym(s_->lib, "evoc_emu_launch"));
  for (size_t k = 0; k < m.kernels.size(); ++k) {
    s_->fns.push_back(dlsym(s_->lib, ("evoc_k" + std::to_string(k)).c_str()));
    if (!s_->fns.back())
      throw std::runtime_error("emulator: missing kernel symbol");
    s_->plans.push_back(codegen::cuda::planKernel(m, m.kernels[k]));
  }
  s_->prec = m.precision;
  s_->nBuffers = m.buffers.size();
  s_->nSets = m.sets.size();
}

EmulatedExecutable::~EmulatedExecutable() {
  if (s_->lib)
    dlclose(s_->lib);
}

void EmulatedExecutable::run(int k, void *const *buffers, const int64_t *sizes, int64_t t) const {
  runBatch(k, 1, &buffers, sizes, t);
}

void EmulatedExecutable::runBatch(int k, int nRobots, void *const *const *buffers,
                                  const int64_t *sizes, int64_t t) const {
  std::vector<void *> table;
  std::vector<std::vector<char>> scratch(static_cast<size_t>(nRobots));
  std::vector<char *> scratchPtrs;
  for (int r = 0; r < nRobots; ++r) {
    table.insert(table.end(), buffers[r], buffers[r] + s_->nBuffers);
    const int64_t *sz = sizes + static_cast<size_t>(r) * s_->nSets;
    // Poisoned, so a record read before it is written shows up as garbage.
    scratch[r].assign(static_cast<size_t>(codegen::cuda::scratchBytes(s_->plans[k], s_->prec, sz)) + 8,
                      char(0x7f));
    scratchPtrs.push_back(scratch[r].data());
  }
  s_->launch(s_->fns[k], nRobots, table.data(), reinterpret_cast<const long long *>(sizes),
             scratchPtrs.data(), t);
}

} // namespace evoc::cudatest
