// The back-end factory: names of back ends and compile() for each of them.
#include <utility>

#include "codegen/Executable.h"
#include "codegen/cpu/CpuBackend.h"
#include "ir/Interpreter.h"
#include "support/Error.h"
#ifdef EVOC_CODEGEN_WITH_CUDA
#include "codegen/cuda/CudaBackend.h"
#endif

namespace evoc::codegen {

bool parseBackend(const std::string &s, BackendKind &out) {
  if (s == "interp")
    out = BackendKind::Interp;
  else if (s == "cpu")
    out = BackendKind::Cpu;
  else if (s == "cuda")
    out = BackendKind::Cuda;
  else
    return false;
  return true;
}

namespace {

/// The IR interpreter behind the Executable interface (the ground truth).
class InterpExecutable final : public Executable {
public:
  /// Holds a deep copy: the executable must outlive the caller's module.
  explicit InterpExecutable(ir::Module m) : m_(std::move(m)) {}
  void run(int k, void *const *buffers, const int64_t *sizes, int64_t t) const override {
    ir::interpret(m_, k, buffers, sizes, t);
  }

private:
  ir::Module m_;
};

} // namespace

std::unique_ptr<Executable> compile(const ir::Module &m, BackendKind kind,
                                    const CompileOptions &opts) {
  switch (kind) {
  case BackendKind::Interp:
    return std::make_unique<InterpExecutable>(ir::clone(m));
  case BackendKind::Cpu:
    return cpu::compileCpu(m, opts);
  case BackendKind::Cuda:
#ifdef EVOC_CODEGEN_WITH_CUDA
    return cuda::compileCuda(m, opts);
#else
    throw Error("evoc was built without the CUDA back end (no NVRTC was found at build "
                "time); rebuild with the CUDA toolkit installed, or use --backend cpu.");
#endif
  }
  internalError(__FILE__, __LINE__, "unknown back end");
}

} // namespace evoc::codegen
