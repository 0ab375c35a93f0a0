// The IR toolkit: recursive walks, use replacement, definitions and cloning.
//
// Every pass and back end that visits the instructions of a kernel goes
// through these: a walk recurses into loop bodies by default (Halide's
// IRVisitor), so a new kind of nested block is handled in one place.
#pragma once

#include <memory>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "ir/IR.h"

namespace evoc::ir {

/// Calls f on every instruction of `b` in program order, recursing into a
/// loop's body right after the loop instruction itself. f takes `Inst &`
/// for a mutable block, `const Inst &` for a const one. f must not add or
/// remove instructions of the block being walked.
template <class F> void walk(const Block &b, F &&f);
template <class F> void walk(Block &b, F &&f);

/// Calls f on `in`, then walks its loop body, if it has one.
template <class F> void walk(const Inst &in, F &&f) {
  f(in);
  if (in.body)
    walk(static_cast<const Block &>(*in.body), f);
}
template <class F> void walk(Inst &in, F &&f) {
  f(in);
  if (in.body)
    walk(*in.body, f);
}

template <class F> void walk(const Block &b, F &&f) {
  for (const auto &ip : b.insts)
    walk(static_cast<const Inst &>(*ip), f);
}
template <class F> void walk(Block &b, F &&f) {
  for (auto &ip : b.insts)
    walk(*ip, f);
}

/// The instruction defining each value of `b` (recursively), loop element
/// indices excepted. A Local's slot id maps to its Local instruction.
std::unordered_map<ValueId, const Inst *> definitions(const Block &b);

/// Replaces every operand v of the instructions in `b` (recursively) by
/// repl[v] when repl[v] != 0, following chains.
void replaceUses(Block &b, const std::vector<ValueId> &repl);

/// A deep copy of one instruction: same op, operands, result id, literals,
/// buffer, set, location, and a copy of its loop body.
std::unique_ptr<Inst> cloneInst(const Inst &in);

} // namespace evoc::ir
