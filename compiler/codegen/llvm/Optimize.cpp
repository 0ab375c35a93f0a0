// Host target, the new-PassManager optimisation pipeline and object emission.
#include "codegen/llvm/Optimize.h"

#include <cstdlib>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include <llvm/ADT/SmallVector.h>
#include <llvm/Analysis/CGSCCPassManager.h>
#include <llvm/Analysis/LoopAnalysisManager.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include "support/Error.h"

namespace evoc::codegen::cpu {

namespace {

llvm::orc::JITTargetMachineBuilder hostBuilder() {
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb)
    throw Error("the CPU back end cannot target this machine: " + llvm::toString(jtmb.takeError()));
  jtmb->setRelocationModel(llvm::Reloc::PIC_);
  jtmb->setCodeModel(llvm::CodeModel::Small);
  return std::move(*jtmb);
}

llvm::CodeGenOptLevel codeGenLevel(int level) {
  switch (level) {
  case 0:
    return llvm::CodeGenOptLevel::None;
  case 1:
    return llvm::CodeGenOptLevel::Less;
  case 2:
    return llvm::CodeGenOptLevel::Default;
  default:
    return llvm::CodeGenOptLevel::Aggressive;
  }
}

} // namespace

const HostTarget &hostTarget() {
  static HostTarget host;
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    // LLVM options, parsed once per process (they are part of the cache key
    // through HostTarget::llvmArgs). Vectorised epilogues from VF 8 on (the
    // default starts at 16): the 12 + 4n inputs of a small robot's
    // controller leave up to 31 scalar iterations per row otherwise; 10-15%
    // faster kernels for 6x10 robots. EVOC_LLVM_ARGS adds options for
    // experiments.
    host.llvmArgs = "-epilogue-vectorization-minimum-VF=8";
    if (const char *env = std::getenv("EVOC_LLVM_ARGS"); env && *env)
      host.llvmArgs += std::string(" ") + env;
    std::vector<std::string> words{"evoc"};
    std::istringstream in(host.llvmArgs);
    for (std::string w; in >> w;)
      words.push_back(w);
    std::vector<const char *> argv;
    for (const auto &w : words)
      argv.push_back(w.c_str());
    if (!llvm::cl::ParseCommandLineOptions(int(argv.size()), argv.data(), "evoc", &llvm::errs()))
      throw Error("LLVM did not accept the options '" + host.llvmArgs +
                  "' (from EVOC_LLVM_ARGS); fix or unset EVOC_LLVM_ARGS.");
    llvm::orc::JITTargetMachineBuilder jtmb = hostBuilder();
    host.triple = jtmb.getTargetTriple().str();
    host.cpu = jtmb.getCPU();
    host.features = jtmb.getFeatures().getString();
  });
  return host;
}

std::unique_ptr<llvm::TargetMachine> createHostTargetMachine(int optLevel) {
  hostTarget();
  llvm::orc::JITTargetMachineBuilder jtmb = hostBuilder();
  jtmb.setCodeGenOptLevel(codeGenLevel(optLevel));
  // Contraction only where the IR says `contract` (fastFp mode).
  jtmb.getOptions().AllowFPOpFusion = llvm::FPOpFusion::Standard;
  auto tm = jtmb.createTargetMachine();
  if (!tm)
    throw Error("the CPU back end cannot create a target machine: " +
                llvm::toString(tm.takeError()));
  return std::move(*tm);
}

void optimizeModule(llvm::Module &m, llvm::TargetMachine &tm, int optLevel) {
  if (optLevel <= 0)
    return;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions pto;
  pto.LoopVectorization = optLevel >= 2;
  pto.SLPVectorization = optLevel >= 2;
  pto.LoopUnrolling = true;
  llvm::PassBuilder pb(&tm, pto);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = optLevel == 1   ? llvm::OptimizationLevel::O1
                                  : optLevel == 2 ? llvm::OptimizationLevel::O2
                                                  : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(level);
  mpm.run(m, mam);
}

std::string emitObject(llvm::Module &m, llvm::TargetMachine &tm) {
  llvm::SmallVector<char, 0> buf;
  llvm::raw_svector_ostream os(buf);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    internalError(__FILE__, __LINE__, "the host target cannot emit object files");
  pm.run(m);
  return std::string(buf.data(), buf.size());
}

} // namespace evoc::codegen::cpu
