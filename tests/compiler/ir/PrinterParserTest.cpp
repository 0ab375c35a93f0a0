// Printer golden excerpts, printer -> parser -> printer round trips, parse errors.
#include <catch2/catch.hpp>

#include "ir/Builder.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "support/Error.h"

using namespace evoc::ir;

namespace {
// A small step-like module: gathers, scatter-adds, a reduction, a select.
Module sample() {
  Module m;
  m.name = "sample";
  m.files = {"examples/eldir.evo", "<--set world.physics>"};
  int point = addSet(m, "point");
  int spring = addSet(m, "spring");
  m.sets[point].fromBody = true;
  m.sets[spring].fromBody = true;
  int unit = addSet(m, "unit");
  m.sets[unit].base = 32;
  m.sets[unit].terms = {{point, 4}};
  m.sets[unit].layout = {{-1, 10}, {point, 4}, {-1, 22}};
  Buffer x{"point.x", Type::F, Role::State, {point}, 2, "point.x"};
  x.differentiable = true;
  int bx = addBuffer(m, x);
  int ba = addBuffer(m, Buffer{"spring.a", Type::I, Role::Body, {spring}});
  int bf = addBuffer(m, Buffer{"point.f", Type::F, Role::Temp, {point}, 2});
  int bn = addBuffer(m, Buffer{"point.x.next", Type::F, Role::NextState, {point}, 2});
  Buffer w{"mlp.w1", Type::F, Role::Param, {unit, point}};
  w.init = "xavier_normal";
  w.initGain = 2;
  addBuffer(m, w);
  Buffer xa{"point.x.adj", Type::F, Role::Adjoint, {point}, 2};
  xa.primal = bx;
  addBuffer(m, xa);
  Kernel &k = addKernel(m, "step");
  Builder b(m, k);
  ValueId two = b.constI(2);
  ValueId s = b.beginLoop(spring);
  ValueId a = b.load(ba, s);
  ValueId xi = b.load(bx, b.op(Op::IMul, {a, two}));
  b.accAdd(bf, b.op(Op::IMul, {a, two}), b.op(Op::Neg, {xi}));
  b.endLoop();
  ValueId acc = b.local(-1.5e-300);
  ValueId p = b.beginLoop(point);
  ValueId i0 = b.op(Op::IMul, {p, two});
  ValueId f = b.load(bf, i0);
  b.localUpdate(Op::LocalMax, acc, f);
  ValueId c = b.op(Op::Lt, {f, b.constF(0.1)});
  b.store(bn, i0, b.op(Op::Select, {c, f, b.op(Op::Tanh, {f})}));
  b.endLoop();
  b.localGet(acc);
  return m;
}
} // namespace

TEST_CASE("printer: readable excerpts", "[ir][printer]") {
  std::string s = toString(sample());
  CHECK_THAT(s, Catch::Contains("module sample precision=f64\n"));
  CHECK_THAT(s, Catch::Contains("set unit base=32 terms=point*4 layout=-*10,point*4,-*22\n"));
  CHECK_THAT(s, Catch::Contains(
                    "buffer point.x elem=f role=state sets=point comps=2 field=point.x diff\n"));
  CHECK_THAT(s, Catch::Contains("buffer point.x.adj elem=f role=adjoint sets=point comps=2 "
                                "primal=point.x\n"));
  CHECK_THAT(s, Catch::Contains("  loop spring %2 {\n    %3 = load spring.a[%2]\n"));
  CHECK_THAT(s, Catch::Contains("    accadd point.f[%7], %6\n  }\n"));
  CHECK_THAT(s, Catch::Contains("  %8 = local -1.5e-300\n"));
  CHECK_THAT(s, Catch::Contains("    local.max %8, %11\n"));
  CHECK_THAT(s, Catch::Contains("    %15 = select %13, %11, %14\n"
                                "    store point.x.next[%10], %15\n"));
  CHECK_THAT(s, Catch::Contains("  %16 = local.get %8\n}\n"));
}

TEST_CASE("printer -> parser -> printer round trip", "[ir][parser]") {
  Module m = sample();
  std::string s1 = toString(m);
  Module p = parse(s1);
  CHECK(toString(p) == s1);
  CHECK(verify(p).empty());
  CHECK(p.kernels[0].nextValue == m.kernels[0].nextValue);
  CHECK(p.kernels[0].valueTypes == m.kernels[0].valueTypes);
  CHECK(p.buffers[5].primal == 0);
  CHECK(p.buffers[4].initGain == 2);
  CHECK(p.sets[2].layout == m.sets[2].layout);
}

TEST_CASE("parser: f32, windows, kernel attributes, exact floats", "[ir][parser]") {
  std::string s = "module m precision=f32\n"
                  "set point body\n"
                  "buffer loss elem=f role=output\n"
                  "buffer point.x elem=f role=state sets=point time=fixed at=7\n"
                  "kernel loss kind=lossstep window=3:-1 {\n"
                  "  %1 = constf 0.1\n"
                  "  %2 = consti 0\n"
                  "  %3 = constb true\n"
                  "  %4 = select %3, %1, %1\n"
                  "  accadd loss[%2], %4\n"
                  "}\n";
  Module m = parse(s);
  CHECK(m.precision == Precision::F32);
  CHECK(m.kernels[0].windowBegin == 3);
  CHECK(m.kernels[0].windowEnd == -1);
  CHECK(m.buffers[1].fixedTime == 7);
  CHECK(m.kernels[0].body.insts[0]->f == 0.1);
  CHECK(toString(m) == s);
  CHECK(verify(m).empty());
}

TEST_CASE("parser: errors name the line", "[ir][parser]") {
  auto bad = [](const std::string &s) {
    try {
      parse(s);
    } catch (const evoc::Error &e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(bad("module m\nkernel k kind=step {\n  %1 = frob %2\n}\n"),
             Catch::Contains("ir:3: unknown op 'frob'"));
  CHECK_THAT(bad("module m\nkernel k kind=step {\n  %1 = add %2, %3\n}\n"),
             Catch::Contains("ir:3: use of undefined value %2"));
  CHECK_THAT(bad("module m\nkernel k kind=step {\n  %1 = constf 1\n"),
             Catch::Contains("missing '}'"));
  CHECK_THAT(bad("module m\nbuffer b elem=f role=wat\n"), Catch::Contains("ir:2: bad role"));
}

TEST_CASE("clone is a deep copy", "[ir]") {
  Module m = sample();
  Module c = clone(m);
  CHECK(toString(c) == toString(m));
  c.kernels[0].body.insts[1]->body->insts.clear();
  CHECK(toString(c) != toString(m));
  CHECK(verify(m).empty());
}
