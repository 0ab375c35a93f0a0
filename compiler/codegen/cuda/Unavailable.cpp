// The CUDA back end's entry points in a build without the CUDA toolkit:
// emitCuda still works; everything that needs NVRTC or a GPU says why not.
#include "codegen/cuda/CudaBackend.h"
#include "support/Error.h"

namespace evoc::codegen::cuda {
namespace {

const char *kWhy = "--backend cuda is unavailable: this evoc was built without the CUDA "
                   "toolkit (NVRTC); rebuild with CUDA under EVOC_CUDA_ROOT, or use --backend cpu.";

} // namespace

std::string emitPtx(const ir::Module &, const std::string &) { throw Error(kWhy); }

std::string emitCubin(const ir::Module &, const std::string &, const CompileOptions &) {
  throw Error(kWhy);
}

std::unique_ptr<CudaExecutable> compileCuda(const ir::Module &, const CompileOptions &) {
  throw Error(kWhy);
}

double measurePeakFlops(ir::Precision, double *, std::string *) { throw Error(kWhy); }

bool cudaAvailable(std::string *why) {
  if (why)
    *why = kWhy;
  return false;
}

} // namespace evoc::codegen::cuda
