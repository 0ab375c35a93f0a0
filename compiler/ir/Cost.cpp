// FLOP counts of kernels (Cost.h).
#include "ir/Cost.h"

namespace evoc::ir {

namespace {
double blockFlops(const Block &b, const int64_t *sizes) {
  double n = 0;
  for (const auto &in : b.insts) {
    switch (in->op) {
    case Op::Add:
    case Op::Sub:
    case Op::Mul:
    case Op::Div:
    case Op::Sqrt:
    case Op::Pow:
    case Op::Sin:
    case Op::Cos:
    case Op::Tanh:
    case Op::Exp:
    case Op::Log:
    case Op::LocalAdd:
    case Op::AccAdd:
      n += 1;
      break;
    case Op::Loop:
      n += double(sizes[in->set]) * blockFlops(*in->body, sizes);
      break;
    default:
      break;
    }
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
