// Op tables (driven by the EVOC_IR_OPS list) and Module look-ups.
#include "ir/IR.h"
#include "ir/Walk.h"

namespace evoc::ir {

const char *opName(Op op) {
  switch (op) {
#define EVOC_X(Name, mnemonic, nargs, type, traits)                                                \
  case Op::Name:                                                                                   \
    return mnemonic;
    EVOC_IR_OPS(EVOC_X)
#undef EVOC_X
  }
  return "?";
}

int opNumArgs(Op op) {
  switch (op) {
#define EVOC_X(Name, mnemonic, nargs, type, traits)                                                \
  case Op::Name:                                                                                   \
    return nargs;
    EVOC_IR_OPS(EVOC_X)
#undef EVOC_X
  }
  return 0;
}

Type opResultType(Op op) {
  switch (op) {
#define EVOC_X(Name, mnemonic, nargs, type, traits)                                                \
  case Op::Name:                                                                                   \
    return Type::type;
    EVOC_IR_OPS(EVOC_X)
#undef EVOC_X
  }
  return Type::None;
}

unsigned opTraits(Op op) {
  switch (op) {
#define EVOC_X(Name, mnemonic, nargs, type, traits)                                                \
  case Op::Name:                                                                                   \
    return traits;
    EVOC_IR_OPS(EVOC_X)
#undef EVOC_X
  }
  return kNoTraits;
}

namespace {
template <class Vec> int findByName(const Vec &v, const std::string &n) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i].name == n)
      return static_cast<int>(i);
  return -1;
}
} // namespace

int Module::findSet(const std::string &n) const { return findByName(sets, n); }
int Module::findBuffer(const std::string &n) const { return findByName(buffers, n); }
int Module::findKernel(const std::string &n) const { return findByName(kernels, n); }

int64_t bufferLength(const Module &m, int b, const int64_t *sizes) {
  const Buffer &buf = m.buffers.at(b);
  int64_t n = buf.comps;
  for (int s : buf.sets)
    n *= sizes[s];
  return n;
}

void deriveSetSizes(const Module &m, int64_t *sizes) {
  for (size_t s = 0; s < m.sets.size(); ++s) {
    const ElementSet &es = m.sets[s];
    if (es.fromBody)
      continue;
    int64_t n = es.base;
    for (auto [set, coef] : es.terms)
      n += coef * sizes[set];
    sizes[s] = n;
  }
}

} // namespace evoc::ir
