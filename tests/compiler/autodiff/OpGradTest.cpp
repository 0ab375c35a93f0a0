// Finite-difference checks of the adjoint rule of every differentiable op,
// of memory ops through index buffers, and of local reductions.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>

#include "CheckGrad.h"
#include "GradCheck.h"
#include "autodiff/Differentiate.h"
#include "ir/Builder.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

using namespace evoc;
using namespace evoc::ir;

namespace {

Buffer buf(const std::string &name, Role r, std::vector<int> sets, Type elem = Type::F) {
  Buffer b;
  b.name = name;
  b.role = r;
  b.sets = std::move(sets);
  b.elem = elem;
  return b;
}

// out[e] = f(x[e], y[e]) over a set of n elements, differentiated.
Module unary(const std::function<ValueId(Builder &, ValueId, ValueId)> &f) {
  Module m;
  int e = addSet(m, "e");
  m.sets[e].fromBody = true;
  int x = addBuffer(m, buf("x", Role::State, {e}));
  int y = addBuffer(m, buf("y", Role::Param, {e}));
  int out = addBuffer(m, buf("out", Role::NextState, {e}));
  Builder b(m, addKernel(m, "step"));
  ValueId i = b.beginLoop(e);
  b.store(out, i, f(b, b.load(x, i), b.load(y, i)));
  b.endLoop();
  autodiff::differentiate(m);
  return m;
}

test::GradReport check(const Module &m, double lo, double hi, double ylo, double yhi, int n = 7) {
  REQUIRE(verify(m).empty());
  test::Data d(m, {{"e", n}});
  std::mt19937 rng(42);
  std::uniform_real_distribution<double> ux(lo, hi), uy(ylo, yhi);
  for (double &v : d.F("x"))
    v = ux(rng);
  for (double &v : d.F("y"))
    v = uy(rng);
  return test::gradCheck(m, 0, d, 0, 7);
}

ValueId un(Builder &b, Op op, ValueId x) { return b.op(op, {x}); }

} // namespace

TEST_CASE("adjoints of binary float ops", "[autodiff][ops]") {
  for (Op op : {Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Min, Op::Max}) {
    INFO(opName(op));
    CHECK_GRAD(check(unary([op](Builder &b, ValueId x, ValueId y) {
                       return b.op(op, {x, y});
                     }),
                     -2, 2, 0.5, 3));
  }
  INFO("pow");
  CHECK_GRAD(check(unary([](Builder &b, ValueId x, ValueId y) {
                     return b.op(Op::Pow, {x, y});
                   }),
                   0.5, 2, -1.5, 2.5));
}

TEST_CASE("adjoints of unary float ops", "[autodiff][ops]") {
  struct Case {
    Op op;
    double lo, hi;
  };
  for (Case c : {Case{Op::Neg, -2, 2}, Case{Op::Sin, -3, 3}, Case{Op::Cos, -3, 3},
                 Case{Op::Tanh, -2, 2}, Case{Op::Exp, -2, 2}, Case{Op::Log, 0.2, 3},
                 Case{Op::Sqrt, 0.2, 3}, Case{Op::Abs, -2, -0.1}, Case{Op::Abs, 0.1, 2}}) {
    INFO(opName(c.op));
    Op op = c.op;
    // times y so that the Param y also gets a gradient through a product
    CHECK_GRAD(
        check(unary([op](Builder &b, ValueId x, ValueId y) { return b.mul(un(b, op, x), y); }),
              c.lo, c.hi, 0.5, 2));
  }
}

TEST_CASE("adjoints of floor, itof, select and comparisons", "[autodiff][ops]") {
  // floor has derivative 0; itof has none; select routes to the taken branch.
  CHECK_GRAD(check(unary([](Builder &b, ValueId x, ValueId y) {
                     ValueId fl = b.op(Op::Floor, {x});
                     ValueId c = b.op(Op::Lt, {x, y});
                     return b.add(b.op(Op::Select, {c, b.mul(x, y), b.div(x, y)}), fl);
                   }),
                   -1.9, 1.9, -1, 1, 16));
}

