// The CPU back end: lower, optimise, cache and link a module; emit LLVM IR text.
#include "codegen/llvm/CpuBackend.h"

#include <chrono>

#include <llvm/Config/llvm-config.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "codegen/llvm/Jit.h"
#include "codegen/llvm/LoopFission.h"
#include "codegen/llvm/LowerToLLVM.h"
#include "codegen/llvm/ObjectCache.h"
#include "codegen/llvm/Optimize.h"

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

/// The module as lowered: in fast mode, after loop fission (whose scratch
/// buffers follow the module's own).
std::unique_ptr<llvm::Module> lower(const ir::Module &m, llvm::LLVMContext &ctx,
                                    const llvm::TargetMachine &tm, int level, FpMode fp) {
  const int nBuffers = int(m.buffers.size());
  if (fp == FpMode::Fast && level >= 2) {
    ir::Module split = ir::clone(m);
    fissionLoops(split);
    return lowerToLLVM(split, ctx, tm.createDataLayout(), hostTarget().triple, true, nBuffers);
  }
  return lowerToLLVM(m, ctx, tm.createDataLayout(), hostTarget().triple, fp == FpMode::Fast,
                     nBuffers);
}

} // namespace

std::unique_ptr<CpuExecutable> compileCpu(const ir::Module &m, const CompileOptions &opts,
                                          FpMode fp) {
  auto t0 = std::chrono::steady_clock::now();
  const int level = clampLevel(opts.optLevel);
  const HostTarget &host = hostTarget();
  std::unique_ptr<llvm::TargetMachine> tm = createHostTargetMachine(level);
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> lm = lower(m, ctx, *tm, level, fp);

  std::unique_ptr<CpuExecutable> exe(new CpuExecutable());
  std::string object, key, dir;
  if (opts.useCache) {
    dir = cacheDirectory(opts.cacheDir);
    // Everything that decides the object's bytes is in the key.
    key = sha256Hex(std::string("evoc ") + EVOC_VERSION + "\nllvm " + LLVM_VERSION_STRING +
                    "\ntarget " + host.triple + " " + host.cpu + " " + host.features +
                    "\nllvm-args " + host.llvmArgs + "\nopt " + std::to_string(level) +
                    (fp == FpMode::Fast ? " fast" : " strict") + "\n" + printModule(*lm));
    if (auto hit = cacheLoad(dir, key)) {
      object = std::move(*hit);
      exe->fromCache_ = true;
    }
    if (!dir.empty())
      exe->cacheEntry_ = cacheEntryPath(dir, key);
  }
  if (!exe->fromCache_) {
    optimizeModule(*lm, *tm, level);
    object = emitObject(*lm, *tm);
    if (opts.useCache)
      cacheStore(dir, key, object); // best effort: an unwritable cache only costs time
  }
  exe->impl_->jit.addObject(object, "evoc." + m.name + ".o");
  for (size_t k = 0; k < m.kernels.size(); ++k)
    exe->fns_.push_back(
        reinterpret_cast<ir::KernelFn>(exe->impl_->jit.lookup(kernelSymbol(int(k)))));
  exe->compileSeconds_ =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return exe;
}

std::string emitLLVM(const ir::Module &m, int optLevel, FpMode fp) {
  const int level = clampLevel(optLevel);
  std::unique_ptr<llvm::TargetMachine> tm = createHostTargetMachine(level);
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> lm = lower(m, ctx, *tm, level, fp);
  optimizeModule(*lm, *tm, level);
  return printModule(*lm);
}

std::string hostDescription() {
  const HostTarget &h = hostTarget();
  return h.cpu + " (" + h.triple + ")";
}

} // namespace evoc::codegen::cpu
