// A direct, tree-walking interpreter of the IR, templated on the float type.
#include "ir/Interpreter.h"

#include <string>
#include <vector>

#include "ir/OpSemantics.h"
#include "support/Error.h"

namespace evoc::ir {
namespace {

template <class F> class Interp {
public:
  Interp(const Module &m, const Kernel &k, void *const *bufs, const int64_t *sizes, int64_t t)
      : m_(m), k_(k), bufs_(bufs), sizes_(sizes), t_(t), fv_(k.nextValue + 1), iv_(k.nextValue + 1),
        lens_(m.buffers.size()) {
    for (size_t b = 0; b < lens_.size(); ++b)
      lens_[b] = bufferLength(m, static_cast<int>(b), sizes);
  }

  void run(const Block &b) {
    for (const auto &ip : b.insts)
      exec(*ip);
  }

private:
  Type typeOf(ValueId v) const { return v < k_.valueTypes.size() ? k_.valueTypes[v] : Type::None; }

  int64_t index(const Inst &in, ValueId v) {
    int64_t i = iv_[v];
    int64_t n = lens_[in.buffer];
    if (i < 0 || i >= n || !bufs_[in.buffer])
      internalError(__FILE__, __LINE__,
                    "interpreter: " + std::string(opName(in.op)) + " " +
                        m_.buffers[in.buffer].name + "[" + std::to_string(i) +
                        "] out of bounds (length " + std::to_string(n) +
                        ") or buffer missing in kernel " + k_.name);
    return i;
  }
  F *fbuf(int b) { return static_cast<F *>(bufs_[b]); }
  int32_t *ibuf(int b) { return static_cast<int32_t *>(bufs_[b]); }

  void exec(const Inst &in) {
    const auto &a = in.args;
    auto f = [&](int k) { return fv_[a[k]]; };
    auto i = [&](int k) { return iv_[a[k]]; };
    F &rf = fv_[in.result];
    int64_t &ri = iv_[in.result];
    switch (in.op) {
    case Op::ConstF:
      rf = static_cast<F>(in.f);
      break;
    case Op::ConstI:
      ri = in.i;
      break;
    case Op::ConstB:
      ri = in.i != 0;
      break;
    case Op::Time:
      ri = t_;
      break;
    case Op::Size:
      ri = sizes_[in.set];
      break;
    EVOC_IR_CASE_COMPUTE:
      evalPure(in.op, in.type, typeOf(a[0]) == Type::F, f, i, rf, ri);
      break;
    case Op::Load: {
      int64_t x = index(in, a[0]);
      if (m_.buffers[in.buffer].elem == Type::I)
        ri = ibuf(in.buffer)[x];
      else
        rf = fbuf(in.buffer)[x];
      break;
    }
    case Op::Store: {
      int64_t x = index(in, a[0]);
      if (m_.buffers[in.buffer].elem == Type::I)
        ibuf(in.buffer)[x] = static_cast<int32_t>(i(1));
      else
        fbuf(in.buffer)[x] = f(1);
      break;
    }
    case Op::AccAdd: {
      int64_t x = index(in, a[0]);
      if (m_.buffers[in.buffer].elem == Type::I)
        ibuf(in.buffer)[x] += static_cast<int32_t>(i(1));
      else
        fbuf(in.buffer)[x] += f(1);
      break;
    }
    case Op::Local:
      rf = static_cast<F>(in.f);
      break;
    case Op::LocalAdd:
    case Op::LocalMax:
    case Op::LocalMin:
      fv_[a[0]] = updateLocal(in.op, f(0), f(1));
      break;
    case Op::LocalGet:
      rf = f(0);
      break;
    case Op::Loop: {
      int64_t n = sizes_[in.set];
      for (int64_t e = 0; e < n; ++e) {
        iv_[in.body->arg] = e;
        run(*in.body);
      }
      break;
    }
    }
  }

  const Module &m_;
  const Kernel &k_;
  void *const *bufs_;
  const int64_t *sizes_;
  int64_t t_;
  std::vector<F> fv_;
  std::vector<int64_t> iv_;
  std::vector<int64_t> lens_; // buffer lengths for this call's set sizes
};

} // namespace

void interpret(const Module &m, int kernel, void *const *buffers, const int64_t *sizes, int64_t t) {
  const Kernel &k = m.kernels.at(kernel);
  if (m.precision == Precision::F64) {
    Interp<double> in(m, k, buffers, sizes, t);
    in.run(k.body);
  } else {
    Interp<float> in(m, k, buffers, sizes, t);
    in.run(k.body);
  }
}

} // namespace evoc::ir
