// Hand-built test modules: a 2D spring ladder with a linear controller.
#include "ChainFixture.h"

#include <cmath>

#include "autodiff/Differentiate.h"
#include "ir/Builder.h"

namespace evoc::test {

using namespace ir;

namespace {

int buf(Module &m, const std::string &name, Type elem, Role role, std::vector<int> sets, int comps,
        const std::string &field = "", TimeRef time = TimeRef::Current) {
  Buffer b;
  b.name = name;
  b.elem = elem;
  b.role = role;
  b.sets = std::move(sets);
  b.comps = comps;
  b.field = field.empty() ? name : field;
  b.time = time;
  b.differentiable = elem == Type::F && role != Role::Body;
  return addBuffer(m, b);
}

} // namespace

Module chainModule(const ChainOptions &o) {
  Module m;
  m.name = "chain";
  m.precision = o.precision;
  int point = addSet(m, "point"), spring = addSet(m, "spring"), input = addSet(m, "input");
  m.sets[point].fromBody = m.sets[spring].fromBody = true;
  m.sets[input].base = 2;
  m.sets[input].terms = {{point, 2}};

  int x = buf(m, "point.x", Type::F, Role::State, {point}, 2);
  int v = buf(m, "point.v", Type::F, Role::State, {point}, 2);
  int xn = buf(m, "point.x'", Type::F, Role::NextState, {point}, 2, "point.x");
  int vn = buf(m, "point.v'", Type::F, Role::NextState, {point}, 2, "point.v");
  int x0 = buf(m, "point.x@0", Type::F, Role::State, {point}, 2, "point.x", TimeRef::First);
  int xl = buf(m, "point.x@T", Type::F, Role::State, {point}, 2, "point.x", TimeRef::Last);
  int sa = buf(m, "spring.a", Type::I, Role::Body, {spring}, 1);
  int sb = buf(m, "spring.b", Type::I, Role::Body, {spring}, 1);
  int rest = buf(m, "spring.rest", Type::F, Role::Body, {spring}, 1);
  int stiff = buf(m, "spring.stiffness", Type::F, Role::Body, {spring}, 1);
  int actu = buf(m, "spring.actuation", Type::F, Role::Body, {spring}, 1);
  int w = buf(m, "ctrl.w", Type::F, Role::Param, {spring, input}, 1, "w");
  m.buffers[w].init = "xavier_normal";
  m.buffers[w].initGain = 1.5;
  int bias = buf(m, "ctrl.b", Type::F, Role::Param, {spring}, 1, "b");
  int in = buf(m, "ctrl.in", Type::F, Role::Temp, {input}, 1);
  int vinc = buf(m, "point.vinc", Type::F, Role::Temp, {point}, 2);
  int loss = buf(m, "loss", Type::F, Role::Output, {}, 1);
  int xf = -1;
  if (o.fixedTime >= 0) {
    xf = buf(m, "point.x@fixed", Type::F, Role::State, {point}, 2, "point.x", TimeRef::Fixed);
    m.buffers[xf].fixedTime = o.fixedTime;
  }
  int carry = -1;
  if (o.carryField)
    carry = buf(m, "point.mass", Type::F, Role::State, {point}, 1);

  // step: x[t], v[t] -> x[t+1], v[t+1].
  {
    Kernel &k = addKernel(m, "step");
    k.kind = KernelKind::Step;
    Builder b(m, k);
    auto c = [&](double f) { return b.constF(f); };
    auto ci = [&](int64_t i) { return b.constI(i); };
    auto idx = [&](ValueId i, int comp) {
      return b.op(Op::IAdd, {b.op(Op::IMul, {i, ci(2)}), ci(comp)});
    };
    ValueId tf = b.op(Op::IToF, {b.time()});
    b.store(in, ci(0), b.op(Op::Sin, {b.mul(tf, c(0.3))}));
    b.store(in, ci(1), b.op(Op::Cos, {b.mul(tf, c(0.3))}));
    ValueId lx = b.local(0), ly = b.local(0);
    ValueId i = b.beginLoop(point);
    b.localUpdate(Op::LocalAdd, lx, b.load(x, idx(i, 0)));
    b.localUpdate(Op::LocalAdd, ly, b.load(x, idx(i, 1)));
    b.endLoop();
    ValueId np = b.op(Op::IToF, {b.size(point)});
    ValueId cx = b.div(b.localGet(lx), np), cy = b.div(b.localGet(ly), np);
    i = b.beginLoop(point);
    b.store(in, b.op(Op::IAdd, {idx(i, 0), ci(2)}), b.mul(c(2.0), b.sub(b.load(x, idx(i, 0)), cx)));
    b.store(in, b.op(Op::IAdd, {idx(i, 1), ci(2)}), b.mul(c(2.0), b.sub(b.load(x, idx(i, 1)), cy)));
    b.endLoop();
    ValueId s = b.beginLoop(spring);
    ValueId acc = b.local(0);
    ValueId nin = b.size(input);
    ValueId j = b.beginLoop(input);
    ValueId wi = b.load(w, b.op(Op::IAdd, {b.op(Op::IMul, {s, nin}), j}));
    b.localUpdate(Op::LocalAdd, acc, b.mul(wi, b.load(in, j)));
    b.endLoop();
    ValueId act = b.op(Op::Tanh, {b.add(b.localGet(acc), b.load(bias, s))});
    ValueId a = b.load(sa, s), bb = b.load(sb, s);
    ValueId dx = b.sub(b.load(x, idx(a, 0)), b.load(x, idx(bb, 0)));
    ValueId dy = b.sub(b.load(x, idx(a, 1)), b.load(x, idx(bb, 1)));
    ValueId L = b.add(b.op(Op::Sqrt, {b.add(b.mul(dx, dx), b.mul(dy, dy))}), c(1e-4));
    ValueId target = b.mul(b.load(rest, s), b.add(c(1.0), b.mul(b.load(actu, s), act)));
    ValueId f = b.div(b.mul(b.mul(c(o.dt), b.load(stiff, s)), b.sub(L, target)), L);
    b.accAdd(vinc, idx(a, 0), b.op(Op::Neg, {b.mul(f, dx)}));
    b.accAdd(vinc, idx(a, 1), b.op(Op::Neg, {b.mul(f, dy)}));
    b.accAdd(vinc, idx(bb, 0), b.mul(f, dx));
    b.accAdd(vinc, idx(bb, 1), b.mul(f, dy));
    b.endLoop();
    double damp = std::exp(-o.dt * 2.0);
    i = b.beginLoop(point);
    for (int comp = 0; comp < 2; ++comp) {
      ValueId id = idx(i, comp);
      ValueId vv = b.add(b.mul(c(damp), b.load(v, id)), b.load(vinc, id));
      if (comp == 1 && o.gravity != 0)
        vv = b.add(vv, c(o.dt * o.gravity));
      if (carry >= 0 && comp == 0) // reads the carried field: v += 1e-3 * dt * mass
        vv = b.add(vv, b.mul(c(1e-3 * o.dt), b.load(carry, i)));
      b.store(vn, id, vv);
      b.store(xn, id, b.add(b.load(x, id), b.mul(c(o.dt), vv)));
    }
    b.endLoop();
  }
  // loss = -mean(x[T-1].x - x[0].x).
  {
    Kernel &k = addKernel(m, "loss");
    k.kind = KernelKind::Loss;
    Builder b(m, k);
    ValueId l = b.local(0);
    ValueId i = b.beginLoop(point);
    ValueId id = b.op(Op::IMul, {i, b.constI(2)});
    // Weighted by (1 + i): the plain mean is fixed by momentum conservation.
    ValueId wgt = b.add(b.constF(1.0), b.op(Op::IToF, {i}));
    b.localUpdate(Op::LocalAdd, l, b.mul(wgt, b.sub(b.load(xl, id), b.load(x0, id))));
    b.endLoop();
    ValueId np = b.op(Op::IToF, {b.size(point)});
    b.accAdd(loss, b.constI(0), b.op(Op::Neg, {b.div(b.localGet(l), np)}));
    if (xf >= 0) {
      ValueId lf = b.local(0);
      ValueId j = b.beginLoop(point);
      ValueId jd = b.op(Op::IAdd, {b.op(Op::IMul, {j, b.constI(2)}), b.constI(1)});
      b.localUpdate(Op::LocalAdd, lf, b.load(xf, jd));
      b.endLoop();
      b.accAdd(loss, b.constI(0), b.mul(b.constF(0.5), b.div(b.localGet(lf), np)));
    }
  }
  if (o.lossStep) {
    Kernel &k = addKernel(m, "loss.step");
    k.kind = KernelKind::LossStep;
    k.windowBegin = o.lossStepBegin;
    k.windowEnd = -1;
    Builder b(m, k);
    ValueId l = b.local(0);
    ValueId i = b.beginLoop(point);
    for (int comp = 0; comp < 2; ++comp) {
      ValueId id = b.op(Op::IAdd, {b.op(Op::IMul, {i, b.constI(2)}), b.constI(comp)});
      ValueId vv = b.load(v, id);
      b.localUpdate(Op::LocalAdd, l, b.mul(vv, vv));
    }
    b.endLoop();
    b.accAdd(loss, b.constI(0), b.mul(b.constF(1e-3), b.localGet(l)));
  }
  return m;
}

Module chainModuleWithAdjoints(const ChainOptions &o) {
  Module m = chainModule(o);
  autodiff::differentiate(m);
  return m;
}

runtime::Robot ladderRobot(int cols, double stiffness, double yOffset) {
  runtime::Robot r;
  r.dim = 2;
  const double h = 0.1;
  for (int c = 0; c < cols; ++c)
    for (int k = 0; k < 2; ++k) {
      r.points.push_back(c * h);
      r.points.push_back(k * h + yOffset);
    }
  auto add = [&](int a, int b) {
    double dx = r.points[2 * a] - r.points[2 * b], dy = r.points[2 * a + 1] - r.points[2 * b + 1];
    double act = (a + b) % 3 == 0 ? 0.0 : 0.2;
    r.springs.push_back({a, b, 0.9 * std::sqrt(dx * dx + dy * dy), stiffness, act});
  };
  for (int c = 0; c < cols; ++c) {
    add(2 * c, 2 * c + 1);
    if (c + 1 < cols) {
      add(2 * c, 2 * c + 2);
      add(2 * c + 1, 2 * c + 3);
      add(2 * c, 2 * c + 3);
    }
  }
  return r;
}

std::unique_ptr<codegen::Executable> interp(const Module &m) {
  return codegen::compile(m, codegen::BackendKind::Interp);
}

} // namespace evoc::test
