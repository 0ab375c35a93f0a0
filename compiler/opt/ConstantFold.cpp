// Constant folding and simple algebraic identities.
#include <map>

#include "ir/OpSemantics.h"
#include "ir/Verifier.h"
#include "ir/Walk.h"
#include "opt/Passes.h"

namespace evoc::opt {

using namespace ir;

namespace {

struct Const {
  Type type;
  double f = 0;
  int64_t i = 0;
};

// Evaluates a pure op on constants exactly as the interpreter does (the
// shared ir::evalPure), in precision F; float results are kept as doubles.
template <class F> bool eval(Op op, Type type, const std::vector<Const> &a, Const &out) {
  auto f = [&](int k) { return static_cast<F>(a[k].f); };
  auto i = [&](int k) { return a[k].i; };
  F r = 0;
  if (a.empty() || !evalPure(op, type, a[0].type == Type::F, f, i, r, out.i))
    return false;
  if (type == Type::F)
    out.f = static_cast<double>(r);
  return true;
}

class Folder {
public:
  Folder(const Module &m, Kernel &k) : m_(m), k_(k), repl_(k.nextValue + 1, 0) {}

  void run() {
    block(k_.body);
    replaceUses(k_.body, repl_);
  }

private:
  ValueId r(ValueId v) const {
    while (v < repl_.size() && repl_[v] && repl_[v] != v)
      v = repl_[v];
    return v;
  }
  const Const *c(ValueId v) const {
    auto it = consts_.find(r(v));
    return it == consts_.end() ? nullptr : &it->second;
  }
  bool isF(ValueId v, double x) const {
    const Const *k = c(v);
    return k && k->type == Type::F && k->f == x;
  }

  void makeConst(Inst &in, const Const &v) {
    in.op = v.type == Type::F ? Op::ConstF : v.type == Type::I ? Op::ConstI : Op::ConstB;
    in.args.clear();
    in.f = v.f;
    in.i = v.i;
    consts_[in.result] = v;
  }

  void block(Block &b) {
    for (auto &ip : b.insts) {
      Inst &in = *ip;
      for (ValueId &a : in.args)
        a = r(a);
      if (in.body) {
        block(*in.body);
        continue;
      }
      if (in.op == Op::ConstF) { // as the interpreter reads it in this precision
        consts_[in.result] = {
            Type::F,
            m_.precision == Precision::F32 ? static_cast<double>(static_cast<float>(in.f)) : in.f,
            0};
        continue;
      }
      if (in.op == Op::ConstI || in.op == Op::ConstB) {
        consts_[in.result] = {in.op == Op::ConstI ? Type::I : Type::B, 0,
                              in.op == Op::ConstI ? in.i : int64_t(in.i != 0)};
        continue;
      }
      if (in.result == 0 || in.op == Op::Load || in.op == Op::Local || in.op == Op::LocalGet ||
          in.op == Op::Time || in.op == Op::Size)
        continue;
      identities(in);
      if (repl_[in.result])
        continue;
      std::vector<Const> args;
      for (ValueId a : in.args) {
        const Const *k = c(a);
        if (!k)
          break;
        args.push_back(*k);
      }
      if (args.size() != in.args.size())
        continue;
      if (in.op == Op::Select) {
        repl_[in.result] = in.args[args[0].i ? 1 : 2];
        continue;
      }
      Const out{in.type};
      bool ok = m_.precision == Precision::F64 ? eval<double>(in.op, in.type, args, out)
                                               : eval<float>(in.op, in.type, args, out);
      if (ok)
        makeConst(in, out);
    }
  }

  // Identities that keep exact semantics (no x * 0: NaN and inf stay).
  void identities(Inst &in) {
    const auto &a = in.args;
    ValueId to = 0;
    switch (in.op) {
    case Op::Add:
      if (isF(a[1], 0.0))
        to = a[0];
      else if (isF(a[0], 0.0))
        to = a[1];
      break;
    case Op::Sub:
      if (isF(a[1], 0.0))
        to = a[0];
      break;
    case Op::Mul:
      if (isF(a[1], 1.0))
        to = a[0];
      else if (isF(a[0], 1.0))
        to = a[1];
      break;
    case Op::Div:
      if (isF(a[1], 1.0))
        to = a[0];
      break;
    case Op::Select:
      if (a[1] == a[2])
        to = a[1];
      else if (const Const *k = c(a[0]))
        to = k->i ? a[1] : a[2];
      break;
    case Op::IAdd:
      if (const Const *k = c(a[1]); k && k->i == 0)
        to = a[0];
      else if (const Const *k0 = c(a[0]); k0 && k0->i == 0)
        to = a[1];
      break;
    case Op::IMul:
      if (const Const *k = c(a[1]); k && k->i == 1)
        to = a[0];
      else if (const Const *k0 = c(a[0]); k0 && k0->i == 1)
        to = a[1];
      break;
    case Op::Time:
    case Op::Size:
    case Op::Min:
    case Op::Max:
    case Op::Pow:
    case Op::ISub:
    case Op::IToF:
    case Op::FToI:
    case Op::Local:
    case Op::LocalGet:
    case Op::Loop:
    EVOC_IR_CASE_CONSTS:
    EVOC_IR_CASE_FLOAT_UNARY:
    EVOC_IR_CASE_COMPARE:
    EVOC_IR_CASE_LOGIC:
    EVOC_IR_CASE_MEMORY:
    EVOC_IR_CASE_LOCAL_UPDATE:
      break;
    }
    if (to)
      repl_[in.result] = to;
  }

  const Module &m_;
  Kernel &k_;
  std::vector<ValueId> repl_;
  std::map<ValueId, Const> consts_;
};

} // namespace

void constantFold(Module &m) {
  for (Kernel &k : m.kernels)
    Folder(m, k).run();
}

} // namespace evoc::opt