TEST_CASE("select: no NaN leaks from the branch not taken", "[autodiff][ops]") {
  // dir = speed > 0 ? vt / speed : 0 with speed = |vt| and some vt == 0.
  Module m = unary([](Builder &b, ValueId vt, ValueId mu) {
    ValueId speed = b.op(Op::Sqrt, {b.mul(vt, vt)});
    ValueId dir = b.div(vt, speed);
    ValueId c = b.op(Op::Gt, {speed, b.constF(0)});
    return b.mul(b.op(Op::Select, {c, b.mul(dir, mu), b.constF(0)}), b.add(vt, mu));
  });
  test::Data d(m, {{"e", 4}});
  d.F("x") = {0.0, 0.5, -0.7, 0.0};
  d.F("y") = {1.0, 2.0, 3.0, 4.0};
  d.F("out.adj") = {1, 1, 1, 1};
  d.run(1);
  for (double g : d.F("x.adj"))
    CHECK(std::isfinite(g));
  for (double g : d.F("y.adj"))
    CHECK(std::isfinite(g));
  CHECK(d.F("x.adj")[0] == 0.0);
  CHECK(d.F("y.adj")[3] == 0.0);
  CHECK(d.F("y.adj")[1] == Approx(2 * 2.0 + 0.5)); // d/dmu of mu * (vt + mu), dir = 1
}

TEST_CASE("subgradients at kinks: abs'(0) = 0, min/max ties to the first operand",
          "[autodiff][ops]") {
  Module m = unary([](Builder &b, ValueId x, ValueId y) {
    return b.add(b.op(Op::Abs, {x}), b.add(b.op(Op::Min, {x, y}), b.op(Op::Max, {x, y})));
  });
  test::Data d(m, {{"e", 2}});
  d.F("x") = {0.0, 1.0};
  d.F("y") = {0.0, 1.0};
  d.F("out.adj") = {1, 1};
  d.run(1);
  CHECK(d.F("x.adj") == std::vector<double>{2.0, 3.0}); // abs'(0)=0, min+max both to x
  CHECK(d.F("y.adj") == std::vector<double>{0.0, 0.0});
}

TEST_CASE("adjoints of gathers, scatter-adds and stores through index buffers",
          "[autodiff][memory]") {
  Module m;
  int point = addSet(m, "point"), spring = addSet(m, "spring");
  m.sets[point].fromBody = m.sets[spring].fromBody = true;
  int x = addBuffer(m, buf("x", Role::State, {point}));
  int a = addBuffer(m, buf("a", Role::Body, {spring}, Type::I));
  int bb = addBuffer(m, buf("b", Role::Body, {spring}, Type::I));
  int k = addBuffer(m, buf("k", Role::Param, {spring}));
  int f = addBuffer(m, buf("f", Role::Temp, {point}));
  int tmp = addBuffer(m, buf("g", Role::Temp, {spring}));
  int out = addBuffer(m, buf("xn", Role::NextState, {point}));
  addKernel(m, "step");
  {
    Builder b(m, m.kernels[0]);
    ValueId s = b.beginLoop(spring);
    ValueId ia = b.load(a, s), ib = b.load(bb, s);
    ValueId d = b.sub(b.load(x, ia), b.load(x, ib));
    b.store(tmp, s, b.mul(b.mul(d, d), b.load(k, s))); // store to a temp
    b.endLoop();
    s = b.beginLoop(spring);
    ValueId g = b.load(tmp, s); // read the temp back
    b.accAdd(f, b.load(a, s), b.op(Op::Neg, {g}));
    b.accAdd(f, b.load(bb, s), b.op(Op::Sin, {g}));
    b.endLoop();
    ValueId p = b.beginLoop(point);
    b.store(out, p, b.mul(b.load(f, p), b.load(x, p)));
    b.endLoop();
  }
  autodiff::differentiate(m);
  REQUIRE(verify(m).empty());
  test::Data d(m, {{"point", 4}, {"spring", 5}});
  d.I("a") = {0, 1, 2, 0, 1};
  d.I("b") = {1, 2, 3, 2, 3};
  d.F("x") = {0.1, 0.5, -0.3, 0.9};
  d.F("k") = {1.0, 2.0, 0.5, 1.5, 0.7};
  CHECK_GRAD(test::gradCheck(m, 0, d, 0, 3));
  CHECK(m.findBuffer("f.adj") >= 0);
  CHECK(m.findBuffer("g.adj") >= 0);
  CHECK(m.findBuffer("a.adj") < 0); // index buffers carry no adjoint
}

