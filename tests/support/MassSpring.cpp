// The one hand-built ELDiR-style module (mass-spring step + MLP controller +
// loss, optionally a kernel of adjoint shapes), random lattice bodies and a
// rollout on any back end: shared by the LLVM and CUDA tests and the benchmarks.
#include "MassSpring.h"

#include <algorithm>
#include <cmath>

#include "ir/Builder.h"

namespace evoc::test {

using ir::Builder;
using ir::Op;
using ir::ValueId;

namespace {

constexpr double kDt = 0.004, kGround = 0.1, kGravity = -4.8, kDamping = 15;

int buffer(ir::Module &m, const std::string &name, ir::Type elem, ir::Role role,
           std::vector<int> sets, int comps = 1, const std::string &field = "") {
  int id = ir::addBuffer(m, name, role, std::move(sets), elem, comps);
  m.buffers[id].field = field;
  m.buffers[id].differentiable = elem == ir::Type::F && role != ir::Role::Body;
  return id;
}

void buildStep(ir::Module &m, ir::Kernel &k, const MassSpringIds &d) {
  Builder b(m, k);
  b.setLoc({0, 10, 3});
  auto F = [&](double v) { return b.constF(v); };
  auto I = [&](int64_t v) { return b.constI(v); };
  auto iadd = [&](ValueId x, ValueId y) { return b.op(Op::IAdd, {x, y}); };
  auto imul = [&](ValueId x, ValueId y) { return b.op(Op::IMul, {x, y}); };
  ValueId two = I(2), one = I(1);
  ValueId n = b.size(d.point), nin = b.size(d.input), nunit = b.size(d.unit);
  // Centre of mass.
  ValueId sx = b.local(), sy = b.local();
  ValueId p = b.beginLoop(d.point);
  ValueId px = imul(p, two), py = iadd(px, one);
  b.localUpdate(Op::LocalAdd, sx, b.load(d.x, px));
  b.localUpdate(Op::LocalAdd, sy, b.load(d.x, py));
  b.endLoop();
  ValueId nf = b.op(Op::IToF, {n});
  ValueId cx = b.div(b.localGet(sx), nf), cy = b.div(b.localGet(sy), nf);
  // Controller inputs: 10 sine waves, 4 per point, 2 constants.
  ValueId tf = b.op(Op::IToF, {b.time()});
  ValueId j = b.beginLoop(d.wave);
  ValueId phase = b.add(b.mul(F(10 * kDt), tf), b.mul(F(2 * M_PI / 10), b.op(Op::IToF, {j})));
  b.store(d.in, j, b.op(Op::Sin, {phase}));
  b.endLoop();
  p = b.beginLoop(d.point);
  px = imul(p, two), py = iadd(px, one);
  ValueId base = iadd(I(10), imul(p, I(4)));
  b.store(d.in, base, b.mul(F(0.05), b.sub(b.load(d.x, px), cx)));
  b.store(d.in, iadd(base, I(1)), b.mul(F(0.05), b.sub(b.load(d.x, py), cy)));
  b.store(d.in, iadd(base, I(2)), b.mul(F(0.05), b.load(d.v, px)));
  b.store(d.in, iadd(base, I(3)), b.mul(F(0.05), b.load(d.v, py)));
  b.endLoop();
  ValueId tail = iadd(I(10), imul(n, I(4)));
  b.store(d.in, tail, F(1));
  b.store(d.in, iadd(tail, I(1)), F(1));
  // hidden = tanh(W1 in + b1)
  b.setLoc({1, 21, 5});
  ValueId u = b.beginLoop(d.unit);
  ValueId s = b.local();
  ValueId i = b.beginLoop(d.input);
  b.localUpdate(Op::LocalAdd, s, b.mul(b.load(d.w1, iadd(imul(u, nin), i)), b.load(d.in, i)));
  b.endLoop();
  b.store(d.hid, u, b.op(Op::Tanh, {b.add(b.localGet(s), b.load(d.b1, u))}));
  b.endLoop();
  // act = tanh(W2 hidden + b2), one per spring
  ValueId q = b.beginLoop(d.spring);
  s = b.local();
  u = b.beginLoop(d.unit);
  b.localUpdate(Op::LocalAdd, s, b.mul(b.load(d.w2, iadd(imul(q, nunit), u)), b.load(d.hid, u)));
  b.endLoop();
  b.store(d.act, q, b.op(Op::Tanh, {b.add(b.localGet(s), b.load(d.b2, q))}));
  b.endLoop();
  // Spring impulses, scattered to both endpoints.
  b.setLoc({0, 42, 7});
  q = b.beginLoop(d.spring);
  ValueId ax = imul(b.load(d.sa, q), two), bx = imul(b.load(d.sb, q), two);
  ValueId ay = iadd(ax, one), by = iadd(bx, one);
  ValueId dx = b.sub(b.load(d.x, ax), b.load(d.x, bx));
  ValueId dy = b.sub(b.load(d.x, ay), b.load(d.x, by));
  ValueId len = b.add(b.op(Op::Sqrt, {b.add(b.mul(dx, dx), b.mul(dy, dy))}), F(1e-4));
  ValueId target =
      b.mul(b.load(d.rest, q), b.add(F(1), b.mul(b.load(d.actu, q), b.load(d.act, q))));
  ValueId kk = b.div(b.mul(b.mul(F(kDt), b.sub(len, target)), b.load(d.stiff, q)), len);
  ValueId ix = b.mul(kk, dx), iy = b.mul(kk, dy);
  b.accAdd(d.vinc, ax, b.op(Op::Neg, {ix}));
  b.accAdd(d.vinc, ay, b.op(Op::Neg, {iy}));
  b.accAdd(d.vinc, bx, ix);
  b.accAdd(d.vinc, by, iy);
  b.endLoop();
  // Semi-implicit Euler with the noslip ground.
  b.setLoc({0, 57, 3});
  ValueId damp = b.op(Op::Exp, {F(-kDt * kDamping)});
  p = b.beginLoop(d.point);
  px = imul(p, two), py = iadd(px, one);
  ValueId vx = b.add(b.mul(damp, b.load(d.v, px)), b.load(d.vinc, px));
  ValueId vy = b.add(b.add(b.mul(damp, b.load(d.v, py)), F(kDt * kGravity)), b.load(d.vinc, py));
  ValueId xx = b.load(d.x, px), xy = b.load(d.x, py);
  ValueId ny = b.add(xy, b.mul(F(kDt), vy));
  ValueId hit = b.op(Op::And, {b.op(Op::Lt, {ny, F(kGround)}), b.op(Op::Lt, {vy, F(-1e-4)})});
  ValueId toi = b.div(b.op(Op::Neg, {b.sub(xy, F(kGround))}), vy);
  ValueId h = b.op(Op::Select, {hit, toi, F(kDt)});
  b.store(d.x1, px, b.add(xx, b.mul(h, vx)));
  b.store(d.x1, py, b.add(xy, b.mul(h, vy)));
  b.store(d.v1, px, b.op(Op::Select, {hit, F(0), vx}));
  b.store(d.v1, py, b.op(Op::Select, {hit, F(0), vy}));
  b.endLoop();
}

void buildLoss(ir::Module &m, ir::Kernel &k, const MassSpringIds &d) {
  Builder b(m, k);
  ValueId s = b.local();
  ValueId p = b.beginLoop(d.point);
  ValueId px = b.op(Op::IMul, {p, b.constI(2)});
  b.localUpdate(Op::LocalAdd, s, b.sub(b.load(d.xLast, px), b.load(d.xFirst, px)));
  b.endLoop();
  ValueId nf = b.op(Op::IToF, {b.size(d.point)});
  b.store(d.loss, b.constI(0), b.op(Op::Neg, {b.div(b.localGet(s), nf)}));
}

/// An adjoint-shaped kernel: the MLP's first layer backwards (owned and shared
/// scatter-adds in one loop nest), a scatter into one robot-level slot, and
/// max/min reductions.
void buildAdjoint(ir::Module &m, ir::Kernel &k, const MassSpringIds &d) {
  Builder b(m, k);
  b.setLoc({1, 30, 1});
  auto I = [&](int64_t v) { return b.constI(v); };
  auto iadd = [&](ValueId x, ValueId y) { return b.op(Op::IAdd, {x, y}); };
  auto imul = [&](ValueId x, ValueId y) { return b.op(Op::IMul, {x, y}); };
  ValueId nin = b.size(d.input);
  ValueId u = b.beginLoop(d.unit);
  ValueId h = b.load(d.hidSaved, u);
  ValueId g = b.mul(b.load(d.hidAdj, u), b.sub(b.constF(1), b.mul(h, h)));
  b.accAdd(d.b1Adj, u, g);
  ValueId i = b.beginLoop(d.input);
  ValueId wi = iadd(imul(u, nin), i);
  b.accAdd(d.w1Adj, wi, b.mul(g, b.load(d.inSaved, i)));
  b.accAdd(d.inAdj, i, b.mul(g, b.load(d.w1, wi)));
  b.endLoop();
  b.endLoop();
  // The centre's adjoint: every point scatters into slot 0 and 1.
  b.setLoc({0, 12, 9});
  ValueId mx = b.local(-1e300), mn = b.local(1e300), sum = b.local(0.5);
  ValueId p = b.beginLoop(d.point);
  ValueId base = iadd(I(10), imul(p, I(4)));
  ValueId i0 = b.load(d.inSaved, base), i1 = b.load(d.inSaved, iadd(base, I(1)));
  b.accAdd(d.cAdj, I(0), b.mul(b.constF(-0.05), b.mul(i0, i0)));
  b.accAdd(d.cAdj, I(1), b.mul(b.constF(-0.05), b.mul(i1, i1)));
  ValueId y = b.load(d.x, iadd(imul(p, I(2)), I(1)));
  b.localUpdate(Op::LocalMax, mx, y);
  b.localUpdate(Op::LocalMin, mn, y);
  b.localUpdate(Op::LocalAdd, sum, y);
  b.endLoop();
  b.store(d.stats, I(0), b.localGet(mx));
  b.store(d.stats, I(1), b.localGet(mn));
  b.store(d.stats, I(2), b.localGet(sum));
  // A gather from and scatter into the same buffer: serial by necessity.
  b.setLoc({0, 70, 1});
  ValueId q = b.beginLoop(d.spring);
  ValueId a2 = imul(b.load(d.sa, q), I(2)), b2 = imul(b.load(d.sb, q), I(2));
  b.accAdd(d.chain, b2, b.mul(b.constF(0.5), b.add(b.load(d.chain, a2), b.load(d.rest, q))));
  b.endLoop();
}

} // namespace

ir::Module makeMassSpringModule(MassSpringIds &d, ir::Precision prec, bool adjointShapes) {
  using ir::Role;
  using ir::Type;
  ir::Module m;
  m.name = "mass_spring";
  m.precision = prec;
  d.point = ir::addSet(m, "point");
  d.spring = ir::addSet(m, "spring");
  d.unit = ir::addSet(m, "unit");
  d.input = ir::addSet(m, "input");
  d.wave = ir::addSet(m, "wave");
  m.sets[d.point].fromBody = m.sets[d.spring].fromBody = true;
  m.sets[d.unit].base = 32;
  m.sets[d.input].base = 12;
  m.sets[d.input].terms = {{d.point, 4}};
  m.sets[d.wave].base = 10;
  d.x = buffer(m, "point.x", Type::F, Role::State, {d.point}, 2, "point.x");
  d.v = buffer(m, "point.v", Type::F, Role::State, {d.point}, 2, "point.v");
  d.x1 = buffer(m, "point.x.next", Type::F, Role::NextState, {d.point}, 2, "point.x");
  d.v1 = buffer(m, "point.v.next", Type::F, Role::NextState, {d.point}, 2, "point.v");
  d.xFirst = buffer(m, "point.x.first", Type::F, Role::State, {d.point}, 2, "point.x");
  m.buffers[d.xFirst].time = ir::TimeRef::First;
  d.xLast = buffer(m, "point.x.last", Type::F, Role::State, {d.point}, 2, "point.x");
  m.buffers[d.xLast].time = ir::TimeRef::Last;
  d.sa = buffer(m, "spring.a", Type::I, Role::Body, {d.spring});
  d.sb = buffer(m, "spring.b", Type::I, Role::Body, {d.spring});
  d.rest = buffer(m, "spring.rest", Type::F, Role::Body, {d.spring});
  d.stiff = buffer(m, "spring.stiffness", Type::F, Role::Body, {d.spring});
  d.actu = buffer(m, "spring.actuation", Type::F, Role::Body, {d.spring});
  d.w1 = buffer(m, "mlp.w1", Type::F, Role::Param, {d.unit, d.input});
  d.b1 = buffer(m, "mlp.b1", Type::F, Role::Param, {d.unit});
  d.w2 = buffer(m, "mlp.w2", Type::F, Role::Param, {d.spring, d.unit});
  // The runtime initialises weights as ELDiR does (Xavier-normal, gains 2 and 3).
  m.buffers[d.w1].init = m.buffers[d.w2].init = "xavier_normal";
  m.buffers[d.w1].initGain = 2.0;
  m.buffers[d.w2].initGain = 3.0;
  d.b2 = buffer(m, "mlp.b2", Type::F, Role::Param, {d.spring});
  d.in = buffer(m, "mlp.in", Type::F, Role::Temp, {d.input});
  d.hid = buffer(m, "mlp.hidden", Type::F, Role::Temp, {d.unit});
  d.act = buffer(m, "spring.act", Type::F, Role::Temp, {d.spring});
  d.vinc = buffer(m, "point.vinc", Type::F, Role::Temp, {d.point}, 2);
  d.loss = buffer(m, "loss", Type::F, Role::Output, {});
  if (adjointShapes) {
    d.hidAdj = buffer(m, "mlp.hidden.adj", Type::F, Role::Adjoint, {d.unit});
    m.buffers[d.hidAdj].primal = d.hid;
    d.b1Adj = buffer(m, "mlp.b1.adj", Type::F, Role::Temp, {d.unit});
    d.w1Adj = buffer(m, "mlp.w1.adj", Type::F, Role::Temp, {d.unit, d.input});
    d.inAdj = buffer(m, "mlp.in.adj", Type::F, Role::Temp, {d.input});
    d.cAdj = buffer(m, "centre.adj", Type::F, Role::Temp, {}, 2);
    d.stats = buffer(m, "stats", Type::F, Role::Temp, {}, 3);
    d.hidSaved = buffer(m, "saved.hidden", Type::F, Role::State, {d.unit});
    d.inSaved = buffer(m, "saved.in", Type::F, Role::State, {d.input});
    d.chain = buffer(m, "chain", Type::F, Role::Adjoint, {d.point}, 2);
    m.buffers[d.chain].primal = d.x;
  }
  m.files = {"stdlib/physics/mass_spring.evo", "stdlib/controllers/mlp.evo"};
  m.kernels.resize(adjointShapes ? 3 : 2);
  if (adjointShapes) {
    m.kernels[2].name = "adjoint_shapes";
    m.kernels[2].kind = ir::KernelKind::StepAdj;
    m.kernels[2].primal = 0;
    d.adj = 2;
  }
  m.kernels[0].name = "step";
  m.kernels[0].kind = ir::KernelKind::Step;
  m.kernels[1].name = "loss";
  m.kernels[1].kind = ir::KernelKind::Loss;
  d.step = 0;
  d.lossK = 1;
  buildStep(m, m.kernels[0], d);
  buildLoss(m, m.kernels[1], d);
  if (adjointShapes)
    buildAdjoint(m, m.kernels[2], d);
  return m;
}

void xavierWeights(MassSpringRobot &r, std::mt19937_64 &rng,
                   std::normal_distribution<double> &gauss) {
  auto xavier = [&](std::vector<double> &w, int64_t out, int64_t in, double gain) {
    double sd = gain * std::sqrt(2.0 / double(out + in));
    w.resize(size_t(out * in));
    for (double &e : w)
      e = sd * gauss(rng);
  };
  xavier(r.w1, 32, 12 + 4 * r.nPoints, 2.0);
  xavier(r.w2, r.nSprings, 32, 3.0);
}

MassSpringRobot makeRandomRobot(std::mt19937_64 &rng, int rows, int cols, double keep) {
  MassSpringRobot r;
  std::uniform_real_distribution<double> uni(0, 1);
  std::normal_distribution<double> gauss(0, 1);
  auto id = [&](int x, int y) { return int32_t(y * cols + x); };
  for (int y = 0; y < rows; ++y)
    for (int x = 0; x < cols; ++x) {
      r.x0.push_back(0.025 + x * 0.05 + (y % 2) * 0.025);
      r.x0.push_back(0.101 + y * 0.05 * std::sqrt(3.0) / 2);
    }
  r.nPoints = int64_t(rows) * cols;
  r.v0.assign(r.x0.size(), 0.0);
  auto spring = [&](int32_t a, int32_t b) {
    if (uni(rng) > keep)
      return;
    r.a.push_back(a);
    r.b.push_back(b);
    double dx = r.x0[2 * a] - r.x0[2 * b], dy = r.x0[2 * a + 1] - r.x0[2 * b + 1];
    r.rest.push_back(std::sqrt(dx * dx + dy * dy));
    r.stiff.push_back(3e4);
    r.actu.push_back(uni(rng) < 0.5 ? 0.1 : 0.0);
  };
  for (int y = 0; y < rows; ++y)
    for (int x = 0; x < cols; ++x) {
      if (x + 1 < cols)
        spring(id(x, y), id(x + 1, y));
      if (y + 1 < rows) {
        spring(id(x, y), id(x, y + 1));
        int xd = (y % 2) ? x + 1 : x - 1; // the other neighbour of the row above
        if (xd >= 0 && xd < cols)
          spring(id(x, y), id(xd, y + 1));
      }
    }
  r.nSprings = int64_t(r.a.size());
  xavierWeights(r, rng, gauss);
  r.b1.resize(32);
  r.b2.resize(size_t(r.nSprings));
  for (double &e : r.b1)
    e = 0.1 * gauss(rng);
  for (double &e : r.b2)
    e = 0.1 * gauss(rng);
  return r;
}

double rollout(const ir::Module &m, const MassSpringIds &d, const codegen::Executable &exe,
               const MassSpringRobot &r, int64_t T, std::vector<double> *finalX) {
  std::vector<int64_t> sizes(m.sets.size());
  sizes[d.point] = r.nPoints;
  sizes[d.spring] = r.nSprings;
  sizes[d.unit] = 32;
  sizes[d.input] = 12 + 4 * r.nPoints;
  sizes[d.wave] = 10;
  std::vector<double> xs[2] = {r.x0, r.x0}, vs[2] = {r.v0, r.v0};
  std::vector<double> in(size_t(sizes[d.input])), hid(32), act(size_t(r.nSprings)),
      vinc(size_t(2 * r.nPoints)), loss(1);
  std::vector<void *> bufs(m.buffers.size(), nullptr);
  auto set = [&](int b, const void *p) { bufs[size_t(b)] = const_cast<void *>(p); };
  set(d.sa, r.a.data());
  set(d.sb, r.b.data());
  set(d.rest, r.rest.data());
  set(d.stiff, r.stiff.data());
  set(d.actu, r.actu.data());
  set(d.w1, r.w1.data());
  set(d.b1, r.b1.data());
  set(d.w2, r.w2.data());
  set(d.b2, r.b2.data());
  set(d.in, in.data());
  set(d.hid, hid.data());
  set(d.act, act.data());
  set(d.vinc, vinc.data());
  for (int64_t t = 0; t + 1 < T; ++t) {
    int cur = int(t & 1);
    set(d.x, xs[cur].data());
    set(d.v, vs[cur].data());
    set(d.x1, xs[1 - cur].data());
    set(d.v1, vs[1 - cur].data());
    // Temps are zeroed by the caller (the IR contract); only vinc is accumulated.
    std::fill(vinc.begin(), vinc.end(), 0.0);
    exe.run(d.step, bufs.data(), sizes.data(), t);
  }
  const std::vector<double> &last = xs[(T - 1) & 1];
  std::vector<void *> lb(m.buffers.size(), nullptr);
  lb[size_t(d.xFirst)] = const_cast<double *>(r.x0.data());
  lb[size_t(d.xLast)] = const_cast<double *>(last.data());
  lb[size_t(d.loss)] = loss.data();
  exe.run(d.lossK, lb.data(), sizes.data(), T - 1);
  if (finalX)
    *finalX = last;
  return loss[0];
}

} // namespace evoc::test
