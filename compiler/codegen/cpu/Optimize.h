// Host target, the new-PassManager optimisation pipeline and object emission.
#pragma once

#include <memory>
#include <string>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace evoc::codegen::cpu {

/// The machine evoc compiles for: the host, with its real CPU features, or
/// the processor $EVOC_CPU names (an LLVM CPU such as x86-64-v3 or znver4,
/// refused unless this machine can run its code; "host" or unset: the host).
struct HostTarget {
  std::string triple;
  std::string cpu;      // llvm::sys::getHostCPUName(), or $EVOC_CPU
  std::string features; // from llvm::sys::getHostCPUFeatures(), or the named CPU's
  std::string llvmArgs; // evoc's LLVM options + $EVOC_LLVM_ARGS, parsed once
  bool named = false;   // $EVOC_CPU chose the processor
};

/// Initialises the native LLVM target once (thread-safe) and describes it.
const HostTarget &hostTarget();

/// Whether `features` ("+a,-b,+c") enables the feature `name` (whole names:
/// "avx512f" is not "avx512fp16").
bool hasFeature(const std::string &features, const std::string &name);

/// A TargetMachine for the chosen target at optimisation level `optLevel` (0..3).
std::unique_ptr<llvm::TargetMachine> createHostTargetMachine(int optLevel);

/// Runs the default O`optLevel` pipeline (PassBuilder) on `m`, with the
/// loop and SLP vectorisers on for levels >= 2.
void optimizeModule(llvm::Module &m, llvm::TargetMachine &tm, int optLevel);

/// Emits `m` as a relocatable object file for `tm`.
std::string emitObject(llvm::Module &m, llvm::TargetMachine &tm);

} // namespace evoc::codegen::cpu
