// The CPU back end's public entry points (no LLVM types cross this header).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "codegen/Executable.h"
#include "ir/IR.h"

namespace evoc::codegen::cpu {

/// Floating-point freedom given to the optimiser. Fast: FMA contraction and
/// reassociated sums (vectorised reductions); results differ from the
/// interpreter by rounding only. Strict: bit-for-bit the interpreter's
/// arithmetic (same libm), slower reductions.
enum class FpMode : uint8_t { Fast, Strict };

/// A module JIT-compiled for the host CPU: one native function per kernel.
class CpuExecutable final : public Executable {
public:
  using WindowProductFn = void (*)(void *, const void *, const void *, int64_t, int64_t, int64_t,
                                   int64_t);
  ~CpuExecutable() override;
  void run(int k, void *const *buffers, const int64_t *sizes, int64_t t) const override {
    fns_[size_t(k)](buffers, sizes, t);
  }
  /// The generated window product (codegen/cpu/WindowProduct.h) when the
  /// module has products and `lanes` is the executable's (CompileOptions::lanes);
  /// otherwise the reference.
  void windowProduct(bool f32, void *grad, const void *rows, const void *x, int64_t S, int64_t U,
                     int64_t n, int64_t ld, int lanes) const override;
  /// The native function of kernel `k` (the ir::KernelFn ABI).
  ir::KernelFn kernel(int k) const { return fns_.at(size_t(k)); }
  /// The generated window product's entry point, or null (for profilers' maps).
  const void *windowProductEntry() const { return reinterpret_cast<const void *>(product_); }
  /// True when the object came from the on-disk cache.
  bool fromCache() const { return fromCache_; }
  /// Wall time of compile() in seconds (lowering, optimisation or cache load, link).
  double compileSeconds() const { return compileSeconds_; }
  /// The cache entry used or written ("" when caching was off).
  const std::string &cacheEntry() const { return cacheEntry_; }

private:
  friend std::unique_ptr<CpuExecutable> compileCpu(const ir::Module &, const CompileOptions &,
                                                   FpMode);
  CpuExecutable();
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<ir::KernelFn> fns_;
  WindowProductFn product_ = nullptr;
  int productLanes_ = 1; // the episodes in lanes product_ was generated for
  bool f32_ = false;
  bool fromCache_ = false;
  double compileSeconds_ = 0;
  std::string cacheEntry_;
};

/// Compiles every kernel of `m` for the host CPU (O`opts.optLevel`), through
/// the object cache when `opts.useCache`.
std::unique_ptr<CpuExecutable> compileCpu(const ir::Module &m, const CompileOptions &opts,
                                          FpMode fp = FpMode::Fast);

/// The LLVM IR of `m` as text, as lowered (`optLevel` 0) or after the
/// O`optLevel` pipeline for the host (`evoc compile --emit llvm`).
std::string emitLLVM(const ir::Module &m, int optLevel = 0, FpMode fp = FpMode::Fast);

/// "cpu-name (triple)" of the host, for reports and benchmarks.
std::string hostDescription();

} // namespace evoc::codegen::cpu

namespace evoc::codegen {

/// `evoc compile --emit llvm`: the CPU back end's LLVM IR (see cpu::emitLLVM).
inline std::string emitLLVM(const ir::Module &m, int optLevel = 0) {
  return cpu::emitLLVM(m, optLevel);
}

} // namespace evoc::codegen
