// The back end's device helpers that runtime/cuda uses: the memory check,
// the kernels' scratch sizes and the rollout's fields.
#include "codegen/cuda/DeviceApi.h"

#include <algorithm>
#include <cstdio>

#include "codegen/cuda/KernelPlan.h"
#include "support/Error.h"

namespace evoc::codegen::cuda {

struct KernelPlans::Impl {
  const ir::Module &m;
  std::vector<KernelPlan> plans;
};

KernelPlans::KernelPlans(const ir::Module &m) : p_(new Impl{m, planModule(m)}) {}

KernelPlans::~KernelPlans() = default;

int64_t KernelPlans::maxScratchBytes(const int64_t *sizes) const {
  int64_t most = 0;
  for (const KernelPlan &p : p_->plans)
    most = std::max(most, scratchBytes(p, p_->m.precision, sizes));
  return most;
}

std::string kernelParamsSource() {
  std::string out;
#define EVOC_X(cuda, host, name)                                                                   \
  out += std::string(out.empty() ? "" : ", ") + cuda +                                             \
         (cuda[sizeof(cuda) - 2] == '*' ? "" : " ") + "evoc_" #name;
  EVOC_KERNEL_PARAMS(EVOC_X)
#undef EVOC_X
  return out;
}

std::string kernelHead(const std::string &symbol) {
  return "extern \"C\" __global__ void __launch_bounds__(EVOC_BLOCK)\n" + symbol + "(" +
         kernelParamsSource() + ") {\n";
}

void checkDeviceMemory(const DeviceMemory &mem, int64_t needed, const std::string &what,
                       const std::string &lower) {
  if (mem.free < 0 || needed <= mem.free)
    return;
  auto gib = [](int64_t b) { return double(b) / double(1ull << 30); };
  char msg[200];
  if (mem.total >= 0)
    std::snprintf(msg, sizeof msg,
                  "needs %.2f GiB of GPU memory, but the GPU has %.2f GiB free "
                  "(of %.2f GiB)",
                  gib(needed), gib(mem.free), gib(mem.total));
  else
    std::snprintf(msg, sizeof msg, "needs %.2f GiB of GPU memory, but the GPU has %.2f GiB free",
                  gib(needed), gib(mem.free));
  throw Error(what + " " + msg + "; " + lower + ".");
}

} // namespace evoc::codegen::cuda