TEST_CASE("adjoints of local reductions: sum, max, min (nested)", "[autodiff][locals]") {
  for (Op red : {Op::LocalAdd, Op::LocalMax, Op::LocalMin}) {
    INFO(opName(red));
    Module m;
    int u = addSet(m, "unit"), in = addSet(m, "input");
    m.sets[u].fromBody = m.sets[in].fromBody = true;
    int w = addBuffer(m, buf("w", Role::Param, {u, in}));
    int v = addBuffer(m, buf("v", Role::State, {in}));
    int h = addBuffer(m, buf("h", Role::NextState, {u}));
    int loss = addBuffer(m, buf("loss", Role::Output, {}));
    addKernel(m, "step");
    {
      Builder b(m, m.kernels[0]);
      ValueId tot = b.local(0.0);
      ValueId i = b.beginLoop(u);
      double init = red == Op::LocalMax ? -1e30 : red == Op::LocalMin ? 1e30 : 0.0;
      ValueId acc = b.local(init);
      ValueId j = b.beginLoop(in);
      ValueId wij = b.load(w, b.op(Op::IAdd, {b.op(Op::IMul, {i, b.size(in)}), j}));
      b.localUpdate(red, acc, b.mul(wij, b.load(v, j)));
      b.endLoop();
      ValueId hv = b.op(Op::Tanh, {b.localGet(acc)});
      b.store(h, i, hv);
      b.localUpdate(Op::LocalAdd, tot, b.mul(hv, hv));
      b.endLoop();
      b.store(loss, b.constI(0), b.localGet(tot));
    }
    autodiff::differentiate(m);
    REQUIRE(verify(m).empty());
    test::Data d(m, {{"unit", 3}, {"input", 5}});
    std::mt19937 rng(5);
    d.randomize(Role::Param, -1, 1, rng);
    d.randomize(Role::State, -1, 1, rng);
    CHECK_GRAD(test::gradCheck(m, 0, d, 0, 9));
  }
}

TEST_CASE("local max: ties go to the first index; init wins over none", "[autodiff][locals]") {
  Module m;
  int e = addSet(m, "e");
  m.sets[e].fromBody = true;
  int x = addBuffer(m, buf("x", Role::State, {e}));
  int out = addBuffer(m, buf("out", Role::Output, {}, Type::F));
  addKernel(m, "loss", KernelKind::Loss);
  {
    Builder b(m, m.kernels[0]);
    ValueId s = b.local(0.5);
    ValueId i = b.beginLoop(e);
    b.localUpdate(Op::LocalMax, s, b.load(x, i));
    b.endLoop();
    b.store(out, b.constI(0), b.localGet(s));
  }
  autodiff::differentiate(m);
  REQUIRE(verify(m).empty());
  test::Data d(m, {{"e", 4}});
  d.F("x") = {0.1, 2.0, 2.0, 1.0};
  d.F("out.adj") = {3.0};
  d.run(1);
  CHECK(d.F("x.adj") == std::vector<double>{0, 3, 0, 0});
  d.F("x") = {0.1, 0.5, 0.2, 0.3}; // the initial value 0.5 is the max
  d.F("x.adj") = {0, 0, 0, 0};
  d.run(1);
  CHECK(d.F("x.adj") == std::vector<double>{0, 0, 0, 0});
}
