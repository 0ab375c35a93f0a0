// Host target, the new-PassManager optimisation pipeline and object emission.
#include "codegen/cpu/Optimize.h"

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
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>

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

/// The features the CPU `cpu` has, in "+name,+name" form, after checking
/// that LLVM knows it and that this machine can run its code: a feature it
/// enables that the host lacks would end in an illegal instruction.
std::string namedCpuFeatures(const std::string &triple, const std::string &cpu) {
  std::string err;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, err);
  if (!target)
    throw Error("the CPU back end cannot target " + triple + ": " + err);
  // Asked of the generic subtarget first: LLVM warns on stderr when it is
  // handed a CPU it does not know.
  std::unique_ptr<llvm::MCSubtargetInfo> generic(target->createMCSubtargetInfo(triple, "", ""));
  std::unique_ptr<llvm::MCSubtargetInfo> sti;
  if (generic && generic->isCPUStringValid(cpu))
    sti.reset(target->createMCSubtargetInfo(triple, cpu, ""));
  if (!sti)
    throw Error("EVOC_CPU='" + cpu + "' is not a processor LLVM knows for " + triple +
                "; use one of x86-64-v2, x86-64-v3, x86-64-v4, znver3, znver4, "
                "sapphirerapids, ... or 'host' (the default)");
  const llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
  std::string features, missing;
  for (const llvm::SubtargetFeatureKV &kv : sti->getAllProcessorFeatures()) {
    const std::string name = kv.Key;
    if (!sti->checkFeatures("+" + name))
      continue;
    features += (features.empty() ? "+" : ",+") + name;
    // Only ISA extensions appear in the host's map; tuning flags do not.
    if (auto it = host.find(name); it != host.end() && !it->second)
      missing += (missing.empty() ? "" : ", ") + name;
  }
  if (!missing.empty())
    throw Error("EVOC_CPU='" + cpu + "' needs instructions this machine (" +
                llvm::sys::getHostCPUName().str() + ") does not have: " + missing +
                "; name an older processor (e.g. x86-64-v2) or unset EVOC_CPU");
  return features;
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
    // EVOC_CPU names the processor to generate for (the tests use it to
    // show on any machine what another one would compute).
    const char *cpu = std::getenv("EVOC_CPU");
    if (cpu && *cpu && std::string(cpu) != "host") {
      host.cpu = cpu;
      host.features = namedCpuFeatures(host.triple, host.cpu);
      host.named = true;
    } else {
      host.cpu = jtmb.getCPU();
      host.features = jtmb.getFeatures().getString();
    }
  });
  return host;
}

bool hasFeature(const std::string &features, const std::string &name) {
  const std::string want = "+" + name;
  size_t at = 0;
  while ((at = features.find(want, at)) != std::string::npos) {
    const size_t end = at + want.size();
    if ((at == 0 || features[at - 1] == ',') && (end == features.size() || features[end] == ','))
      return true;
    at = end;
  }
  return false;
}

namespace {

/// hostBuilder() retargeted to the chosen processor (hostTarget()).
llvm::orc::JITTargetMachineBuilder targetBuilder() {
  const HostTarget &target = hostTarget();
  llvm::orc::JITTargetMachineBuilder jtmb = hostBuilder();
  if (target.named) {
    jtmb.setCPU(target.cpu);
    jtmb.getFeatures() = llvm::SubtargetFeatures(target.features);
  }
  return jtmb;
}

} // namespace

std::unique_ptr<llvm::TargetMachine> createHostTargetMachine(int optLevel) {
  llvm::orc::JITTargetMachineBuilder jtmb = targetBuilder();
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
