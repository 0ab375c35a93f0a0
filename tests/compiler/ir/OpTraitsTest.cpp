// The op traits declared in EVOC_IR_OPS: what the passes rely on.
#include <catch2/catch.hpp>

#include <set>

#include "ir/IR.h"

using namespace evoc::ir;

namespace {
std::set<Op> allOps() {
  return {
#define EVOC_X(Name, mnemonic, nargs, type, traits) Op::Name,
      EVOC_IR_OPS(EVOC_X)
#undef EVOC_X
  };
}
} // namespace

TEST_CASE("op traits: pure ops have a result and touch neither memory nor locals", "[ir][traits]") {
  for (Op op : allOps()) {
    INFO(opName(op));
    if (isPure(op)) {
      CHECK(opResultType(op) != Type::None);
      CHECK_FALSE(isMemoryOp(op));
      CHECK_FALSE(isLocalOp(op));
    }
    // Every op with a value result is pure except the two that read state.
    if (opResultType(op) != Type::None && op != Op::Load && op != Op::LocalGet)
      CHECK(isPure(op));
    if (isLocalUpdate(op))
      CHECK(isLocalOp(op));
  }
  CHECK_FALSE(isPure(Op::Load));
  CHECK_FALSE(isPure(Op::LocalGet));
  CHECK_FALSE(isPure(Op::Loop));
}

TEST_CASE("op traits: the memory, local and costly classes", "[ir][traits]") {
  std::set<Op> memory, local, costly;
  for (Op op : allOps()) {
    if (isMemoryOp(op))
      memory.insert(op);
    if (isLocalOp(op))
      local.insert(op);
    if (isCostly(op))
      costly.insert(op);
  }
  CHECK(memory == std::set<Op>{Op::Load, Op::Store, Op::AccAdd});
  CHECK(local == std::set<Op>{Op::Local, Op::LocalAdd, Op::LocalMax, Op::LocalMin, Op::LocalGet});
  CHECK(costly ==
        std::set<Op>{Op::Div, Op::Pow, Op::Sin, Op::Cos, Op::Tanh, Op::Exp, Op::Log, Op::Sqrt});
}

TEST_CASE("op traits: the FLOP class, and the count it gives", "[ir][traits]") {
  std::set<Op> flops;
  for (Op op : allOps())
    if (isFlop(op))
      flops.insert(op);
  CHECK(flops == std::set<Op>{Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Sqrt, Op::Pow, Op::Sin,
                              Op::Cos, Op::Tanh, Op::Exp, Op::Log, Op::LocalAdd, Op::AccAdd});
  for (Op op : allOps())
    if (isCostly(op))
      CHECK(isFlop(op)); // every costly op is counted
}
