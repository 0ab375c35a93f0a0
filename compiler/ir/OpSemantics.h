// The one definition of what each pure op computes, shared by the
// interpreter (the reference every back end matches) and constant folding.
//
// Both evaluate an op through evalPure, so a folded constant is bit for bit
// the value the interpreter would have computed at run time, in the
// module's precision F (f32 modules compute every float op in float).
#pragma once

#include <cmath>
#include <cstdint>

#include "ir/IR.h"

namespace evoc::ir {

/// ftoi's definition: x toward zero, saturated to the int32 range, NaN to 0
/// (LLVM's llvm.fptosi.sat.i32, PTX's cvt.rzi.sat), so that every operand has
/// one result on every back end.
inline int64_t ftoiSat(double x) {
  if (std::isnan(x))
    return 0;
  if (x <= -2147483648.0)
    return -2147483648LL;
  if (x >= 2147483647.0)
    return 2147483647LL;
  return static_cast<int64_t>(x);
}

/// Evaluates a pure computational op (float arithmetic and math, select,
/// comparisons, logic, int ops, itof) in float precision F. Operands are
/// read through `f(k)` (operand k as an F) and `i(k)` (operand k as an int or
/// bool); `floatOperands` says whether a comparison compares floats (else
/// ints or bools); `type` is the result type (Select: F or I). The result is
/// written to `rf` (type F) or `ri` (I, B). Returns false, writing nothing,
/// for every other op (constants, time, size, memory, locals, loops): their
/// value is not a function of their operands alone.
template <class F, class FArg, class IArg>
bool evalPure(Op op, Type type, bool floatOperands, FArg f, IArg i, F &rf, int64_t &ri) {
  auto cmp = [&](auto c) -> int64_t { return floatOperands ? c(f(0), f(1)) : c(i(0), i(1)); };
  switch (op) {
  case Op::Add:
    rf = f(0) + f(1);
    return true;
  case Op::Sub:
    rf = f(0) - f(1);
    return true;
  case Op::Mul:
    rf = f(0) * f(1);
    return true;
  case Op::Div:
    rf = f(0) / f(1);
    return true;
  case Op::Neg:
    rf = -f(0);
    return true;
  case Op::Min: // ties and a NaN second operand pick the first
    rf = f(1) < f(0) ? f(1) : f(0);
    return true;
  case Op::Max:
    rf = f(1) > f(0) ? f(1) : f(0);
    return true;
  case Op::Pow:
    rf = std::pow(f(0), f(1));
    return true;
  case Op::Sin:
    rf = std::sin(f(0));
    return true;
  case Op::Cos:
    rf = std::cos(f(0));
    return true;
  case Op::Tanh:
    rf = std::tanh(f(0));
    return true;
  case Op::Exp:
    rf = std::exp(f(0));
    return true;
  case Op::Log:
    rf = std::log(f(0));
    return true;
  case Op::Sqrt:
    rf = std::sqrt(f(0));
    return true;
  case Op::Abs:
    rf = std::fabs(f(0));
    return true;
  case Op::Floor:
    rf = std::floor(f(0));
    return true;
  case Op::Select:
    if (type == Type::F)
      rf = i(0) ? f(1) : f(2);
    else
      ri = i(0) ? i(1) : i(2);
    return true;
  case Op::Lt:
    ri = cmp([](auto x, auto y) { return x < y; });
    return true;
  case Op::Le:
    ri = cmp([](auto x, auto y) { return x <= y; });
    return true;
  case Op::Gt:
    ri = cmp([](auto x, auto y) { return x > y; });
    return true;
  case Op::Ge:
    ri = cmp([](auto x, auto y) { return x >= y; });
    return true;
  case Op::Eq:
    ri = cmp([](auto x, auto y) { return x == y; });
    return true;
  case Op::Ne:
    ri = cmp([](auto x, auto y) { return x != y; });
    return true;
  case Op::And:
    ri = i(0) && i(1);
    return true;
  case Op::Or:
    ri = i(0) || i(1);
    return true;
  case Op::Not:
    ri = !i(0);
    return true;
  case Op::IAdd:
    ri = i(0) + i(1);
    return true;
  case Op::ISub:
    ri = i(0) - i(1);
    return true;
  case Op::IMul:
    ri = i(0) * i(1);
    return true;
  case Op::IToF:
    rf = static_cast<F>(i(0));
    return true;
  case Op::FToI: // saturating, NaN -> 0: defined for every operand (llvm.fptosi.sat)
    ri = ftoiSat(static_cast<double>(f(0)));
    return true;
  case Op::ConstF:
  case Op::ConstI:
  case Op::ConstB:
  case Op::Time:
  case Op::Size:
  case Op::Load:
  case Op::Store:
  case Op::AccAdd:
  case Op::Local:
  case Op::LocalAdd:
  case Op::LocalMax:
  case Op::LocalMin:
  case Op::LocalGet:
  case Op::Loop:
    return false;
  }
  return false;
}

/// The new value of an accumulator slot `s` after update op `op` (LocalAdd,
/// LocalMax, LocalMin) with `x`: s + x, x > s ? x : s, x < s ? x : s.
template <class F> F updateLocal(Op op, F s, F x) {
  if (op == Op::LocalAdd)
    return s + x;
  if (op == Op::LocalMax)
    return x > s ? x : s;
  return x < s ? x : s;
}

} // namespace evoc::ir
