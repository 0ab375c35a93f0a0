// compileCuda and the CudaExecutable: NVRTC'd module loaded on device 0,
// kernels launched one block per robot over packed device copies of the
// robots' buffers.
#include <nvrtc.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

#include "codegen/cuda/CudaBackend.h"
#include "codegen/cuda/CudaDriver.h"
#include "codegen/cuda/Internal.h"
#include "codegen/cuda/KernelPlan.h"
#include "support/Error.h"

namespace evoc::codegen::cuda {
namespace {

/// What the executable keeps of the module (the module may die after compile).
struct BufMeta {
  std::vector<int> sets;
  int comps = 1;
  int64_t elemBytes = 8;
};

struct KernelMeta {
  std::vector<int> in, out; // buffers copied to / from the device
  KernelPlan plan;          // for scratchBytes only (its Inst pointers are not used)
};

int64_t align256(int64_t n) { return (n + 255) & ~int64_t(255); }

/// cuMemGetInfo of the current context; unknown if the driver cannot tell.
DeviceMemory deviceMemory(const Driver &d) {
  size_t free = 0, total = 0;
  if (d.memGetInfo(&free, &total) != CUDA_SUCCESS)
    return {};
  return {static_cast<int64_t>(free), static_cast<int64_t>(total)};
}

/// DeviceApi over the driver, for CudaRollout. Calls make the context current
/// first: the runtime may call from any thread.
/// cuLaunchKernel's argument array: the address of each of args' fields,
/// in signature order (EVOC_KERNEL_PARAMS).
std::array<void *, sizeof(KernelArgs) / 8> argPointers(KernelArgs &args) {
  static_assert(sizeof(KernelArgs) % 8 == 0, "every kernel parameter is 8 bytes");
  return {
#define EVOC_X(cuda, host, name) static_cast<void *>(&args.name),
      EVOC_KERNEL_PARAMS(EVOC_X)
#undef EVOC_X
  };
}

class DriverDevice final : public DeviceApi {
public:
  DriverDevice(const Driver &d, CUcontext ctx) : d_(d), ctx_(ctx) {}
  void setModule(CUmodule mod) { mod_ = mod; }
  uint64_t alloc(size_t n) override {
    cur();
    CUdeviceptr p = 0;
    d_.check(d_.memAlloc(&p, std::max<size_t>(n, 1)), "cuMemAlloc");
    return p;
  }
  void free(uint64_t p) override {
    cur();
    d_.memFree(static_cast<CUdeviceptr>(p));
  }
  DeviceMemory memory() override {
    cur();
    return deviceMemory(d_);
  }
  void upload(uint64_t dst, const void *src, size_t n) override {
    cur();
    d_.check(d_.memcpyHtoD(dst, src, n), "cuMemcpyHtoD");
  }
  void download(void *dst, uint64_t src, size_t n) override {
    cur();
    d_.check(d_.memcpyDtoH(dst, src, n), "cuMemcpyDtoH");
  }
  void zero(uint64_t dst, size_t n) override {
    cur();
    d_.check(d_.memsetD8(dst, 0, n), "cuMemsetD8");
  }
  void launch(const std::string &symbol, int grid, const KernelArgs &args) override {
    cur();
    std::lock_guard<std::mutex> lock(mu_);
    CUfunction &f = fns_[symbol];
    if (!f)
      d_.check(d_.moduleGetFunction(&f, mod_, symbol.c_str()), "cuModuleGetFunction");
    KernelArgs copy = args;
    d_.check(d_.launchKernel(f, static_cast<unsigned>(grid), 1, 1, kBlockSize, 1, 1, 0, nullptr,
                             argPointers(copy).data(), nullptr),
             "cuLaunchKernel");
    d_.check(d_.ctxSynchronize(), "cuCtxSynchronize (after the kernel launch)");
  }

private:
  void cur() { d_.check(d_.ctxSetCurrent(ctx_), "cuCtxSetCurrent"); }
  const Driver &d_;
  CUcontext ctx_;
  CUmodule mod_ = nullptr;
  std::mutex mu_;
  std::map<std::string, CUfunction> fns_;
};

class Impl final : public CudaExecutable {
public:
  Impl(const ir::Module &m, const CompileOptions &opts) : d_(Driver::get()) {
    dev_ = Device::open(d_);
    d_.check(d_.ctxSetCurrent(dev_.ctx), "cuCtxSetCurrent");
    prec_ = m.precision;
    for (const ir::Buffer &b : m.buffers)
      bufs_.push_back(
          {b.sets, b.comps, b.elem == ir::Type::I ? 4 : (prec_ == ir::Precision::F64 ? 8 : 4)});
    nSets_ = static_cast<int>(m.sets.size());
    std::vector<KernelPlan> plans = planModule(m);
    for (KernelPlan &p : plans) {
      KernelMeta km;
      std::set<int> in = p.loaded, out = p.stored;
      out.insert(p.accumulated.begin(), p.accumulated.end());
      in.insert(out.begin(), out.end()); // keep the elements a kernel leaves alone
      km.in.assign(in.begin(), in.end());
      km.out.assign(out.begin(), out.end());
      km.plan = p;
      kernels_.push_back(std::move(km));
    }
    std::string src = emitCuda(m, plans);
    auto [arch, cubin] = pickArch(dev_.major, dev_.minor);
    std::string image =
        cachedCompile(src, "evoc_" + m.name, arch, cubin, opts.cacheDir, opts.useCache);
    CUresult rc = d_.moduleLoadData(&mod_, image.c_str());
    if (rc != CUDA_SUCCESS && cubin) { // e.g. a CUBIN the driver rejects: try PTX
      image = cachedCompile(src, "evoc_" + m.name, arch, false, opts.cacheDir, opts.useCache);
      rc = d_.moduleLoadData(&mod_, image.c_str());
    }
    d_.check(rc, "cuModuleLoadData");
    device_ = std::make_unique<DriverDevice>(d_, dev_.ctx);
    device_->setModule(mod_);
    for (size_t k = 0; k < m.kernels.size(); ++k) {
      CUfunction f = nullptr;
      d_.check(d_.moduleGetFunction(&f, mod_, kernelSymbol(static_cast<int>(k)).c_str()),
               "cuModuleGetFunction");
      fns_.push_back(f);
    }
  }

