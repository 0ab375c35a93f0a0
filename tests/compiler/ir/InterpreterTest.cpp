// Interpreter tests: arithmetic, gathers, scatter-adds, reductions, loops, f32.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "EldirFixture.h"
#include "ir/Builder.h"
#include "ir/Interpreter.h"

using namespace evoc::ir;

using evoc::test::buf;

TEST_CASE("interpreter: gather, scatter-add and sum reduction", "[ir][interp]") {
  Module m;
  int point = addSet(m, "point"), spring = addSet(m, "spring");
  int x = addBuffer(m, buf("point.x", Role::State, {point}));
  int a = addBuffer(m, buf("spring.a", Role::Body, {spring}, 1, Type::I));
  int b = addBuffer(m, buf("spring.b", Role::Body, {spring}, 1, Type::I));
  int f = addBuffer(m, buf("point.f", Role::Temp, {point}));
  int out = addBuffer(m, buf("out", Role::Output, {}));
  Builder bd(m, addKernel(m, "k"));
  ValueId s = bd.beginLoop(spring);
  ValueId ia = bd.load(a, s), ib = bd.load(b, s);
  ValueId d = bd.sub(bd.load(x, ia), bd.load(x, ib));
  bd.accAdd(f, ia, bd.op(Op::Neg, {d}));
  bd.accAdd(f, ib, d);
  bd.endLoop();
  ValueId acc = bd.local(0.0), mx = bd.local(-1e300);
  ValueId p = bd.beginLoop(point);
  ValueId fp = bd.load(f, p);
  bd.localUpdate(Op::LocalAdd, acc, bd.mul(fp, fp));
  bd.localUpdate(Op::LocalMax, mx, fp);
  bd.endLoop();
  bd.store(out, bd.constI(0), bd.add(bd.localGet(acc), bd.localGet(mx)));

  std::vector<double> X = {0, 1, 3}, F(3, 0.0), O(1, 0.0);
  std::vector<int32_t> A = {0, 1}, B = {1, 2};
  void *bufs[] = {X.data(), A.data(), B.data(), F.data(), O.data()};
  int64_t sizes[] = {3, 2};
  interpret(m, 0, bufs, sizes, 0);
  // spring 0: d = -1 -> f0 += 1, f1 += -1; spring 1: d = -2 -> f1 += 2, f2 -= 2
  CHECK(F[0] == 1);
  CHECK(F[1] == 1);
  CHECK(F[2] == -2);
  CHECK(O[0] == 1 + 1 + 4 + 1);
}

TEST_CASE("interpreter: math ops, select, ints, f32", "[ir][interp]") {
  for (Precision prec : {Precision::F64, Precision::F32}) {
    Module m;
    m.precision = prec;
    int out = addBuffer(m, buf("out", Role::Output, {}, 8));
    m.kernels.emplace_back();
    Builder bd(m, m.kernels[0]);
    ValueId two = bd.constF(2.0), half = bd.constF(0.5);
    ValueId vals[8] = {
        bd.op(Op::Pow, {two, half}),
        bd.op(Op::Tanh, {half}),
        bd.op(Op::Min, {two, half}),
        bd.op(Op::Select, {bd.op(Op::Lt, {two, half}), two, half}),
        bd.op(Op::IToF, {bd.op(Op::IMul, {bd.time(), bd.constI(3)})}),
        bd.op(Op::Floor, {bd.op(Op::Neg, {half})}),
        bd.op(Op::Abs, {bd.op(Op::Log, {half})}),
        bd.div(bd.op(Op::Sqrt, {two}), bd.op(Op::Exp, {half})),
    };
    for (int k = 0; k < 8; ++k)
      bd.store(out, bd.constI(k), vals[k]);
    std::vector<double> O(8);
    std::vector<float> Of(8);
    void *bufs[] = {prec == Precision::F64 ? static_cast<void *>(O.data()) : Of.data()};
    interpret(m, 0, bufs, nullptr, 7);
    if (prec == Precision::F32)
      for (int k = 0; k < 8; ++k)
        O[k] = Of[k];
    double tol = prec == Precision::F64 ? 1e-15 : 1e-6;
    CHECK(O[0] == Approx(std::sqrt(2.0)).epsilon(tol));
    CHECK(O[1] == Approx(std::tanh(0.5)).epsilon(tol));
    CHECK(O[2] == 0.5);
    CHECK(O[3] == 0.5);
    CHECK(O[4] == 21);
    CHECK(O[5] == -1);
    CHECK(O[6] == Approx(std::log(2.0)).epsilon(tol));
    CHECK(O[7] == Approx(std::sqrt(2.0) / std::exp(0.5)).epsilon(tol));
  }
}

TEST_CASE("interpreter: nested loops (matrix-vector product)", "[ir][interp]") {
  Module m;
  int u = addSet(m, "unit"), in = addSet(m, "input");
  int w = addBuffer(m, buf("w", Role::Param, {u, in}));
  int v = addBuffer(m, buf("v", Role::Temp, {in}));
  int h = addBuffer(m, buf("h", Role::Temp, {u}));
  m.kernels.emplace_back();
  Builder bd(m, m.kernels[0]);
  ValueId i = bd.beginLoop(u);
  ValueId acc = bd.local(0.0);
  ValueId j = bd.beginLoop(in);
  ValueId wij = bd.load(w, bd.op(Op::IAdd, {bd.op(Op::IMul, {i, bd.size(in)}), j}));
  bd.localUpdate(Op::LocalAdd, acc, bd.mul(wij, bd.load(v, j)));
  bd.endLoop();
  bd.store(h, i, bd.localGet(acc));
  bd.endLoop();
  std::vector<double> W = {1, 2, 3, 4, 5, 6}, V = {1, 10, 100}, H(2);
  void *bufs[] = {W.data(), V.data(), H.data()};
  int64_t sizes[] = {2, 3};
  interpret(m, 0, bufs, sizes, 0);
  CHECK(H[0] == 321);
  CHECK(H[1] == 654);
}
