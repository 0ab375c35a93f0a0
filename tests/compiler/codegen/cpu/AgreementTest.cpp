// Agreement of every back end with the IR interpreter: random kernels and an
// ELDiR-style mass-spring rollout. One test body runs on every back end.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <thread>

#include "Backends.h"
#include "MassSpring.h"
#include "ir/Builder.h"

using namespace evoc;
using evoc::test::agrees;
using ir::Op;
using ir::ValueId;

namespace {

/// Random straight-line float code over a pool of values. Every op keeps
/// its operands in its domain (log of |x| + 0.1, ...), so results are finite.
class RandomExpr {
public:
  RandomExpr(ir::Builder &b, std::mt19937_64 &rng, bool discontinuous)
      : b_(b), rng_(rng), disc_(discontinuous) {}

  ValueId pick(const std::vector<ValueId> &pool) {
    return pool[std::uniform_int_distribution<size_t>(0, pool.size() - 1)(rng_)];
  }
  int roll(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  ValueId one(std::vector<ValueId> &pool) {
    ValueId a = pick(pool), c = pick(pool);
    ValueId r;
    switch (roll(disc_ ? 19 : 16)) {
    case 0:
      r = b_.add(a, c);
      break;
    case 1:
      r = b_.sub(a, c);
      break;
    case 2:
      r = b_.mul(a, c);
      break;
    case 3:
      r = b_.div(a, b_.add(b_.op(Op::Abs, {c}), b_.constF(0.5)));
      break;
    case 4:
      r = b_.op(Op::Neg, {a});
      break;
    case 5:
      r = b_.op(Op::Sin, {a});
      break;
    case 6:
      r = b_.op(Op::Cos, {a});
      break;
    case 7:
      r = b_.op(Op::Tanh, {a});
      break;
    case 8:
      r = b_.op(Op::Exp, {b_.op(Op::Tanh, {a})});
      break;
    case 9:
      r = b_.op(Op::Log, {b_.add(b_.op(Op::Abs, {a}), b_.constF(0.1))});
      break;
    case 10:
      r = b_.op(Op::Sqrt, {b_.op(Op::Abs, {a})});
      break;
    case 11:
      r = b_.op(Op::Pow, {b_.add(b_.op(Op::Abs, {a}), b_.constF(0.1)), b_.op(Op::Tanh, {c})});
      break;
    case 12:
      r = b_.op(Op::Min, {a, c});
      break;
    case 13:
      r = b_.op(Op::Max, {a, c});
      break;
    case 14:
      r = b_.constF(std::uniform_real_distribution<double>(-2, 2)(rng_));
      break;
    case 15:
      r = b_.op(Op::Tanh, {b_.add(a, c)});
      break;
    // Discontinuous ops: only where results must be bit-identical.
    case 16:
      r = b_.op(Op::Floor, {a});
      break;
    case 17: {
      static const Op cmps[] = {Op::Lt, Op::Le, Op::Gt, Op::Ge, Op::Eq, Op::Ne};
      ValueId k1 = b_.op(cmps[roll(6)], {a, c});
      ValueId k2 = b_.op(cmps[roll(6)], {c, pick(pool)});
      ValueId k = roll(2) ? b_.op(Op::And, {k1, b_.op(Op::Not, {k2})}) : b_.op(Op::Or, {k1, k2});
      r = b_.op(Op::Select, {k, a, c});
      break;
    }
    default:
      r = b_.op(Op::Select, {b_.op(Op::Lt, {a, c}), c, b_.op(Op::Neg, {a})});
      break;
    }
    // Keep magnitudes bounded so long chains stay finite.
    if (roll(3) == 0)
      r = b_.op(Op::Tanh, {r});
    pool.push_back(r);
    return r;
  }
  ValueId chain(std::vector<ValueId> &pool, int n) {
    ValueId r = 0;
    for (int i = 0; i < n; ++i)
      r = one(pool);
    return r;
  }

private:
  ir::Builder &b_;
  std::mt19937_64 &rng_;
  bool disc_;
};

struct RandomModule {
  ir::Module m;
  int setA, setB, in1, in2, idx, outS, outAcc, outR;
};

/// A kernel with a loop over A, a gather through an index buffer into B, an
/// inner reduction over B, a store, a scatter-add and a top-level reduction.
RandomModule makeRandomModule(std::mt19937_64 &rng, bool discontinuous) {
  RandomModule r;
  ir::Module &m = r.m;
  m.name = "random";
  r.setA = ir::addSet(m, "a");
  r.setB = ir::addSet(m, "b");
  auto buf = [&](const char *n, ir::Type t, ir::Role role, std::vector<int> sets, int comps) {
    return ir::addBuffer(m, n, role, std::move(sets), t, comps);
  };
  r.in1 = buf("in1", ir::Type::F, ir::Role::State, {r.setA}, 2);
  r.in2 = buf("in2", ir::Type::F, ir::Role::Param, {r.setB}, 1);
  r.idx = buf("idx", ir::Type::I, ir::Role::Body, {r.setA}, 1);
  r.outS = buf("outS", ir::Type::F, ir::Role::NextState, {r.setA}, 1);
  r.outAcc = buf("outAcc", ir::Type::F, ir::Role::Temp, {r.setB}, 1);
  r.outR = buf("outR", ir::Type::F, ir::Role::Output, {}, 2);
  ir::Builder b(m, ir::addKernel(m, "random"));
  RandomExpr g(b, rng, discontinuous);
  ValueId tf = b.op(Op::IToF, {b.time()});
  ValueId total = b.local(0.0), top = b.local(-1e300);
  ValueId i = b.beginLoop(r.setA);
  ValueId two = b.constI(2);
  ValueId i0 = b.op(Op::IMul, {i, two});
  ValueId j = b.load(r.idx, i);
  // j' = (size(B) - 1) - j exercises ISub; still in range.
  ValueId jr = b.op(Op::ISub, {b.op(Op::ISub, {b.size(r.setB), b.constI(1)}), j});
  std::vector<ValueId> pool = {
      b.load(r.in1, i0),   b.load(r.in1, b.op(Op::IAdd, {i0, b.constI(1)})),
      b.load(r.in2, j),    b.load(r.in2, jr),
      b.op(Op::IToF, {i}), b.mul(tf, b.constF(0.01)),
      b.constF(0.75)};
  g.chain(pool, 6);
  ValueId inner = b.local(g.roll(2) ? 0.0 : 1.5);
  Op red = std::array<Op, 3>{Op::LocalAdd, Op::LocalMax, Op::LocalMin}[size_t(g.roll(3))];
  ValueId k = b.beginLoop(r.setB);
  std::vector<ValueId> ipool = pool;
  ipool.push_back(b.load(r.in2, k));
  b.localUpdate(red, inner, g.chain(ipool, 5));
  b.endLoop();
  pool.push_back(b.localGet(inner));
  b.store(r.outS, i, g.chain(pool, 8));
  b.accAdd(r.outAcc, j, g.chain(pool, 4));
  b.localUpdate(Op::LocalAdd, total, g.chain(pool, 3));
  b.localUpdate(Op::LocalMax, top, g.one(pool));
  b.endLoop();
  b.store(r.outR, b.constI(0), b.localGet(total));
  b.store(r.outR, b.constI(1), b.localGet(top));
  return r;
}

} // namespace

TEST_CASE("random kernels agree with the interpreter on every back end", "[llvm][agreement]") {
  for (int seed = 1; seed <= 24; ++seed) {
    std::mt19937_64 rng{uint64_t(seed)};
    const bool disc = seed % 2 == 0; // floor / compare+select only where exactness is asked
    RandomModule rm = makeRandomModule(rng, disc);
    const int64_t nA = 1 + int64_t(rng() % 37), nB = 1 + int64_t(rng() % 9);
    std::vector<int64_t> sizes = {nA, nB};
    std::uniform_real_distribution<double> u(-2, 2);
    std::vector<double> in1(static_cast<size_t>(2 * nA)), in2(static_cast<size_t>(nB));
    std::vector<int32_t> idx(static_cast<size_t>(nA));
    for (double &x : in1)
      x = u(rng);
    for (double &x : in2)
      x = u(rng);
    for (int32_t &x : idx)
      x = int32_t(rng() % uint64_t(nB));

    auto runOn = [&](const codegen::Executable &exe) {
      std::vector<double> outS(static_cast<size_t>(nA)), outAcc(static_cast<size_t>(nB)), outR(2);
      std::vector<void *> bufs(rm.m.buffers.size());
      bufs[size_t(rm.in1)] = in1.data();
      bufs[size_t(rm.in2)] = in2.data();
      bufs[size_t(rm.idx)] = idx.data();
      bufs[size_t(rm.outS)] = outS.data();
      bufs[size_t(rm.outAcc)] = outAcc.data();
      bufs[size_t(rm.outR)] = outR.data();
      exe.run(0, bufs.data(), sizes.data(), 7);
      std::vector<double> all = outS;
      all.insert(all.end(), outAcc.begin(), outAcc.end());
      all.insert(all.end(), outR.begin(), outR.end());
      return all;
    };
    auto backends = test::backendsUnderTest(rm.m, 1e-12, 1e-9);
    const std::vector<double> ref = runOn(*backends[0].exe);
    for (auto &be : backends) {
      if (disc && be.rtol != 0)
        continue; // discontinuous ops amplify rounding differences
      std::vector<double> got = runOn(*be.exe);
      for (size_t e = 0; e < ref.size(); ++e) {
        INFO("seed " << seed << ", back end " << be.name << ", output " << e << ": " << got[e]
                     << " vs interpreter " << ref[e]);
        // Sums of terms of size ~1: rounding is relative to that scale.
        CHECK(agrees(got[e], ref[e], be.rtol, 1.0));
      }
    }
  }
}

TEST_CASE("mass-spring rollouts agree with the interpreter on every back end",
          "[llvm][agreement]") {
  test::MassSpringIds ids;
  ir::Module m = test::makeMassSpringModule(ids);
  auto backends = test::backendsUnderTest(m, 1e-9, 1e-9);
  std::mt19937_64 rng(42);
  for (int robot = 0; robot < 3; ++robot) {
    test::MassSpringRobot r = test::makeRandomRobot(rng, 3 + robot, 4 + robot);
    const int64_t T = 300;
    std::vector<double> refX, gotX;
    const double ref = test::rollout(m, ids, *backends[0].exe, r, T, &refX);
    REQUIRE(std::isfinite(ref));
    for (auto &be : backends) {
      const double got = test::rollout(m, ids, *be.exe, r, T, &gotX);
      INFO("robot " << robot << ", back end " << be.name << ": loss " << got << " vs interpreter "
                    << ref);
      CHECK(agrees(got, ref, be.rtol));
      double worst = 0;
      for (size_t e = 0; e < refX.size(); ++e)
        worst = std::max(worst, std::fabs(gotX[e] - refX[e]) / std::max(1.0, std::fabs(refX[e])));
      INFO("largest position difference " << worst);
      CHECK(worst <= be.rtol);
    }
  }
}

TEST_CASE("compiled kernels may be called from several threads at once", "[llvm][threads]") {
  test::MassSpringIds ids;
  ir::Module m = test::makeMassSpringModule(ids);
  codegen::CompileOptions opts;
  opts.useCache = false;
  auto exe = codegen::compile(m, codegen::BackendKind::Cpu, opts);
  std::mt19937_64 rng(11);
  std::vector<test::MassSpringRobot> robots;
  for (int i = 0; i < 8; ++i)
    robots.push_back(test::makeRandomRobot(rng, 3 + i % 3, 4 + i % 4));
  std::vector<double> serial, parallel(robots.size());
  for (const auto &r : robots)
    serial.push_back(test::rollout(m, ids, *exe, r, 200));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < robots.size(); ++i)
    threads.emplace_back([&, i] { parallel[i] = test::rollout(m, ids, *exe, robots[i], 200); });
  for (auto &t : threads)
    t.join();
  for (size_t i = 0; i < robots.size(); ++i)
    CHECK(parallel[i] == serial[i]);
}