  ~Impl() override {
    d_.ctxSetCurrent(dev_.ctx);
    if (arena_)
      d_.memFree(arena_);
    if (mod_)
      d_.moduleUnload(mod_);
    d_.primaryCtxRelease(dev_.dev);
  }

  void run(int k, void *const *buffers, const int64_t *sizes, int64_t t) const override {
    runBatch(k, 1, &buffers, sizes, t);
  }

  DeviceApi &device() const override { return *device_; }

  std::string deviceName() const override {
    return dev_.name + " (sm_" + std::to_string(dev_.major) + std::to_string(dev_.minor) + ")";
  }

  void runBatch(int k, int nRobots, void *const *const *buffers, const int64_t *sizes,
                int64_t t) const override {
    EVOC_ASSERT(k >= 0 && k < static_cast<int>(fns_.size()), "cuda: bad kernel index");
    if (nRobots <= 0)
      return;
    std::lock_guard<std::mutex> lock(mu_);
    d_.check(d_.ctxSetCurrent(dev_.ctx), "cuCtxSetCurrent");
    const KernelMeta &km = kernels_[k];
    const int nB = static_cast<int>(bufs_.size());
    // Layout of the arena: [data of every robot][scratch][pointer tables][sizes].
    std::vector<int64_t> off(static_cast<size_t>(nRobots) * nB, -1);
    std::vector<int64_t> len(off.size(), 0), scratchOff(nRobots, 0);
    int64_t top = 0;
    for (int r = 0; r < nRobots; ++r)
      for (int b : km.in)
        if (buffers[r][b]) {
          size_t i = static_cast<size_t>(r) * nB + b;
          len[i] = bytes(b, sizes + static_cast<size_t>(r) * nSets_);
          off[i] = top;
          top += align256(len[i]);
        }
    const int64_t dataBytes = top;
    for (int r = 0; r < nRobots; ++r) {
      scratchOff[r] = top;
      top += align256(scratch(km, sizes + static_cast<size_t>(r) * nSets_));
    }
    const int64_t ptrOff = top;
    top += align256(static_cast<int64_t>(nRobots) * nB * 8);
    const int64_t scrTabOff = top;
    top += align256(static_cast<int64_t>(nRobots) * 8);
    const int64_t sizesOff = top;
    top += align256(static_cast<int64_t>(nRobots) * nSets_ * 8);
    reserve(top, k, nRobots);

    std::vector<char> host(static_cast<size_t>(top), 0);
    auto *ptrs = reinterpret_cast<uint64_t *>(host.data() + ptrOff);
    auto *scr = reinterpret_cast<uint64_t *>(host.data() + scrTabOff);
    for (int r = 0; r < nRobots; ++r) {
      for (int b : km.in) {
        size_t i = static_cast<size_t>(r) * nB + b;
        if (off[i] < 0)
          continue;
        std::memcpy(host.data() + off[i], buffers[r][b], static_cast<size_t>(len[i]));
        ptrs[i] = arena_ + static_cast<uint64_t>(off[i]);
      }
      scr[r] = arena_ + static_cast<uint64_t>(scratchOff[r]);
    }
    std::memcpy(host.data() + sizesOff, sizes, static_cast<size_t>(nRobots) * nSets_ * 8);
    // The scratch region needs no initialisation: records are written first.
    if (dataBytes > 0)
      d_.check(d_.memcpyHtoD(arena_, host.data(), static_cast<size_t>(dataBytes)), "cuMemcpyHtoD");
    d_.check(
        d_.memcpyHtoD(arena_ + ptrOff, host.data() + ptrOff, static_cast<size_t>(top - ptrOff)),
        "cuMemcpyHtoD");
    CUdeviceptr dPtrs = arena_ + ptrOff, dScr = arena_ + scrTabOff, dSizes = arena_ + sizesOff;
    KernelArgs args{dPtrs, dSizes, dScr, t, 0};
    d_.check(d_.launchKernel(fns_[k], static_cast<unsigned>(nRobots), 1, 1, kBlockSize, 1, 1, 0,
                             nullptr, argPointers(args).data(), nullptr),
             "cuLaunchKernel");
    d_.check(d_.ctxSynchronize(), "cuCtxSynchronize (after the kernel launch)");
    if (dataBytes > 0)
      d_.check(d_.memcpyDtoH(host.data(), arena_, static_cast<size_t>(dataBytes)), "cuMemcpyDtoH");
    for (int r = 0; r < nRobots; ++r)
      for (int b : km.out) {
        size_t i = static_cast<size_t>(r) * nB + b;
        if (off[i] >= 0)
          std::memcpy(buffers[r][b], host.data() + off[i], static_cast<size_t>(len[i]));
      }
  }

private:
  int64_t bytes(int b, const int64_t *sizes) const {
    int64_t n = bufs_[b].comps;
    for (int s : bufs_[b].sets)
      n *= sizes[s];
    return n * bufs_[b].elemBytes;
  }

