// EmulatedExecutable: generated CUDA compiled as C++ and run with one host
// thread per CUDA thread.
#include "Emulator.h"

#include <dlfcn.h>

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "codegen/cuda/CudaBackend.h"
#include "codegen/cuda/Internal.h"
#include "codegen/cuda/KernelPlan.h"

namespace evoc::test {
namespace {

const char *kHeader = R"(// CUDA built-ins for a CPU emulation of one block at a time.
#include <math.h>
#include <string.h>
#include <barrier>
#include <memory>
#include <thread>
#include <vector>
struct evoc_dim3 { unsigned x, y, z; };
thread_local evoc_dim3 threadIdx, blockIdx;
static std::barrier<> *evoc_bar;
static inline void __syncthreads() { evoc_bar->arrive_and_wait(); }
static std::barrier<> *evoc_warp_bar[32];
static inline void __syncwarp() { evoc_warp_bar[threadIdx.x / 32]->arrive_and_wait(); }
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(n)
#define __shared__ static // one block runs at a time
#define __restrict__ __restrict
static inline double __longlong_as_double(long long x) { double d; memcpy(&d, &x, 8); return d; }
static inline float __int_as_float(unsigned x) { float f; memcpy(&f, &x, 4); return f; }
static inline int atomicAdd(int *p, int v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
)";

const char *kFooter = R"(
typedef void (*evoc_kfn)(void *const *, const long long *, char *const *, long long, long long);
extern "C" void evoc_emu_launch(evoc_kfn fn, int nBlocks, void *const *bufs,
                                const long long *sizes, char *const *scratch, long long a,
                                long long b) {
  for (int blk = 0; blk < nBlocks; ++blk) {
    std::barrier<> bar(EVOC_BLOCK);
    evoc_bar = &bar;
    std::vector<std::unique_ptr<std::barrier<>>> warps;
    for (int w = 0; w < EVOC_BLOCK / 32; ++w) {
      warps.emplace_back(new std::barrier<>(32));
      evoc_warp_bar[w] = warps.back().get();
    }
    std::vector<std::thread> ts;
    for (unsigned i = 0; i < EVOC_BLOCK; ++i)
      ts.emplace_back([=] {
        threadIdx = {i, 0, 0};
        blockIdx = {unsigned(blk), 0, 0};
        fn(bufs, sizes, scratch, a, b);
      });
    for (auto &th : ts) th.join();
  }
}
)";

using LaunchFn = void (*)(void *, int, void *const *, const long long *, char *const *, long long,
                          long long);

/// Host memory standing in for device memory; launches through the library.
class EmulatedDevice final : public codegen::cuda::DeviceApi {
public:
  EmulatedDevice(void *lib, LaunchFn launch) : lib_(lib), launch_(launch) {}
  codegen::cuda::DeviceMemory memory() override { return {free_, free_}; }
  void setFree(int64_t bytes) { free_ = bytes; }
  uint64_t alloc(size_t n) override {
    // Poisoned like fresh device memory: nothing may rely on zeroes.
    char *p = new char[n + 64];
    std::memset(p, 0x5a, n + 64);
    return reinterpret_cast<uint64_t>(p);
  }
  void free(uint64_t p) override { delete[] reinterpret_cast<char *>(p); }
  void upload(uint64_t dst, const void *src, size_t n) override {
    std::memcpy(reinterpret_cast<void *>(dst), src, n);
  }
  void download(void *dst, uint64_t src, size_t n) override {
    std::memcpy(dst, reinterpret_cast<const void *>(src), n);
  }
  void zero(uint64_t dst, size_t n) override { std::memset(reinterpret_cast<void *>(dst), 0, n); }
  void launch(const std::string &symbol, int grid, const codegen::cuda::KernelArgs &k) override {
    void *fn = dlsym(lib_, symbol.c_str());
    if (!fn)
      throw std::runtime_error("emulator: no kernel " + symbol);
    launch_(fn, grid, reinterpret_cast<void *const *>(k.buffers),
            reinterpret_cast<const long long *>(k.sizes),
            reinterpret_cast<char *const *>(k.scratch), k.a, k.b);
  }

private:
  void *lib_;
  LaunchFn launch_;
  int64_t free_ = -1;
};

} // namespace

struct EmulatedExecutable::State {
  void *lib = nullptr;
  LaunchFn launch = nullptr;
  std::vector<void *> fns;
  std::unique_ptr<EmulatedDevice> device;
  std::vector<codegen::cuda::KernelPlan> plans; // sites only (Inst pointers unused)
  ir::Precision prec;
  size_t nBuffers = 0, nSets = 0;
};

EmulatedExecutable::EmulatedExecutable(const ir::Module &m, const std::string &workDir)
    : s_(std::make_unique<State>()) {
  // A fresh name per instance: a library with thread_local data may stay
  // loaded after dlclose, and dlopen of the same path would return it.
  static std::atomic<int> counter{0};
  std::string name = m.name; // a module compiled from a file is named by its path
  for (char &c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)))
      c = '_';
  std::string stem = workDir + "/emu_" + name + "_" +
                     (m.precision == ir::Precision::F64 ? "f64_" : "f32_") +
                     std::to_string(counter++);
  std::string src = stem + ".cpp", so = stem + ".so";
  {
    std::ofstream f(src);
    f << kHeader << codegen::cuda::emitCuda(m) << kFooter;
  }
  std::string cmd = std::string(EVOC_HOST_CXX) +
                    " -std=c++20 -O1 -ffp-contract=off -fPIC -shared -pthread -w -o " + so + " " +
                    src + " 2> " + workDir + "/emu_build.log";
  if (std::system(cmd.c_str()) != 0)
    throw std::runtime_error("emulator: host compile failed, see " + workDir + "/emu_build.log");
  s_->lib = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!s_->lib)
    throw std::runtime_error(std::string("emulator: dlopen: ") + dlerror());
  s_->launch = reinterpret_cast<LaunchFn>(dlsym(s_->lib, "evoc_emu_launch"));
  s_->device = std::make_unique<EmulatedDevice>(s_->lib, s_->launch);
  for (size_t k = 0; k < m.kernels.size(); ++k) {
    s_->fns.push_back(dlsym(s_->lib, ("evoc_k" + std::to_string(k)).c_str()));
    if (!s_->fns.back())
      throw std::runtime_error("emulator: missing kernel symbol");
  }
  s_->plans = codegen::cuda::planModule(m);
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
    scratch[r].assign(static_cast<size_t>(codegen::cuda::scratchBytes(s_->plans[k], s_->prec, sz)) +
                          8,
                      char(0x7f));
    scratchPtrs.push_back(scratch[r].data());
  }
  s_->launch(s_->fns[k], nRobots, table.data(), reinterpret_cast<const long long *>(sizes),
             scratchPtrs.data(), t, 0);
}

void EmulatedExecutable::setFreeMemory(int64_t bytes) { s_->device->setFree(bytes); }

codegen::cuda::DeviceApi &EmulatedExecutable::device() const { return *s_->device; }

} // namespace evoc::test
