// Loop fission: which loops are split, and that split kernels compute the same.
#include <catch2/catch.hpp>

#include <cmath>

#include "codegen/cpu/CpuBackend.h"
#include "ir/Builder.h"
#include "ir/Interpreter.h"
#include "opt/Passes.h"

using namespace evoc;
using ir::Op;

namespace {

/// Row s of w * h, sum_u w[s * U + u] * h[u] (plus readBack[s] per term when
/// readBack >= 0), as a loop over U.
ir::ValueId matvecRow(ir::Builder &b, int w, int h, ir::ValueId s, int U, int readBack = -1) {
  ir::ValueId acc = b.local();
  ir::ValueId u = b.beginLoop(U);
  b.localUpdate(
      Op::LocalAdd, acc,
      b.mul(b.load(w, b.op(Op::IAdd, {b.op(Op::IMul, {s, b.size(U)}), u})), b.load(h, u)));
  if (readBack >= 0)
    b.localUpdate(Op::LocalAdd, acc, b.load(readBack, s));
  b.endLoop();
  return b.localGet(acc);
}

/// A module of one kernel named `name` over the sets spring, unit and point,
/// its buffers added with buf().
struct OneKernel {
  ir::Module m;
  int S, U, P;
  explicit OneKernel(const char *name) {
    m.name = name;
    S = ir::addSet(m, "spring"), U = ir::addSet(m, "unit"), P = ir::addSet(m, "point");
    ir::addKernel(m, name);
  }
  int buf(const char *n, ir::Role r, std::vector<int> sets, ir::Type t = ir::Type::F) {
    return ir::addBuffer(m, n, r, std::move(sets), t);
  }
};

/// for s: acc = sum_u w[s * U + u] * h[u]; out[s] = tanh(acc + b[s]) (+ out read back if asked).
ir::Module matvecTanh(bool tailReadsBack) {
  OneKernel k("act");
  const int S = k.S, U = k.U;
  int w = k.buf("w", ir::Role::Param, {S, U}), h = k.buf("h", ir::Role::State, {U});
  int bias = k.buf("b", ir::Role::Param, {S}), out = k.buf("out", ir::Role::NextState, {S});
  ir::Builder b(k.m, k.m.kernels[0]);
  ir::ValueId s = b.beginLoop(S);
  // the first part reads what the tail writes, if asked
  ir::ValueId pre = b.add(matvecRow(b, w, h, s, U, tailReadsBack ? out : -1), b.load(bias, s));
  b.store(out, s, b.op(Op::Tanh, {b.mul(pre, b.constF(0.5))}));
  b.endLoop();
  return std::move(k.m);
}

/// The spring loop as irgen + loop fusion leave it: the activation's tanh,
/// stored and read back, then a gather and a scatter-add through endpoints.
ir::Module actThenScatter() {
  OneKernel k("act_scatter");
  const int S = k.S, U = k.U, P = k.P;
  int w = k.buf("w", ir::Role::Param, {S, U}), h = k.buf("h", ir::Role::State, {U});
  int act = k.buf("act", ir::Role::Temp, {S}), x = k.buf("x", ir::Role::State, {P});
  int a = k.buf("a", ir::Role::Body, {S}, ir::Type::I), dv = k.buf("dv", ir::Role::Temp, {P});
  ir::Builder b(k.m, k.m.kernels[0]);
  ir::ValueId s = b.beginLoop(S);
  b.store(act, s, b.op(Op::Tanh, {matvecRow(b, w, h, s, U)}));
  ir::ValueId end = b.load(a, s);
  ir::ValueId len = b.op(Op::Sqrt, {b.add(b.op(Op::Abs, {b.load(x, end)}), b.constF(1))});
  b.accAdd(dv, end, b.div(b.load(act, s), len));
  b.endLoop();
  return std::move(k.m);
}

/// The shape of an adjoint's spring loop: divisions and a root of gathered,
/// read-only values, then a scatter-add through endpoints and an inner loop
/// that uses the result (nothing for the three-way split to take).
ir::Module divChainScatter() {
  OneKernel k("div_chain");
  const int S = k.S, U = k.U, P = k.P;
  int x = k.buf("x", ir::Role::State, {P}), g = k.buf("g", ir::Role::State, {P});
  int a = k.buf("a", ir::Role::Body, {S}, ir::Type::I),
      c = k.buf("c", ir::Role::Body, {S}, ir::Type::I);
  // w accumulates a gradient: a Temp (a Step kernel may not write a Param
  // buffer, and the back end verifies fission's output).
  int h = k.buf("h", ir::Role::State, {U}), w = k.buf("w", ir::Role::Temp, {S, U});
  int out = k.buf("out", ir::Role::Temp, {P});
  ir::Builder b(k.m, k.m.kernels[0]);
  ir::ValueId s = b.beginLoop(S);
  ir::ValueId ia = b.load(a, s), ic = b.load(c, s);
  ir::ValueId d = b.op(Op::Sub, {b.load(x, ia), b.load(x, ic)});
  ir::ValueId len = b.op(Op::Sqrt, {b.add(b.mul(d, d), b.constF(1e-4))});
  ir::ValueId q = b.div(b.op(Op::Sub, {b.load(g, ia), b.load(g, ic)}), len);
  ir::ValueId r = b.div(b.mul(q, d), len);
  b.accAdd(out, ia, r);
  b.accAdd(out, ic, b.op(Op::Neg, {r}));
  ir::ValueId u = b.beginLoop(U);
  b.accAdd(w, b.op(Op::IAdd, {b.op(Op::IMul, {s, b.size(U)}), u}), b.mul(r, b.load(h, u)));
  b.endLoop();
  b.endLoop();
  return std::move(k.m);
}

} // namespace

