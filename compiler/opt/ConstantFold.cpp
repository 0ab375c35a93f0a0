// Constant folding and simple algebraic identities.
#include <cmath>
#include <map>

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

// Evaluates a float op exactly as the interpreter does, in precision F.
template <class F> bool evalF(Op op, const std::vector<Const> &a, double &out) {
  auto f = [&](int k) { return static_cast<F>(a[k].f); };
  F r;
  switch (op) {
  case Op::Add:
    r = f(0) + f(1);
    break;
  case Op::Sub:
    r = f(0) - f(1);
    break;
  case Op::Mul:
    r = f(0) * f(1);
    break;
  case Op::Div:
    r = f(0) / f(1);
    break;
  case Op::Neg:
    r = -f(0);
    break;
  case Op::Min:
    r = f(1) < f(0) ? f(1) : f(0);
    break;
  case Op::Max:
    r = f(1) > f(0) ? f(1) : f(0);
    break;
  case Op::Pow:
    r = std::pow(f(0), f(1));
    break;
  case Op::Sin:
    r = std::sin(f(0));
    break;
  case Op::Cos:
    r = std::cos(f(0));
    break;
  case Op::Tanh:
    r = std::tanh(f(0));
    break;
  case Op::Exp:
    r = std::exp(f(0));
    break;
  case Op::Log:
    r = std::log(f(0));
    break;
  case Op::Sqrt:
    r = std::sqrt(f(0));
    break;
  case Op::Abs:
    r = std::fabs(f(0));
    break;
  case Op::Floor:
    r = std::floor(f(0));
    break;
  case Op::IToF:
    r = static_cast<F>(a[0].i);
    break;
  default:
    return false;
  }
  out = static_cast<double>(r);
  return true;
}

bool evalI(Op op, const std::vector<Const> &a, int64_t &out) {
  auto i = [&](int k) { return a[k].i; };
  auto cmp = [&](auto c) { return a[0].type == Type::F ? c(a[0].f, a[1].f) : c(a[0].i, a[1].i); };
  switch (op) {
  case Op::IAdd:
    out = i(0) + i(1);
    return true;
  case Op::ISub:
    out = i(0) - i(1);
    return true;
  case Op::IMul:
    out = i(0) * i(1);
    return true;
  case Op::Lt:
    out = cmp([](auto x, auto y) { return x < y; });
    return true;
  case Op::Le:
    out = cmp([](auto x, auto y) { return x <= y; });
    return true;
  case Op::Gt:
    out = cmp([](auto x, auto y) { return x > y; });
    return true;
  case Op::Ge:
    out = cmp([](auto x, auto y) { return x >= y; });
    return true;
  case Op::Eq:
    out = cmp([](auto x, auto y) { return x == y; });
    return true;
  case Op::Ne:
    out = cmp([](auto x, auto y) { return x != y; });
    return true;
  case Op::And:
    out = i(0) && i(1);
    return true;
  case Op::Or:
    out = i(0) || i(1);
    return true;
  case Op::Not:
    out = !i(0);
    return true;
  default:
    return false;
  }
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
      switch (in.op) {
      case Op::ConstF: // as the interpreter reads it in this precision
        consts_[in.result] = {
            Type::F,
            m_.precision == Precision::F32 ? static_cast<double>(static_cast<float>(in.f)) : in.f,
            0};
        continue;
      case Op::ConstI:
        consts_[in.result] = {Type::I, 0, in.i};
        continue;
      case Op::ConstB:
        consts_[in.result] = {Type::B, 0, in.i != 0};
        continue;
      default:
        break;
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
      bool ok = in.type == Type::F
                    ? (m_.precision == Precision::F64 ? evalF<double>(in.op, args, out.f)
                                                      : evalF<float>(in.op, args, out.f))
                    : evalI(in.op, args, out.i);
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
    default:
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
