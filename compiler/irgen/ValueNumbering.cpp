// ValueNumbering: hash-consing of the emitted instructions' structure.
#include "irgen/ValueNumbering.h"

#include <cstring>

namespace evoc::irgen {

namespace {

/// Buffers no kernel writes: a load of one gives the same value wherever it
/// runs in the kernel.
bool readOnly(ir::Role r) {
  switch (r) {
  case ir::Role::State:
  case ir::Role::Body:
  case ir::Role::Param:
  case ir::Role::Command:
  case ir::Role::Window:
    return true;
  case ir::Role::NextState:
  case ir::Role::Temp:
  case ir::Role::Output:
  case ir::Role::Adjoint:
    return false;
  }
  return false;
}

} // namespace

const ir::Inst *ValueNumbering::structural(ir::ValueId v) const {
  const ir::Inst *i = b_.def(v);
  if (!i)
    return nullptr;
  if (ir::isPure(i->op))
    return i;
  if (i->op == ir::Op::Load && i->buffer >= 0 && size_t(i->buffer) < m_.buffers.size() &&
      readOnly(m_.buffers[size_t(i->buffer)].role))
    return i;
  return nullptr;
}

uint64_t ValueNumbering::numberOf(ir::ValueId v, const ir::Inst *i) {
  uint64_t n;
  if (!i) {
    n = next_++;
  } else {
    uint64_t fbits = 0;
    static_assert(sizeof fbits == sizeof i->f);
    std::memcpy(&fbits, &i->f, sizeof fbits);
    std::vector<uint64_t> key = {uint64_t(i->op),
                                 uint64_t(i->type),
                                 fbits,
                                 uint64_t(i->i),
                                 uint64_t(int64_t(i->buffer)),
                                 uint64_t(int64_t(i->set))};
    for (ir::ValueId a : i->args)
      key.push_back(cached(a));
    auto [it, inserted] = table_.emplace(std::move(key), next_);
    if (inserted)
      ++next_;
    n = it->second;
  }
  if (cache_.size() <= v)
    cache_.resize(size_t(v) + 1, 0);
  cache_[v] = n;
  return n;
}

uint64_t ValueNumbering::number(ir::ValueId v) {
  if (uint64_t n = cached(v))
    return n;
  // Operands first, without recursion: a kernel's chains can be long.
  std::vector<ir::ValueId> stack = {v};
  while (!stack.empty()) {
    ir::ValueId top = stack.back();
    if (cached(top)) {
      stack.pop_back();
      continue;
    }
    const ir::Inst *i = structural(top);
    bool ready = true;
    if (i)
      for (ir::ValueId a : i->args)
        if (!cached(a)) {
          stack.push_back(a);
          ready = false;
        }
    if (ready) {
      numberOf(top, i);
      stack.pop_back();
    }
  }
  return cached(v);
}

} // namespace evoc::irgen
