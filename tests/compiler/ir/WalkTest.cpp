// The IR toolkit: walks, definitions, use replacement, cloning, and the
// builder's insertion anywhere.
#include <catch2/catch.hpp>

#include <vector>

#include "ir/Builder.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "ir/Walk.h"

using namespace evoc::ir;

namespace {

/// A kernel with a loop nested in a loop:
///   %1 = constf 2; loop point %2 { %3 = itof %2; loop point %4 { %5 = mul %3, %1 } }
Module nested() {
  Module m;
  addSet(m, "point");
  Builder b(m, addKernel(m, "k"));
  ValueId two = b.constF(2);
  ValueId i = b.beginLoop(0);
  ValueId fi = b.op(Op::IToF, {i});
  b.beginLoop(0);
  b.mul(fi, two);
  b.endLoop();
  b.endLoop();
  return m;
}

} // namespace

TEST_CASE("walk: every instruction in program order, loop bodies included", "[ir][walk]") {
  Module m = nested();
  std::vector<Op> ops;
  walk(static_cast<const Block &>(m.kernels[0].body),
       [&](const Inst &in) { ops.push_back(in.op); });
  CHECK(ops == std::vector<Op>{Op::ConstF, Op::Loop, Op::IToF, Op::Loop, Op::Mul});
  // A mutable walk can change instructions in place.
  walk(m.kernels[0].body, [](Inst &in) {
    if (in.op == Op::Mul)
      in.op = Op::Add;
  });
  const Inst &inner = *m.kernels[0].body.insts[1]->body->insts[1]->body->insts[0];
  CHECK(inner.op == Op::Add);
}

TEST_CASE("definitions and replaceUses reach into nested loops", "[ir][walk]") {
  Module m = nested();
  Kernel &k = m.kernels[0];
  auto defs = definitions(k.body);
  REQUIRE(defs.count(5));
  CHECK(defs.at(5)->op == Op::Mul);
  CHECK(defs.at(1)->op == Op::ConstF);
  CHECK_FALSE(defs.count(2)); // a loop's element index has no defining instruction
  std::vector<ValueId> repl(k.nextValue, 0);
  repl[3] = 1; // chains are followed: 3 -> 1
  replaceUses(k.body, repl);
  const Inst &mul = *defs.at(5);
  CHECK(mul.args == std::vector<ValueId>{1, 1});
}

TEST_CASE("cloneInst and ir::clone copy deeply", "[ir][walk]") {
  Module m = nested();
  const Inst &loop = *m.kernels[0].body.insts[1];
  std::unique_ptr<Inst> c = cloneInst(loop);
  REQUIRE(c->body);
  CHECK(c->body.get() != loop.body.get());
  CHECK(c->body->arg == loop.body->arg);
  c->body->insts[0]->op = Op::Neg; // the original is untouched
  CHECK(loop.body->insts[0]->op == Op::IToF);
  Module copy = clone(m);
  CHECK(toString(copy) == toString(m));
}

TEST_CASE("builder: insertion before any position of any block", "[ir][walk][builder]") {
  Module m = nested();
  Kernel &k = m.kernels[0];
  Builder b(m, k);
  // Before the outer loop: a new loop with one instruction.
  b.setInsertPoint(k.body, 1);
  ValueId j = b.beginLoop(0);
  b.op(Op::IToF, {j});
  b.endLoop();
  ValueId c = b.constF(3); // after the new loop, still before the old one
  REQUIRE(k.body.insts.size() == 4);
  CHECK(k.body.insts[0]->op == Op::ConstF);
  CHECK(k.body.insts[1]->op == Op::Loop);
  CHECK(k.body.insts[1]->body->arg == j);
  CHECK(k.body.insts[2]->result == c);
  CHECK(k.body.insts[3]->body->insts[0]->op == Op::IToF);
  // Inside the old loop's body, at its start: an inserted clone keeps its id.
  Block &body = *k.body.insts[3]->body;
  b.setInsertPoint(body, 0);
  std::unique_ptr<Inst> cl = cloneInst(*k.body.insts[2]);
  cl->result = b.newValue(Type::F);
  const ValueId id = cl->result;
  b.insert(std::move(cl));
  CHECK(body.insts[0]->result == id);
  CHECK(b.def(id) == body.insts[0].get());
  CHECK(verify(m).empty());
}
