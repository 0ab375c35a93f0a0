// The back ends a test body runs on: every one present on this machine.
#include "Backends.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "codegen/cpu/CpuBackend.h"
#include "support/Error.h"

namespace evoc::test {

std::vector<BackendUnderTest> backendsUnderTest(const ir::Module &m, double fastRtol,
                                                double cudaRtol) {
  codegen::CompileOptions opts;
  opts.useCache = false;
  std::vector<BackendUnderTest> out;
  out.push_back({"interp", codegen::compile(m, codegen::BackendKind::Interp, opts), 0});
  out.push_back({"cpu-strict", codegen::cpu::compileCpu(m, opts, codegen::cpu::FpMode::Strict), 0});
  out.push_back({"cpu", codegen::compile(m, codegen::BackendKind::Cpu, opts), fastRtol});
  try {
    out.push_back({"cuda", codegen::compile(m, codegen::BackendKind::Cuda, opts), cudaRtol});
  } catch (const Error &) {
    // No CUDA here: the same test bodies run on the other back ends.
  }
  return out;
}

bool agrees(double a, double b, double rtol, double floor) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  if (rtol == 0)
    return std::memcmp(&a, &b, sizeof a) == 0 || a == b;
  if (a == b)
    return true;
  double scale = std::max({std::fabs(a), std::fabs(b), floor});
  return std::fabs(a - b) <= rtol * scale;
}

} // namespace evoc::test
