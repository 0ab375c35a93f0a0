// The adjoint rule of every op (one case per differentiable op of EVOC_IR_OPS).
//
// Each rule receives `a`, the adjoint of the instruction's result, and adds a
// contribution to the adjoint of each active operand. Contributions whose
// partial derivative is a forward value (which may be inf/NaN in a branch a
// select did not take) are guarded: select(a == 0, 0, a * partial), so a zero
// adjoint stays exactly zero and nothing leaks from untaken branches.
#include <cmath>
#include <limits>

#include "autodiff/AdjointEmitter.h"
#include "support/Error.h"

namespace evoc::autodiff {

using namespace ir;

ValueId AdjointEmitter::zero() { return b_.constF(0.0); }

ValueId AdjointEmitter::guard(ValueId a, ValueId c) {
  return b_.op(Op::Select, {b_.op(Op::Eq, {a, zero()}), zero(), c});
}

void AdjointEmitter::rule(const Inst &in, ValueId a) {
  auto arg = [&](int k) { return in.args[k]; };
  auto act = [&](int k) { return active_[in.args[k]]; };
  auto x = [&](int k) { return mapped(in.args[k]); };
  ValueId r = mapped(in.result);
  auto mulG = [&](ValueId p) { return guard(a, b_.mul(a, p)); };
  // A finite nonzero constant partial needs no guard.
  auto finiteConst = [&](int k) {
    const Inst *d = constDefs_.count(in.args[k]) ? constDefs_.at(in.args[k]) : nullptr;
    return d && std::isfinite(d->f) && d->f != 0;
  };
  switch (in.op) {
  case Op::Add:
    addAdj(arg(0), a);
    addAdj(arg(1), a);
    break;
  case Op::Sub:
    addAdj(arg(0), a);
    if (act(1))
      addAdj(arg(1), b_.op(Op::Neg, {a}));
    break;
  case Op::Mul:
    if (act(0))
      addAdj(arg(0), finiteConst(1) ? b_.mul(a, x(1)) : mulG(x(1)));
    if (act(1))
      addAdj(arg(1), finiteConst(0) ? b_.mul(a, x(0)) : mulG(x(0)));
    break;
  case Op::Div: // r = x / y: dx = a / y, dy = -a * r / y
    if (act(0))
      addAdj(arg(0), finiteConst(1) ? b_.div(a, x(1)) : guard(a, b_.div(a, x(1))));
    if (act(1))
      addAdj(arg(1), guard(a, b_.op(Op::Neg, {b_.div(b_.mul(a, r), x(1))})));
    break;
  case Op::Neg:
    addAdj(arg(0), b_.op(Op::Neg, {a}));
    break;
  case Op::Min:
  case Op::Max: { // r = y < x ? y : x (min); ties go to the first operand
    ValueId tookY = b_.op(in.op == Op::Min ? Op::Lt : Op::Gt, {x(1), x(0)});
    if (act(0))
      addAdj(arg(0), b_.op(Op::Select, {tookY, zero(), a}));
    if (act(1))
      addAdj(arg(1), b_.op(Op::Select, {tookY, a, zero()}));
    break;
  }
  case Op::Pow: // r = x^y: dx = a * y * x^(y-1), dy = a * log(x) * r
    if (act(0)) {
      ValueId ym1 = b_.sub(x(1), b_.constF(1.0));
      addAdj(arg(0), mulG(b_.mul(x(1), b_.op(Op::Pow, {x(0), ym1}))));
    }
    if (act(1))
      addAdj(arg(1), mulG(b_.mul(b_.op(Op::Log, {x(0)}), r)));
    break;
  case Op::Sin:
    addAdj(arg(0), mulG(b_.op(Op::Cos, {x(0)})));
    break;
  case Op::Cos:
    addAdj(arg(0), mulG(b_.op(Op::Neg, {b_.op(Op::Sin, {x(0)})})));
    break;
  case Op::Tanh: // 1 - r^2
    addAdj(arg(0), mulG(b_.sub(b_.constF(1.0), b_.mul(r, r))));
    break;
  case Op::Exp:
    addAdj(arg(0), mulG(r));
    break;
  case Op::Log:
    addAdj(arg(0), guard(a, b_.div(a, x(0))));
    break;
  case Op::Sqrt: // a / (2 r); sqrt'(0) = inf unless a == 0
    addAdj(arg(0), guard(a, b_.div(a, b_.mul(b_.constF(2.0), r))));
    break;
  case Op::Abs: { // sign(x); abs'(0) = 0
    ValueId pos = b_.op(Op::Gt, {x(0), zero()});
    ValueId neg = b_.op(Op::Lt, {x(0), zero()});
    ValueId na = b_.op(Op::Neg, {a});
    addAdj(arg(0), b_.op(Op::Select, {pos, a, b_.op(Op::Select, {neg, na, zero()})}));
    break;
  }
  case Op::Floor: // derivative 0 almost everywhere
    break;
  case Op::Select: // the adjoint goes to the taken branch only
    if (act(1))
      addAdj(arg(1), b_.op(Op::Select, {x(0), a, zero()}));
    if (act(2))
      addAdj(arg(2), b_.op(Op::Select, {x(0), zero(), a}));
    break;
  case Op::IToF:
  case Op::FToI: // an index: no derivative
  case Op::ConstF:
    break;
  case Op::ConstI:
  case Op::ConstB:
  case Op::Time:
  case Op::Size:
  case Op::Local:
  case Op::LocalGet:
  case Op::Loop:
  EVOC_IR_CASE_COMPARE:
  EVOC_IR_CASE_LOGIC:
  EVOC_IR_CASE_INT:
  EVOC_IR_CASE_MEMORY:
  EVOC_IR_CASE_LOCAL_UPDATE:
    internalError(__FILE__, __LINE__,
                  std::string("autodiff: no adjoint rule for active op ") + opName(in.op));
  }
}

// Load: a gather's adjoint is a scatter-add; Store/AccAdd: a gather of the
// adjoint buffer (scatter-add's adjoint).
void AdjointEmitter::memoryRule(const Inst &in) {
  int ab = adjBuf_[in.buffer];
  if (ab < 0)
    return;
  if (in.op == Op::Load) {
    if (in.type == Type::F && active_[in.result])
      if (ValueId a = takeAdj(in.result))
        b_.accAdd(ab, mapped(in.args[0]), a);
    return;
  }
  if (active_[in.args[1]])
    addAdj(in.args[1], b_.load(ab, mapped(in.args[0])));
}

// Reductions: local.get passes its adjoint to the slot; local.add broadcasts
// the slot's final adjoint to every update; local.max/min route it to the
// first update that produced the extremum.
void AdjointEmitter::localRule(const Inst &in) {
  switch (in.op) {
  case Op::LocalGet:
    if (active_[in.result])
      if (ValueId a = takeAdj(in.result))
        addAdj(in.args[0], a);
    break;
  case Op::LocalAdd:
  case Op::LocalMax:
  case Op::LocalMin: {
    if (!active_[in.args[1]])
      break;
    finishSlot(in.args[0]);
    const SlotInfo &s = slots_.at(in.args[0]);
    if (!s.finalAdj)
      break;
    if (in.op == Op::LocalAdd) {
      addAdj(in.args[1], s.finalAdj);
      break;
    }
    ValueId take = b_.op(Op::Eq, {ordinal(in.args[0]), s.first});
    addAdj(in.args[1], b_.op(Op::Select, {take, s.finalAdj, zero()}));
    break;
  }
  case Op::Time:
  case Op::Size:
  case Op::Local:
  case Op::Loop:
  EVOC_IR_CASE_CONSTS:
  EVOC_IR_CASE_MEMORY:
  EVOC_IR_CASE_COMPUTE:
    break;
  }
}

} // namespace evoc::autodiff
