// Which temporaries of the step are kept per step instead of recomputed by
// its adjoint (docs/architecture.md, "Kept temporaries"): the per-element
// reductions, such as a layer's activations tanh(W x + b), whose replay
// costs a matrix-vector product; cheap temporaries are still recomputed.
#include <map>
#include <set>

#include "autodiff/Differentiate.h"
#include "ir/Walk.h"

namespace evoc::autodiff {

using namespace ir;

namespace {

// Whether `v`, defined in block `b` (or above it), depends inside `b` on the
// final value of a local declared in `b` and updated in a loop nested in `b`:
// one reduction per iteration of the loop around `b`.
bool reducesPerElement(const Block &b, ValueId v,
                       const std::unordered_map<ValueId, const Inst *> &defs,
                       const std::set<ValueId> &nestedSlots, std::set<ValueId> &seen) {
  if (!seen.insert(v).second)
    return false;
  auto it = defs.find(v);
  if (it == defs.end()) // defined outside `b`: computed once, not per element
    return false;
  const Inst &in = *it->second;
  if (in.op == Op::LocalGet)
    return nestedSlots.count(in.args[0]) > 0;
  if (in.op == Op::Loop || in.op == Op::Local)
    return false;
  for (ValueId a : in.args)
    if (reducesPerElement(b, a, defs, nestedSlots, seen))
      return true;
  return false;
}

// The Temp buffers `b` (and the blocks nested in it) stores a per-element
// reduction into.
void findReductionStores(const Block &b, std::set<int> &out) {
  // Values of nested blocks are out of scope in `b`'s own instructions, so
  // the definitions of `b` and below are those of `b` where it matters.
  const std::unordered_map<ValueId, const Inst *> defs = definitions(b);
  std::set<ValueId> declared, nestedSlots;
  for (const auto &ip : b.insts) {
    if (ip->op == Op::Local)
      declared.insert(ip->result);
    if (ip->op == Op::Loop)
      walk(*ip->body, [&](const Inst &in) {
        if (isLocalOp(in.op) && in.op != Op::Local && in.op != Op::LocalGet &&
            declared.count(in.args[0]))
          nestedSlots.insert(in.args[0]);
      });
  }
  for (const auto &ip : b.insts) {
    if (ip->op == Op::Loop)
      findReductionStores(*ip->body, out);
    std::set<ValueId> seen;
    if (ip->op == Op::Store && reducesPerElement(b, ip->args[1], defs, nestedSlots, seen))
      out.insert(ip->buffer);
  }
}

} // namespace

void planTape(Module &m) {
  int step = -1;
  for (size_t k = 0; k < m.kernels.size(); ++k)
    if (m.kernels[k].kind == KernelKind::Step && step < 0)
      step = static_cast<int>(k);
  if (step < 0)
    return;
  std::set<int> candidates;
  findReductionStores(m.kernels[size_t(step)].body, candidates);
  // Only what the step alone writes, with plain stores: the runtime keeps
  // one copy per step, and an accumulated temp is cheap to recompute.
  std::set<int> excluded;
  for (size_t k = 0; k < m.kernels.size(); ++k) {
    const bool isStep = static_cast<int>(k) == step;
    walk(m.kernels[k].body, [&](const Inst &in) {
      if (in.buffer < 0)
        return;
      if (!isStep || in.op == Op::AccAdd)
        excluded.insert(in.buffer);
    });
  }
  for (int b : candidates) {
    Buffer &B = m.buffers[size_t(b)];
    if (B.role == Role::Temp && B.elem == Type::F && !excluded.count(b))
      B.tape = true;
  }
}

} // namespace evoc::autodiff
