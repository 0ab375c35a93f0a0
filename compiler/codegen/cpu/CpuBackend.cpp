// The CPU back end: lower, optimise, cache and link a module; emit LLVM IR text.
#include "codegen/cpu/CpuBackend.h"

#include <algorithm>
#include <chrono>

#include <llvm/Config/llvm-config.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "codegen/cpu/InlineSinCos.h"
#include "codegen/cpu/Jit.h"
#include "codegen/cpu/LowerToLLVM.h"
#include "codegen/cpu/ObjectCache.h"
#include "codegen/cpu/Optimize.h"
#include "codegen/cpu/WindowProduct.h"
#include "opt/Passes.h"
#include "support/Error.h"

namespace evoc::codegen::cpu {

struct CpuExecutable::Impl {
  Jit jit;
};

CpuExecutable::CpuExecutable() : impl_(std::make_unique<Impl>()) {}
CpuExecutable::~CpuExecutable() = default;

namespace {

std::string printModule(const llvm::Module &lm) {
  std::string text;
  llvm::raw_string_ostream os(text);
  lm.print(os, nullptr);
  os.flush();
  return text;
}

int clampLevel(int level) { return level < 0 ? 0 : level > 3 ? 3 : level; }

/// Unroll and jam in lanes: CompileOptions::lanesJam rows per block (0:
/// chosen per loop nest for the host's registers).
JamOptions jamOptions(int lanesJam) {
  JamOptions o;
  o.rows = lanesJam;
  const std::string &f = hostTarget().features;
  if (hasFeature(f, "avx512f"))
    o.regs = {64, 32, 7};
  else if (hasFeature(f, "avx"))
    o.regs = {32, 16, 0};
  else
    o.regs = {16, 16, 0};
  return o;
}

/// On AVX-512 hosts, vectorise with 512-bit registers: LLVM's tuning for
/// some of them (Sapphire Rapids, Skylake-X) prefers 256 bits, which leaves
/// the controller's short rows (64 to a few hundred weights) with scalar
/// tails; 512 bits measured 10-25% faster kernels there (docs/architecture.md,
/// "Multi-task benchmark and where its time goes"). Part of the lowered
/// module, so of the cache key.
void preferWideVectors(llvm::Module &lm) {
  if (!hasFeature(hostTarget().features, "avx512f"))
    return;
  for (llvm::Function &f : lm)
    if (!f.isDeclaration())
      f.addFnAttr("prefer-vector-width", "512");
}

/// The module as lowered: in fast mode, after loop fission (whose scratch
/// buffers follow the module's own).
std::unique_ptr<llvm::Module> lower(const ir::Module &m, llvm::LLVMContext &ctx,
                                    const llvm::TargetMachine &tm, int level, FpMode fp,
                                    int lanes = 1, const JamOptions &jam = {}) {
  const int nBuffers = int(m.buffers.size());
  std::unique_ptr<llvm::Module> lm;
  if (fp == FpMode::Fast && level >= 2) {
    ir::Module split = ir::clone(m);
    opt::runPass(split, "fission"); // verified, as every pass; --dump-after=fission shows it
    lm = lowerToLLVM(split, ctx, tm.createDataLayout(), hostTarget().triple, true, nBuffers, lanes,
                     jam);
  } else {
    lm = lowerToLLVM(m, ctx, tm.createDataLayout(), hostTarget().triple, fp == FpMode::Fast,
                     nBuffers, lanes, jam);
  }
  if (!m.products.empty())
    addWindowProduct(*lm, m.precision == ir::Precision::F32, fp == FpMode::Fast,
                     hostTarget().features, lanes);
  preferWideVectors(*lm);
  return lm;
}

/// What runs after the O`level` pipeline: in fast mode from O2 on, inline
/// sin and cos (named in the cache key, since the key is of the lowered module).
const char *postPipeline(int level, FpMode fp) {
  return fp == FpMode::Fast && level >= 2 ? "inline-sincos 1" : "none";
}

void optimize(llvm::Module &lm, llvm::TargetMachine &tm, int level, FpMode fp) {
  optimizeModule(lm, tm, level);
  if (fp == FpMode::Fast && level >= 2)
    inlineSinCos(lm);
}

} // namespace

std::unique_ptr<CpuExecutable> compileCpu(const ir::Module &m, const CompileOptions &opts,
                                          FpMode fp) {
  auto t0 = std::chrono::steady_clock::now();
  const int level = clampLevel(opts.optLevel);
  const HostTarget &host = hostTarget();
  std::unique_ptr<llvm::TargetMachine> tm = createHostTargetMachine(level);
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> lm =
      lower(m, ctx, *tm, level, fp, opts.lanes, jamOptions(opts.lanesJam));

  std::unique_ptr<CpuExecutable> exe(new CpuExecutable());
  std::string object, key, dir;
  if (opts.useCache) {
    dir = cacheDirectory(opts.cacheDir);
    // Everything that decides the object's bytes is in the key.
    key = sha256Hex(std::string("evoc ") + EVOC_VERSION + "\nllvm " + LLVM_VERSION_STRING +
                    "\ntarget " + host.triple + " " + host.cpu + " " + host.features +
                    "\nllvm-args " + host.llvmArgs + "\nopt " + std::to_string(level) +
                    (fp == FpMode::Fast ? " fast" : " strict") + "\npost " +
                    postPipeline(level, fp) + "\n" + printModule(*lm));
    if (auto hit = cacheLoad(dir, key)) {
      object = std::move(*hit);
      exe->fromCache_ = true;
    }
    if (!dir.empty())
      exe->cacheEntry_ = cacheEntryPath(dir, key);
  }
  if (!exe->fromCache_) {
    optimize(*lm, *tm, level, fp);
    object = emitObject(*lm, *tm);
    if (opts.useCache)
      cacheStore(dir, key, object); // best effort: an unwritable cache only costs time
  }
  exe->impl_->jit.addObject(object, "evoc." + m.name + ".o");
  for (size_t k = 0; k < m.kernels.size(); ++k)
    exe->fns_.push_back(
        loweredInLanes(m.kernels[k], opts.lanes)
            ? reinterpret_cast<ir::KernelFn>(exe->impl_->jit.lookup(kernelSymbol(int(k))))
            : nullptr);
  if (!m.products.empty()) {
    exe->product_ = reinterpret_cast<CpuExecutable::WindowProductFn>(
        exe->impl_->jit.lookup(windowProductSymbol()));
    exe->f32_ = m.precision == ir::Precision::F32;
    exe->productLanes_ = std::max(1, opts.lanes);
  }
  exe->compileSeconds_ =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return exe;
}

void CpuExecutable::windowProduct(bool f32, void *grad, const void *rows, const void *x, int64_t S,
                                  int64_t U, int64_t n, int64_t ld, int lanes) const {
  if (!product_ || lanes != productLanes_)
    return Executable::windowProduct(f32, grad, rows, x, S, U, n, ld, lanes);
  EVOC_ASSERT(f32 == f32_, "a window product of the wrong precision");
  product_(grad, rows, x, S, U, n, ld);
}

std::string emitLLVM(const ir::Module &m, int optLevel, FpMode fp) {
  const int level = clampLevel(optLevel);
  std::unique_ptr<llvm::TargetMachine> tm = createHostTargetMachine(level);
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> lm = lower(m, ctx, *tm, level, fp);
  optimize(*lm, *tm, level, fp);
  return printModule(*lm);
}

std::string hostDescription() {
  const HostTarget &h = hostTarget();
  return h.cpu + " (" + h.triple + ")";
}

} // namespace evoc::codegen::cpu