TEST_CASE("loop fission hoists a division chain of read-only data out of a scatter loop",
          "[llvm][fission]") {
  ir::Module m = divChainScatter();
  ir::Module split = ir::clone(m);
  REQUIRE(opt::fissionLoops(split) == 1);
  const ir::Block &body = split.kernels[0].body;
  REQUIRE(body.insts.size() == 2); // the hoisted loop, then the original
  auto count = [](const ir::Block &bl, Op op) {
    int n = 0;
    for (const auto &in : bl.insts)
      n += in->op == op;
    return n;
  };
  CHECK(count(*body.insts[0]->body, Op::Div) == 2);
  CHECK(count(*body.insts[0]->body, Op::Sqrt) == 1);
  CHECK(count(*body.insts[0]->body, Op::AccAdd) == 0);
  CHECK(count(*body.insts[1]->body, Op::Div) == 1);    // q: computed, no longer used
  CHECK(split.buffers.size() == m.buffers.size() + 2); // r and -r cross (scatter values)

  const int64_t sizes[] = {7, 3, 5};
  std::vector<double> x = {0.1, -0.7, 2.5, 0, 1}, g = {1, -2, 0.5, 0.25, 3}, h = {0.5, -1, 2};
  std::vector<int32_t> a = {0, 4, 2, 2, 1, 3, 0}, c = {1, 0, 3, 4, 4, 2, 2};
  std::vector<double> w1(21, 0.5), out1(5, 0), w2(21, 0.5), out2(5, 0), r(7), negR(7);
  void *b1[] = {x.data(), g.data(), a.data(), c.data(), h.data(), w1.data(), out1.data()};
  void *b2[] = {x.data(),  g.data(),    a.data(), c.data(),   h.data(),
                w2.data(), out2.data(), r.data(), negR.data()};
  ir::interpret(m, 0, b1, sizes, 0);
  ir::interpret(split, 0, b2, sizes, 0);
  CHECK(out1 == out2);
  CHECK(w1 == w2);

  codegen::CompileOptions opts;
  opts.useCache = false;
  auto exe = codegen::cpu::compileCpu(m, opts); // fast mode: fission and hoisting on
  std::vector<double> w3(21, 0.5), out3(5, 0);
  void *b3[] = {x.data(), g.data(), a.data(), c.data(), h.data(), w3.data(), out3.data()};
  exe->run(0, b3, sizes, 0);
  for (size_t i = 0; i < out1.size(); ++i)
    CHECK(out3[i] == Approx(out1[i]).epsilon(1e-13));
  for (size_t i = 0; i < w1.size(); ++i)
    CHECK(w3[i] == Approx(w1[i]).epsilon(1e-13));
}

