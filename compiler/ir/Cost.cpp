// FLOP counts of kernels (Cost.h).
#include "ir/Cost.h"

namespace evoc::ir {

namespace {
double blockFlops(const Block &b, const int64_t *sizes) {
  double n = 0;
  for (const auto &in : b.insts) {
    if (in->op == Op::Loop)
      n += double(sizes[in->set]) * blockFlops(*in->body, sizes);
    else if (isFlop(in->op))
      n += 1;
  }
  return n;
}
} // namespace

double kernelFlops(const Module &m, int k, const int64_t *sizes) {
  return blockFlops(m.kernels.at(size_t(k)).body, sizes);
}

double productFlopsPerStep(const Module &m, const int64_t *sizes) {
  double n = 0;
  for (const WindowProduct &p : m.products)
    n += 2.0 * double(bufferLength(m, p.rows, sizes)) * double(bufferLength(m, p.x, sizes));
  return n;
}

} // namespace evoc::ir
