// The CUDA rollout's device-memory estimate and its refusal: the estimate is
// what the rollout allocates, and a population larger than the device's free
// memory (a fake figure here: no GPU needed) is refused before anything is
// allocated, with what it needs and which settings to lower.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "RolloutCheck.h"
#include "codegen/cuda/Internal.h"
#include "cuda/CudaRollout.h"
#include "support/Error.h"

using namespace evoc;
using namespace evoc::test;

namespace {

/// A device with a given amount of free memory that records allocations and
/// ignores copies; launches are not expected.
class FakeDevice final : public codegen::cuda::DeviceApi {
public:
  int64_t freeBytes = -1, totalBytes = -1;
  int64_t allocated = 0;
  int allocations = 0;
  uint64_t alloc(size_t n) override {
    allocated += int64_t(n);
    ++allocations;
    return 1u << 20; // any nonzero address
  }
  void free(uint64_t) override {}
  void upload(uint64_t, const void *, size_t) override {}
  void download(void *, uint64_t, size_t) override {}
  void zero(uint64_t, size_t) override {}
  void launch(const std::string &, int, const codegen::cuda::KernelArgs &) override {
    throw std::logic_error("the fake device runs no kernels");
  }
  codegen::cuda::DeviceMemory memory() override { return {freeBytes, totalBytes}; }
};

class FakeExecutable final : public codegen::cuda::CudaExecutable {
public:
  mutable FakeDevice dev;
  void run(int, void *const *, const int64_t *, int64_t) const override {}
  void runBatch(int, int, void *const *const *, const int64_t *, int64_t) const override {}
  std::string deviceName() const override { return "fake"; }
  codegen::cuda::DeviceApi &device() const override { return dev; }
};

/// Set sizes of `n` robots of the mass-spring module (points, springs; the
/// derived sets filled in).
std::vector<int64_t> populationSizes(const ir::Module &m, const MassSpringIds &d, int n,
                                     int64_t points, int64_t springs) {
  std::vector<int64_t> sizes;
  for (int r = 0; r < n; ++r) {
    std::vector<int64_t> s(m.sets.size(), 0);
    s[size_t(d.point)] = points;
    s[size_t(d.spring)] = springs;
    ir::deriveSetSizes(m, s.data());
    sizes.insert(sizes.end(), s.begin(), s.end());
  }
  return sizes;
}

} // namespace

TEST_CASE("CudaRollout: the device-memory estimate is what it allocates", "[cuda][memory]") {
  auto [d, params, m] = differentiatedModule();
  FakeExecutable exe; // free memory unknown: no refusal
  for (auto [n, T] : {std::pair<int, int64_t>{1, 2}, {3, 10}, {50, 1000}}) {
    INFO(n << " robots x " << T << " states");
    auto sizes = populationSizes(m, d, n, 42, 101);
    const int64_t need = cuda::CudaRollout::deviceBytesNeeded(m, n, sizes.data(), T);
    exe.dev.allocated = 0;
    cuda::CudaRollout ro(exe, m, n, sizes.data(), T);
    CHECK(exe.dev.allocated == need);
    CHECK(ro.deviceBytes() == need);
    // The full tapes dominate: at least T states of x and v per robot.
    CHECK(need >= int64_t(n) * T * 42 * 2 * 2 * 8);
  }
  // Linear in the robots and the states (ragged sizes aside).
  auto s10 = populationSizes(m, d, 10, 42, 101), s20 = populationSizes(m, d, 20, 42, 101);
  const int64_t a = cuda::CudaRollout::deviceBytesNeeded(m, 10, s10.data(), 1000);
  const int64_t b = cuda::CudaRollout::deviceBytesNeeded(m, 20, s20.data(), 1000);
  CHECK(b == Approx(2.0 * double(a)).epsilon(0.01));
}

TEST_CASE("CudaRollout: a population beyond the device's free memory is refused before "
          "allocation",
          "[cuda][memory]") {
  auto [d, params, m] = differentiatedModule();
  const int n = 1000;
  const int64_t T = 1000;
  auto sizes = populationSizes(m, d, n, 168, 453); // the paper's largest lattice
  const int64_t need = cuda::CudaRollout::deviceBytesNeeded(m, n, sizes.data(), T);
  CHECK(need > (int64_t(4) << 30)); // 1000 x 1000 x 168 x 2 x 2 x 8 bytes of tapes alone
  FakeExecutable exe;
  exe.dev.freeBytes = int64_t(4) << 30; // 4 GiB free of 80
  exe.dev.totalBytes = int64_t(80) << 30;
  try {
    cuda::CudaRollout ro(exe, m, n, sizes.data(), T);
    FAIL("the rollout was not refused");
  } catch (const Error &e) {
    const std::string msg = e.what();
    INFO(msg);
    char needs[64];
    std::snprintf(needs, sizeof needs, "needs %.2f GiB of GPU memory", double(need) / (1 << 30));
    CHECK(msg.find("the CUDA rollout of 1000 robots x 1000 states") != std::string::npos);
    CHECK(msg.find(needs) != std::string::npos);
    CHECK(msg.find("the GPU has 4.00 GiB free (of 80.00 GiB)") != std::string::npos);
    CHECK(msg.find("full tapes of 1000 states") != std::string::npos);
    CHECK(msg.find("lower evolve.population") != std::string::npos);
    CHECK(msg.find("world.steps") != std::string::npos);
  }
  CHECK(exe.dev.allocations == 0);
  // Exactly enough is enough.
  exe.dev.freeBytes = need;
  cuda::CudaRollout fits(exe, m, n, sizes.data(), T);
  CHECK(exe.dev.allocated == need);
}

TEST_CASE("checkDeviceMemory: the sentence, and silence when the free memory is unknown",
          "[cuda][memory]") {
  using codegen::cuda::checkDeviceMemory;
  CHECK_NOTHROW(checkDeviceMemory({}, int64_t(1) << 40, "x", "y"));
  CHECK_NOTHROW(checkDeviceMemory({100, 200}, 100, "x", "y"));
  try {
    checkDeviceMemory({int64_t(1) << 30, -1}, int64_t(3) << 30, "a launch", "lower it");
    FAIL("not refused");
  } catch (const Error &e) {
    CHECK(std::string(e.what()) ==
          "a launch needs 3.00 GiB of GPU memory, but the GPU has 1.00 GiB free; lower it.");
  }
}
