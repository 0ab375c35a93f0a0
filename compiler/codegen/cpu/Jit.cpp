// The ORC LLJIT wrapper: links compiled objects into this process.
#include "codegen/cpu/Jit.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/MemoryBuffer.h>

#include "codegen/cpu/Optimize.h"
#include "support/Error.h"

namespace evoc::codegen::cpu {

namespace {
template <typename T> T check(llvm::Expected<T> v, const char *what) {
  if (!v)
    internalError(__FILE__, __LINE__, std::string(what) + ": " + llvm::toString(v.takeError()));
  return std::move(*v);
}
} // namespace

Jit::Jit() {
  hostTarget(); // initialises the native target
  auto jtmb = check(llvm::orc::JITTargetMachineBuilder::detectHost(), "JIT host detection");
  jtmb.setRelocationModel(llvm::Reloc::PIC_);
  jtmb.setCodeModel(llvm::CodeModel::Small);
  jit_ = check(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(jtmb)).create(),
               "creating the LLJIT");
  // Generated code calls libm (sin, tanh, ...): resolve it from this process.
  auto gen = check(llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
                       jit_->getDataLayout().getGlobalPrefix()),
                   "process symbol generator");
  jit_->getMainJITDylib().addGenerator(std::move(gen));
}

Jit::~Jit() = default;

void Jit::addObject(std::string_view object, const std::string &name) {
  auto buf =
      llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(object.data(), object.size()), name);
  if (llvm::Error e = jit_->addObjectFile(std::move(buf)))
    internalError(__FILE__, __LINE__, "JIT: adding object: " + llvm::toString(std::move(e)));
}

void *Jit::lookup(const std::string &symbol) {
  auto addr = check(jit_->lookup(symbol), "JIT symbol lookup");
  return addr.toPtr<void *>();
}

} // namespace evoc::codegen::cpu
