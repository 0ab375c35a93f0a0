// Lowering of an evoc IR module to an LLVM IR module (internal to codegen/cpu).
#pragma once

#include <memory>
#include <string>

#include "codegen/cpu/UnrollAndJam.h"
#include "ir/IR.h"

namespace llvm {
class DataLayout;
class LLVMContext;
class Module;
} // namespace llvm

namespace evoc::codegen::cpu {

/// Name of the exported C-ABI function (ir::KernelFn) of kernel `k`.
std::string kernelSymbol(int k);

/// Whether lowerToLLVM with `lanes` compiles kernel `k`: Init kernels write
/// the shared parameters, so they are compiled for one robot only.
inline bool loweredInLanes(const ir::Kernel &k, int lanes) {
  return lanes == 1 || k.kind != ir::KernelKind::Init;
}

/// Builds one LLVM function per kernel of `m` with llvm::IRBuilder. Every
/// exported function has the ir::KernelFn ABI and forwards the buffers it
/// uses, as noalias parameters, to an always-inline body, so the optimiser
/// sees that distinct buffers never overlap. With `fastFp`, float ops may
/// be contracted into FMAs and accumulator updates (LocalAdd) reassociated,
/// so reductions vectorise; without it the results are those of the IR
/// interpreter bit for bit. The result is verified; a verifier failure is an
/// internal error. Buffers from index `firstScratch` on are codegen-private
/// scratch (opt::fissionLoops) over one set: the exported function allocates
/// them on its stack instead of reading them from `buffers`.
///
/// With `lanes` > 1, each call runs that many episodes of one robot in
/// vector lanes (docs/architecture.md, "Episodes in lanes"): every float
/// value is a vector, a buffer other than the body and the parameters holds
/// element i of episode l at i * lanes + l, indices stay scalar. Lane l's
/// arithmetic is the scalar kernel's, operation for operation. A kernel that
/// cannot run so (it writes a shared buffer, or picks an index per episode)
/// throws evoc::Error; Init kernels are not compiled (loweredInLanes). In
/// lanes, a loop nest that jammableInner (UnrollAndJam.h) accepts runs
/// several rows of its outer loop per inner loop (`jam`), with the same
/// operations on every element in the same order.
std::unique_ptr<llvm::Module> lowerToLLVM(const ir::Module &m, llvm::LLVMContext &ctx,
                                          const llvm::DataLayout &dl, const std::string &triple,
                                          bool fastFp, int firstScratch, int lanes = 1,
                                          const JamOptions &jam = {});

} // namespace evoc::codegen::cpu