  int64_t scratch(const KernelMeta &km, const int64_t *sizes) const {
    return scratchBytes(km.plan, prec_, sizes);
  }

  void reserve(int64_t n, int k, int nRobots) const {
    if (n <= arenaBytes_)
      return;
    // The arena is freed first, so it counts as free.
    DeviceMemory mem = deviceMemory(d_);
    if (mem.free >= 0)
      mem.free += arenaBytes_;
    checkDeviceMemory(mem, n,
                      "a launch of kernel " + std::to_string(k) + " for " +
                          std::to_string(nRobots) + " robots",
                      "lower the robots run together (evolve.population) or the body's size");
    if (arena_)
      d_.check(d_.memFree(arena_), "cuMemFree");
    arena_ = 0;
    int64_t want = std::max<int64_t>(n, arenaBytes_ * 3 / 2);
    if (mem.free >= 0 && want > mem.free) // room to grow is a nicety; n is what it needs
      want = n;
    d_.check(d_.memAlloc(&arena_, static_cast<size_t>(want)), "cuMemAlloc");
    arenaBytes_ = want;
  }

  const Driver &d_;
  Device dev_;
  CUmodule mod_ = nullptr;
  std::vector<CUfunction> fns_;
  ir::Precision prec_ = ir::Precision::F64;
  std::vector<BufMeta> bufs_;
  std::vector<KernelMeta> kernels_;
  int nSets_ = 0;
  std::unique_ptr<DriverDevice> device_;
  mutable std::mutex mu_;
  mutable CUdeviceptr arena_ = 0;
  mutable int64_t arenaBytes_ = 0;
};

} // namespace

std::pair<std::string, bool> pickArch(int major, int minor) {
  int want = major * 10 + minor, n = 0, best = 0;
  nvrtcGetNumSupportedArchs(&n);
  std::vector<int> archs(static_cast<size_t>(std::max(n, 0)));
  if (n > 0)
    nvrtcGetSupportedArchs(archs.data());
  for (int a : archs)
    if (a <= want)
      best = std::max(best, a);
  if (best == want)
    return {"sm_" + std::to_string(want), true};
  if (best == 0)
    throw Error("--backend cuda is unavailable: this NVRTC cannot target the GPU's compute "
                "capability " +
                std::to_string(major) + "." + std::to_string(minor) + ".");
  return {"sm_" + std::to_string(best), false};
}

std::unique_ptr<CudaExecutable> compileCuda(const ir::Module &m, const CompileOptions &opts) {
  return std::make_unique<Impl>(m, opts);
}

bool cudaAvailable(std::string *why) {
  try {
    const Driver &d = Driver::get();
    int count = 0;
    d.check(d.deviceGetCount(&count), "cuDeviceGetCount");
    if (count == 0)
      throw Error("--backend cuda is unavailable: the NVIDIA driver sees no CUDA device; use "
                  "--backend cpu.");
    return true;
  } catch (const Error &e) {
    if (why)
      *why = e.what();
    return false;
  }
}

} // namespace evoc::codegen::cuda
