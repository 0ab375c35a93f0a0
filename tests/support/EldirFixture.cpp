// The ELDiR step, controller and loss built with the IR Builder (test fixture).
#include "EldirFixture.h"

#include <cmath>

#include "ir/Builder.h"

namespace evoc::test {

using namespace ir;

Buffer buf(const std::string &name, Role r, std::vector<int> sets, int comps, Type elem) {
  Buffer b;
  b.name = name;
  b.role = r;
  b.sets = std::move(sets);
  b.comps = comps;
  b.elem = elem;
  return b;
}

namespace {

// Small helpers over a Builder for readable physics.
struct E {
  Builder &b;
  ValueId c(double v) { return b.constF(v); }
  ValueId ci(int64_t v) { return b.constI(v); }
  ValueId add(ValueId x, ValueId y) { return b.add(x, y); }
  ValueId sub(ValueId x, ValueId y) { return b.sub(x, y); }
  ValueId mul(ValueId x, ValueId y) { return b.mul(x, y); }
  ValueId div(ValueId x, ValueId y) { return b.div(x, y); }
  ValueId f(Op op, ValueId x) { return b.op(op, {x}); }
  ValueId f(Op op, ValueId x, ValueId y) { return b.op(op, {x, y}); }
  ValueId sel(ValueId cnd, ValueId x, ValueId y) { return b.op(Op::Select, {cnd, x, y}); }
  ValueId iadd(ValueId x, ValueId y) { return b.op(Op::IAdd, {x, y}); }
  ValueId imul(ValueId x, ValueId y) { return b.op(Op::IMul, {x, y}); }
  ValueId comp(ValueId i, int c) { return iadd(imul(i, ci(2)), ci(c)); }
};

void physics(Module &m, Builder &b, const EldirOptions &o) {
  E e{b};
  int point = m.findSet("point"), spring = m.findSet("spring");
  int x = m.findBuffer("point.x"), v = m.findBuffer("point.v");
  int xn = m.findBuffer("point.x.next"), vn = m.findBuffer("point.v.next");
  int A = m.findBuffer("spring.a"), B = m.findBuffer("spring.b");
  int rest = m.findBuffer("spring.rest"), stiff = m.findBuffer("spring.stiffness");
  int actu = m.findBuffer("spring.actuation"), act = m.findBuffer("spring.act");
  int dv = m.findBuffer("point.dv");
  ValueId dt = e.c(o.dt);
  // Spring impulses: gathers through a/b, scatter-adds into dv.
  ValueId s = b.beginLoop(spring);
  ValueId ia = b.load(A, s), ib = b.load(B, s);
  ValueId dx = e.sub(b.load(x, e.comp(ia, 0)), b.load(x, e.comp(ib, 0)));
  ValueId dy = e.sub(b.load(x, e.comp(ia, 1)), b.load(x, e.comp(ib, 1)));
  ValueId L = e.add(e.f(Op::Sqrt, e.add(e.mul(dx, dx), e.mul(dy, dy))), e.c(1e-4));
  ValueId target = e.mul(b.load(rest, s), e.add(e.c(1), e.mul(b.load(actu, s), b.load(act, s))));
  ValueId k = e.div(e.mul(e.mul(dt, e.sub(L, target)), b.load(stiff, s)), L);
  ValueId jx = e.mul(k, dx), jy = e.mul(k, dy);
  b.accAdd(dv, e.comp(ia, 0), e.f(Op::Neg, jx));
  b.accAdd(dv, e.comp(ia, 1), e.f(Op::Neg, jy));
  b.accAdd(dv, e.comp(ib, 0), jx);
  b.accAdd(dv, e.comp(ib, 1), jy);
  b.endLoop();
  // Integration and ground contact.
  ValueId p = b.beginLoop(point);
  ValueId i0 = e.comp(p, 0), i1 = e.comp(p, 1);
  ValueId px = b.load(x, i0), py = b.load(x, i1);
  ValueId damp = e.f(Op::Exp, e.mul(e.f(Op::Neg, dt), e.c(o.damping)));
  ValueId v1x = e.add(e.mul(damp, b.load(v, i0)), b.load(dv, i0));
  ValueId v1y = e.add(e.add(e.mul(damp, b.load(v, i1)), e.mul(dt, e.c(o.gravity))), b.load(dv, i1));
  ValueId g = e.c(o.ground);
  ValueId outx, outy, outvx, outvy;
  if (o.contact == Contact::NoSlip) {
    ValueId hit =
        e.f(Op::And, e.f(Op::Lt, e.add(py, e.mul(dt, v1y)), g), e.f(Op::Lt, v1y, e.c(-1e-4)));
    ValueId toi = e.div(e.f(Op::Neg, e.sub(py, g)), v1y);
    outx = e.sel(hit, e.add(px, e.mul(toi, v1x)), e.add(px, e.mul(dt, v1x)));
    outy = e.sel(hit, e.add(py, e.mul(toi, v1y)), e.add(py, e.mul(dt, v1y)));
    outvx = e.sel(hit, e.c(0), v1x);
    outvy = e.sel(hit, e.c(0), v1y);
  } else {
    ValueId mu = e.c(o.friction);
    ValueId x1x = e.add(px, e.mul(dt, v1x)), x1y = e.add(py, e.mul(dt, v1y));
    ValueId raw = e.div(e.f(Op::Abs, e.sub(py, g)), e.add(e.f(Op::Abs, v1y), e.c(1e-10)));
    ValueId toi = e.f(Op::Min, e.f(Op::Max, raw, e.c(0)), dt); // clamp(raw, 0, dt)
    ValueId qx = e.add(px, e.mul(toi, v1x)), qy = e.add(py, e.mul(toi, v1y));
    ValueId vnrm = v1y;                        // dot(v1, n), n = (0, 1)
    ValueId vtx = v1x, vty = e.sub(v1y, vnrm); // v1 - vn * n
    ValueId speed = e.f(Op::Sqrt, e.add(e.mul(vtx, vtx), e.mul(vty, vty)));
    ValueId pos = e.f(Op::Gt, speed, e.c(0));
    ValueId dirx = e.sel(pos, e.div(vtx, speed), e.c(0));
    ValueId diry = e.sel(pos, e.div(vty, speed), e.c(0));
    ValueId red = e.mul(mu, e.f(Op::Min, e.f(Op::Abs, vnrm), speed));
    ValueId v2x = e.sub(vtx, e.mul(dirx, red)), v2y = e.sub(vty, e.mul(diry, red));
    ValueId early = e.f(Op::Lt, toi, dt);
    ValueId rem = e.sub(dt, toi);
    ValueId q2x = e.sel(early, e.add(qx, e.mul(rem, v2x)), qx);
    ValueId q2y = e.sel(early, e.add(qy, e.mul(rem, v2y)), qy);
    ValueId hit = e.f(Op::Lt, x1y, g);
    outx = e.sel(hit, q2x, x1x);
    outy = e.sel(hit, e.f(Op::Max, q2y, g), x1y);
    outvx = e.sel(hit, v2x, v1x);
    outvy = e.sel(hit, v2y, v1y);
  }
  b.store(xn, i0, outx);
  b.store(xn, i1, outy);
  b.store(vn, i0, outvx);
  b.store(vn, i1, outvy);
  b.endLoop();
}

void controller(Module &m, Builder &b, const EldirOptions &o) {
  E e{b};
  int point = m.findSet("point"), spring = m.findSet("spring");
  int wave = m.findSet("wave"), input = m.findSet("input"), unit = m.findSet("unit");
  int x = m.findBuffer("point.x"), v = m.findBuffer("point.v");
  int in = m.findBuffer("ctrl.in"), h = m.findBuffer("ctrl.h");
  int w1 = m.findBuffer("mlp.w1"), b1 = m.findBuffer("mlp.b1");
  int w2 = m.findBuffer("mlp.w2"), b2 = m.findBuffer("mlp.b2");
  int act = m.findBuffer("spring.act");
  // Centre of mass.
  ValueId sx = b.local(0.0), sy = b.local(0.0);
  ValueId p = b.beginLoop(point);
  b.localUpdate(Op::LocalAdd, sx, b.load(x, e.comp(p, 0)));
  b.localUpdate(Op::LocalAdd, sy, b.load(x, e.comp(p, 1)));
  b.endLoop();
  ValueId n = b.op(Op::IToF, {b.size(point)});
  ValueId cx = e.div(b.localGet(sx), n), cy = e.div(b.localGet(sy), n);
  // Inputs: 10 sine waves, 4 per point, 2 constants.
  ValueId tt = e.mul(b.op(Op::IToF, {b.time()}), e.c(o.dt));
  ValueId j = b.beginLoop(wave);
  ValueId phase = e.mul(e.c(2 * M_PI / 10), b.op(Op::IToF, {j}));
  b.store(in, j, e.f(Op::Sin, e.add(e.mul(e.c(10), tt), phase)));
  b.endLoop();
  p = b.beginLoop(point);
  ValueId base = e.iadd(e.ci(10), e.imul(p, e.ci(4)));
  b.store(in, base, e.mul(e.c(0.05), e.sub(b.load(x, e.comp(p, 0)), cx)));
  b.store(in, e.iadd(base, e.ci(1)), e.mul(e.c(0.05), e.sub(b.load(x, e.comp(p, 1)), cy)));
  b.store(in, e.iadd(base, e.ci(2)), e.mul(e.c(0.05), b.load(v, e.comp(p, 0))));
  b.store(in, e.iadd(base, e.ci(3)), e.mul(e.c(0.05), b.load(v, e.comp(p, 1))));
  b.endLoop();
  ValueId last = e.iadd(e.ci(10), e.imul(b.size(point), e.ci(4)));
  b.store(in, last, e.c(1));
  b.store(in, e.iadd(last, e.ci(1)), e.c(1));
  // hidden = tanh(W1 in + b1)
  ValueId u = b.beginLoop(unit);
  ValueId acc = b.local(0.0);
  ValueId k = b.beginLoop(input);
  ValueId wi = b.load(w1, e.iadd(e.imul(u, b.size(input)), k));
  b.localUpdate(Op::LocalAdd, acc, e.mul(wi, b.load(in, k)));
  b.endLoop();
  b.store(h, u, e.f(Op::Tanh, e.add(b.localGet(acc), b.load(b1, u))));
  b.endLoop();
  // act = tanh(W2 hidden + b2)
  ValueId s = b.beginLoop(spring);
  ValueId acc2 = b.local(0.0);
  u = b.beginLoop(unit);
  ValueId wu = b.load(w2, e.iadd(e.imul(s, b.size(unit)), u));
  b.localUpdate(Op::LocalAdd, acc2, e.mul(wu, b.load(h, u)));
  b.endLoop();
  b.store(act, s, e.f(Op::Tanh, e.add(b.localGet(acc2), b.load(b2, s))));
  b.endLoop();
}

void loss(Module &m, Builder &b) {
  E e{b};
  int point = m.findSet("point");
  int first = m.findBuffer("point.x.first"), last = m.findBuffer("point.x.last");
  ValueId acc = b.local(0.0);
  ValueId p = b.beginLoop(point);
  ValueId i = e.comp(p, 0);
  b.localUpdate(Op::LocalAdd, acc, e.sub(b.load(last, i), b.load(first, i)));
  b.endLoop();
  ValueId n = b.op(Op::IToF, {b.size(point)});
  b.store(m.findBuffer("loss"), e.ci(0), e.f(Op::Neg, e.div(b.localGet(acc), n)));
}

} // namespace

Module eldirModule(const EldirOptions &o) {
  Module m;
  m.name = "eldir";
  int point = addSet(m, "point"), spring = addSet(m, "spring");
  m.sets[point].fromBody = m.sets[spring].fromBody = true;
  int wave = addSet(m, "wave");
  m.sets[wave].base = 10;
  int input = addSet(m, "input");
  m.sets[input].base = 12;
  m.sets[input].terms = {{point, 4}};
  int unit = addSet(m, "unit");
  m.sets[unit].base = o.hidden;
  addBuffer(m, buf("point.x", Role::State, {point}, 2));
  addBuffer(m, buf("point.v", Role::State, {point}, 2));
  addBuffer(m, buf("point.x.next", Role::NextState, {point}, 2));
  addBuffer(m, buf("point.v.next", Role::NextState, {point}, 2));
  addBuffer(m, buf("spring.a", Role::Body, {spring}, 1, Type::I));
  addBuffer(m, buf("spring.b", Role::Body, {spring}, 1, Type::I));
  for (const char *n : {"spring.rest", "spring.stiffness", "spring.actuation"}) {
    int bi = addBuffer(m, buf(n, Role::Body, {spring}));
    m.buffers[bi].differentiable = o.bodyDifferentiable && std::string(n) != "spring.actuation";
  }
  Buffer w1 = buf("mlp.w1", Role::Param, {unit, input});
  w1.init = "xavier_normal";
  w1.initGain = 2;
  addBuffer(m, w1);
  addBuffer(m, buf("mlp.b1", Role::Param, {unit}));
  Buffer w2 = buf("mlp.w2", Role::Param, {spring, unit});
  w2.init = "xavier_normal";
  w2.initGain = 3;
  addBuffer(m, w2);
  addBuffer(m, buf("mlp.b2", Role::Param, {spring}));
  addBuffer(m, buf("ctrl.in", Role::Temp, {input}));
  addBuffer(m, buf("ctrl.h", Role::Temp, {unit}));
  addBuffer(m, buf("spring.act", Role::Temp, {spring}));
  addBuffer(m, buf("point.dv", Role::Temp, {point}, 2));
  Buffer first = buf("point.x.first", Role::State, {point}, 2);
  first.time = TimeRef::First;
  first.field = "point.x";
  addBuffer(m, first);
  Buffer last = buf("point.x.last", Role::State, {point}, 2);
  last.time = TimeRef::Last;
  last.field = "point.x";
  addBuffer(m, last);
  addBuffer(m, buf("loss", Role::Output, {}));
  m.kernels.resize(2);
  m.kernels[0].name = "step";
  m.kernels[0].kind = KernelKind::Step;
  m.kernels[1].name = "loss";
  m.kernels[1].kind = KernelKind::Loss;
  {
    Builder b(m, m.kernels[0]);
    controller(m, b, o);
    physics(m, b, o);
  }
  {
    Builder b(m, m.kernels[1]);
    loss(m, b);
  }
  return m;
}

Data eldirRobot(const Module &m, int n, double y0, std::mt19937 &rng) {
  int ns = 2 * n - 3;
  Data d(m, {{"point", n}, {"spring", ns}});
  auto &x = d.F("point.x");
  for (int i = 0; i < n; ++i) {
    x[2 * i] = 0.025 * i + 0.025;
    x[2 * i + 1] = y0 + (i % 2) * 0.05 * std::sqrt(3.0) / 2;
  }
  auto &A = d.I("spring.a"), &B = d.I("spring.b");
  int s = 0;
  for (int i = 0; i + 1 < n; ++i) {
    A[s] = i;
    B[s++] = i + 1;
  }
  for (int i = 0; i + 2 < n; ++i) {
    A[s] = i;
    B[s++] = i + 2;
  }
  std::uniform_real_distribution<double> u(-1, 1);
  for (int k = 0; k < ns; ++k) {
    double dx = x[2 * A[k]] - x[2 * B[k]], dy = x[2 * A[k] + 1] - x[2 * B[k] + 1];
    d.F("spring.rest")[k] = std::sqrt(dx * dx + dy * dy) * (1 + 0.05 * u(rng));
    d.F("spring.stiffness")[k] = 3e4;
    d.F("spring.actuation")[k] = k % 3 ? 0.1 : 0.0;
  }
  for (const char *p : {"mlp.w1", "mlp.w2"}) {
    auto &w = d.F(p);
    double scale = std::sqrt(2.0 / 40);
    for (double &v : w)
      v = 2 * scale * u(rng);
  }
  for (double &v : d.F("mlp.b1"))
    v = 0.1 * u(rng);
  for (double &v : d.F("mlp.b2"))
    v = 0.1 * u(rng);
  return d;
}

void setIrgenFields(ir::Module &m) {
  for (auto &b : m.buffers) {
    if (b.name == "point.x.next" || b.name == "point.v.next")
      b.field = b.name.substr(0, b.name.size() - 5);
    else if (b.role == ir::Role::Param)
      b.field = b.name.substr(4); // "mlp.w1" -> "w1"
  }
}

} // namespace evoc::test
