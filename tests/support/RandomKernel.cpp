// Test support: random smooth kernels for finite-difference and pass tests.
#include "RandomKernel.h"

namespace evoc::test {

using namespace ir;

Module RandomKernel::build() {
  Module m;
  int point = addSet(m, "point"), spring = addSet(m, "spring");
  m.sets[point].fromBody = m.sets[spring].fromBody = true;
  auto buf = [&](const char *n, Role r, int set, Type t = Type::F) {
    return addBuffer(m, n, r, set >= 0 ? std::vector<int>{set} : std::vector<int>{}, t);
  };
  int x = buf("x", Role::State, point), a = buf("a", Role::Body, spring, Type::I);
  int bb = buf("b", Role::Body, spring, Type::I), p = buf("p", Role::Param, spring);
  int t = buf("t", Role::Temp, point), u = buf("u", Role::Temp, spring);
  int out = buf("out", Role::NextState, point), loss = buf("loss", Role::Output, -1);
  Builder b(m, addKernel(m, "step"));
  b_ = &b;
  // Top level: a scalar from a sum over points, visible in every loop.
  ValueId s0 = b.local(0.0);
  ValueId i = b.beginLoop(point);
  pool_ = {b.load(x, i), b.constF(0.7)};
  b.localUpdate(Op::LocalAdd, s0, expr(2));
  b.endLoop();
  ValueId top = b.localGet(s0);
  // Springs: gathers, a temp per spring, scatter-adds.
  ValueId s = b.beginLoop(spring);
  ValueId ia = b.load(a, s), ib = b.load(bb, s);
  pool_ = {b.load(x, ia), b.load(x, ib), b.load(p, s), top};
  ValueId e = expr(3);
  b.store(u, s, e);
  pool_.push_back(e);
  ValueId cnd = b.op(Op::Lt, {b.op(Op::IToF, {s}), b.constF(2.5)});
  ValueId e2 = b.op(Op::Select, {cnd, expr(2), expr(2)});
  b.accAdd(t, ia, e2);
  b.accAdd(t, ib, b.op(Op::Neg, {expr(2)}));
  b.endLoop();
  // Points: a nested reduction over springs reading the temps.
  ValueId tot = b.local(0.0);
  i = b.beginLoop(point);
  ValueId xi = b.load(x, i), ti = b.load(t, i);
  pool_ = {xi, ti, top};
  ValueId outer = expr(2);
  ValueId acc = b.local(0.0);
  ValueId s2 = b.beginLoop(spring);
  pool_ = {xi, outer, b.load(u, s2), b.load(p, s2)};
  b.localUpdate(Op::LocalAdd, acc, expr(2));
  b.endLoop();
  pool_ = {outer, b.localGet(acc), ti};
  ValueId r = expr(3);
  b.store(out, i, r);
  b.localUpdate(Op::LocalAdd, tot, b.mul(r, r));
  b.endLoop();
  b.store(loss, b.constI(0), b.localGet(tot));
  return m;
}

ValueId RandomKernel::pick() { return pool_[rng_() % pool_.size()]; }
// A random smooth expression (no kinks, no poles) over the pool.
ValueId RandomKernel::expr(int depth) {
  Builder &b = *b_;
  if (depth == 0)
    return pick();
  ValueId x = expr(depth - 1), y = expr(depth - 1);
  switch (rng_() % 10) {
  case 0:
    return b.add(x, y);
  case 1:
    return b.sub(x, y);
  case 2:
    return b.mul(x, y);
  case 3:
    return b.div(x, b.add(b.constF(1.5), b.op(Op::Sin, {y})));
  case 4:
    return b.op(Op::Tanh, {x});
  case 5:
    return b.op(Op::Sin, {b.add(x, y)});
  case 6:
    return b.op(Op::Exp, {b.op(Op::Tanh, {x})});
  case 7:
    return b.op(Op::Sqrt, {b.add(b.constF(1), b.mul(x, x))});
  case 8:
    return b.op(Op::Log, {b.add(b.constF(2), b.op(Op::Cos, {x}))});
  default:
    return b.op(Op::Pow, {b.add(b.constF(1.5), b.op(Op::Sin, {x})), b.op(Op::Tanh, {y})});
  }
}

Data RandomKernel::data(const Module &m, std::mt19937 &rng) {
  Data d(m, {{"point", 4}, {"spring", 5}});
  d.I("a") = {0, 1, 2, 3, 0};
  d.I("b") = {1, 2, 3, 0, 2};
  d.randomize(Role::State, -1, 1, rng);
  d.randomize(Role::Param, -1, 1, rng);
  return d;
}

} // namespace evoc::test