TEST_CASE("loop fission distributes a reduction, its tanh and a scatter into three loops",
          "[llvm][fission]") {
  ir::Module m = actThenScatter();
  ir::Module split = ir::clone(m);
  REQUIRE(opt::fissionLoops(split) == 1);
  REQUIRE(split.kernels[0].body.insts.size() == 3);
  const ir::Block &mid = *split.kernels[0].body.insts[1]->body;
  bool tanhInMiddle = false;
  for (const auto &in : mid.insts)
    tanhInMiddle |= in->op == Op::Tanh;
  CHECK(tanhInMiddle);
  const int64_t sizes[] = {9, 4, 5};
  std::vector<double> w(36), h = {0.5, -1, 0.25, 2}, x = {0.1, -0.7, 2.5, 0, 1};
  std::vector<int32_t> a = {0, 4, 2, 2, 1, 3, 0, 4, 1};
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = 0.05 * double(i % 7) - 0.1;
  std::vector<double> act1(9), dv1(5), act2(9), dv2(5);
  std::vector<std::vector<double>> scratch(split.buffers.size() - m.buffers.size(),
                                           std::vector<double>(9));
  std::vector<void *> b1 = {w.data(), h.data(), act1.data(), x.data(), a.data(), dv1.data()};
  std::vector<void *> b2 = {w.data(), h.data(), act2.data(), x.data(), a.data(), dv2.data()};
  for (auto &sc : scratch)
    b2.push_back(sc.data());
  ir::interpret(m, 0, b1.data(), sizes, 0);
  ir::interpret(split, 0, b2.data(), sizes, 0);
  CHECK(act1 == act2);
  CHECK(dv1 == dv2);
}

TEST_CASE("loop fission splits an expensive elementwise tail off a reduction loop",
          "[llvm][fission]") {
  ir::Module m = matvecTanh(false);
  ir::Module split = ir::clone(m);
  REQUIRE(opt::fissionLoops(split) == 1);
  const ir::Block &body = split.kernels[0].body;
  REQUIRE(body.insts.size() == 2); // the reduction loop, then the tail loop
  CHECK(body.insts[0]->op == Op::Loop);
  CHECK(body.insts[1]->op == Op::Loop);
  CHECK(split.buffers.size() == m.buffers.size() + 1); // one value crosses: the sum
  const ir::Block &tail = *body.insts[1]->body;
  CHECK(tail.insts.front()->op == Op::Load); // the sum, then b[s]: b is never written
  CHECK(tail.insts.back()->op == Op::Store);

  // Same results on the interpreter, the scratch buffer given storage here.
  const int64_t sizes[] = {5, 7};
  std::vector<double> w(35), h(7), bias(5), out1(5), out2(5), scratch(5);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = 0.1 * double(i % 11) - 0.4;
  for (size_t i = 0; i < h.size(); ++i)
    h[i] = 0.3 * double(i) - 1;
  for (size_t i = 0; i < bias.size(); ++i)
    bias[i] = 0.05 * double(i);
  void *b1[] = {w.data(), h.data(), bias.data(), out1.data()};
  void *b2[] = {w.data(), h.data(), bias.data(), out2.data(), scratch.data()};
  ir::interpret(m, 0, b1, sizes, 0);
  ir::interpret(split, 0, b2, sizes, 0);
  for (size_t i = 0; i < out1.size(); ++i)
    CHECK(out1[i] == out2[i]);
}

TEST_CASE("loop fission leaves loops alone where splitting would change them", "[llvm][fission]") {
  ir::Module m = matvecTanh(true); // the reduction reads the tail's output buffer
  CHECK(opt::fissionLoops(m) == 0);
}

TEST_CASE("split loops compile and agree with the interpreter, on the stack and on the heap",
          "[llvm][fission]") {
  ir::Module m = matvecTanh(false);
  codegen::CompileOptions opts;
  opts.useCache = false;
  auto exe = codegen::cpu::compileCpu(m, opts);      // fast mode: fission on
  for (int64_t nS : {int64_t(37), int64_t(40000)}) { // scratch above 16384 elements: heap
    const int64_t sizes[] = {nS, 3};
    const auto n = static_cast<size_t>(nS);
    std::vector<double> w(3 * n), h = {0.5, -1.25, 2}, bias(n), ref(n), got(n);
    for (size_t i = 0; i < w.size(); ++i)
      w[i] = 0.01 * double(i % 97) - 0.3;
    for (size_t i = 0; i < bias.size(); ++i)
      bias[i] = 0.001 * double(i % 13);
    void *b1[] = {w.data(), h.data(), bias.data(), ref.data()};
    void *b2[] = {w.data(), h.data(), bias.data(), got.data()};
    ir::interpret(m, 0, b1, sizes, 0);
    exe->run(0, b2, sizes, 0);
    double worst = 0;
    for (size_t i = 0; i < ref.size(); ++i)
      worst = std::max(worst, std::fabs(got[i] - ref[i]));
    INFO(nS << " springs: largest difference " << worst);
    CHECK(worst < 1e-14);
  }
}
