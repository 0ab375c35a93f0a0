// Which loop nests the CPU lowering may unroll and jam (see UnrollAndJam.h).
#include "codegen/cpu/UnrollAndJam.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "ir/Walk.h"

namespace evoc::codegen::cpu {

std::optional<size_t> jammableInner(const ir::Inst &loop) {
  using ir::Op;
  const ir::Block &body = *loop.body;
  std::optional<size_t> inner;
  for (size_t k = 0; k < body.insts.size(); ++k)
    if (body.insts[k]->op == Op::Loop) {
      if (inner)
        return std::nullopt; // two inner loops
      inner = k;
    }
  if (!inner)
    return std::nullopt;
  const ir::Block &in = *body.insts[*inner]->body;
  // The parts: 0 the prefix, 1 the inner loop, 2 the suffix.
  auto partOf = [&](size_t k) { return k < *inner ? 0 : k == *inner ? 1 : 2; };
  std::set<int> written[3], accessed[3];
  std::set<ir::ValueId> declared;       // locals declared inside the loop
  std::map<ir::ValueId, int> updatedIn; // local -> the one part that updates it, or -1
  for (size_t k = 0; k < body.insts.size(); ++k) {
    const int p = partOf(k);
    bool nested = false;
    ir::walk(*body.insts[k], [&](const ir::Inst &x) {
      if (x.op == Op::Loop) {
        nested |= &x != body.insts[k].get();
        return;
      }
      if (x.buffer >= 0) {
        accessed[p].insert(x.buffer);
        if (x.op == Op::Store || x.op == Op::AccAdd)
          written[p].insert(x.buffer);
      }
      if (x.op == Op::Local)
        declared.insert(x.result);
      if (ir::isLocalUpdate(x.op)) {
        auto [it, fresh] = updatedIn.emplace(x.args[0], p);
        if (!fresh && it->second != p)
          it->second = -1;
      }
    });
    if (nested)
      return std::nullopt; // a loop in the prefix, the suffix or the inner body
  }
  for (int p = 0; p < 3; ++p)
    for (int q = 0; q < 3; ++q)
      if (p != q)
        for (int b : written[p])
          if (accessed[q].count(b))
            return std::nullopt;
  // A local declared outside keeps its order of updates only if one part,
  // not the interleaved inner loops, updates it.
  for (auto [slot, part] : updatedIn)
    if (!declared.count(slot) && (part != 0 && part != 2))
      return std::nullopt;
  // The inner iterations of different rows interleave: each touches only
  // its own element of what it writes, and reads none of it.
  for (const auto &x : in.insts) {
    if ((x->op == Op::Store || x->op == Op::AccAdd) && x->args[0] != in.arg)
      return std::nullopt;
    if (x->op == Op::Load && written[1].count(x->buffer))
      return std::nullopt;
  }
  return inner;
}

int jamRows(const ir::Inst &loop, size_t inner, int lanes, int elemBytes,
            const RegisterFile &regs) {
  using ir::Op;
  using ir::Type;
  if (lanes == 1) // one episode: LLVM vectorises the inner loop, a value per row is a vector
    lanes = std::max(1, regs.vectorBytes / elemBytes);
  const ir::Block &in = *loop.body->insts.at(inner)->body;
  // Values of the outer body (and those of the inner body computed from
  // them alone, which LLVM hoists) are the row's invariants; masks are the
  // booleans computed from floats.
  std::unordered_map<ir::ValueId, bool> mask; // outer-body and invariant booleans
  std::set<ir::ValueId> invariant, used;
  std::unordered_map<ir::ValueId, Type> type;
  ir::walk(*loop.body, [&](const ir::Inst &x) {
    if (!x.result || x.op == Op::Local)
      return;
    type[x.result] = x.type;
    bool m = false;
    for (ir::ValueId a : x.args)
      m |= type.count(a) && (type[a] == Type::F || mask[a]);
    mask[x.result] = x.type == Type::B && m;
  });
  std::set<ir::ValueId> innerDefs;
  for (const auto &x : in.insts)
    if (x->result)
      innerDefs.insert(x->result);
  int accumulators = 0;
  for (const auto &x : in.insts) {
    bool inv = x->result && ir::isPure(x->op);
    for (ir::ValueId a : x->args)
      inv &= a != in.arg && (!innerDefs.count(a) || invariant.count(a));
    if (inv) {
      invariant.insert(x->result);
      continue;
    }
    if (ir::isLocalUpdate(x->op)) {
      ++accumulators;
      used.insert(x->args[1]);
    } else {
      used.insert(x->args.begin(), x->args.end());
    }
  }
  int floats = accumulators, masks = 0;
  for (ir::ValueId v : used) {
    if (v == in.arg || (innerDefs.count(v) && !invariant.count(v)) || !type.count(v))
      continue; // the inner index, a value of the inner iteration, or one from outside
    if (type[v] == Type::F)
      ++floats;
    else if (mask[v])
      ++masks;
  }
  // Registers per float value, and what every row shares: an inner input,
  // a broadcast weight, a temporary.
  const int per = std::max(1, (lanes * elemBytes + regs.vectorBytes - 1) / regs.vectorBytes);
  const int shared = 2 * per + 2;
  int rows = 1;
  for (int b = 2; b <= 8; ++b) {
    const int vecs = b * per * (floats + (regs.masks > 0 ? 0 : masks)) + shared;
    if (vecs > regs.vectors || (regs.masks > 0 && b * per * masks > regs.masks))
      break;
    rows = b;
  }
  return rows;
}

} // namespace evoc::codegen::cpu
