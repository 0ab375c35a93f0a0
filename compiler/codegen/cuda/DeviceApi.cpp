// The back end's device helpers that runtime/cuda uses: the memory check
// and the kernels' scratch sizes.
#include "codegen/cuda/DeviceApi.h"

#include <algorithm>
#include <cstdio>

#include "codegen/cuda/KernelPlan.h"
#include "support/Error.h"

namespace evoc::codegen::cuda {

struct KernelScratch::Impl {
  ir::Precision precision;
  std::vector<KernelPlan> plans;
};

KernelScratch::KernelScratch(const ir::Module &m) : p_(std::make_unique<Impl>()) {
  p_->precision = m.precision;
  p_->plans = planModule(m);
}

KernelScratch::~KernelScratch() = default;

int64_t KernelScratch::maxBytes(const int64_t *sizes) const {
  int64_t most = 0;
  for (const KernelPlan &p : p_->plans)
    most = std::max(most, scratchBytes(p, p_->precision, sizes));
  return most;
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
