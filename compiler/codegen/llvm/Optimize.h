// Host target, the new-PassManager optimisation pipeline and object emission.
#pragma once

#include <memory>
#include <string>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace evoc::codegen::cpu {

/// The machine evoc compiles for: the host, with its real CPU features.
struct HostTarget {
  std::string triple;
  std::string cpu;      // llvm::sys::getHostCPUName()
  std::string features; // from llvm::sys::getHostCPUFeatures()
  std::string llvmArgs; // evoc's LLVM options + $EVOC_LLVM_ARGS, parsed once
};

/// Initialises the native LLVM target once (thread-safe) and describes it.
const HostTarget &hostTarget();

/// A TargetMachine for the host at optimisation level `optLevel` (0..3).
std::unique_ptr<llvm::TargetMachine> createHostTargetMachine(int optLevel);

/// Runs the default O`optLevel` pipeline (PassBuilder) on `m`, with the
/// loop and SLP vectorisers on for levels >= 2.
void optimizeModule(llvm::Module &m, llvm::TargetMachine &tm, int optLevel);

/// Emits `m` as a relocatable object file for `tm`.
std::string emitObject(llvm::Module &m, llvm::TargetMachine &tm);

} // namespace evoc::codegen::cpu
