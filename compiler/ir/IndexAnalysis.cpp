// The one analysis of buffer indices (see IndexAnalysis.h).
#include "ir/IndexAnalysis.h"

#include <algorithm>

#include "ir/Walk.h"

namespace evoc::ir {

Extent Extent::operator*(const Extent &o) const {
  Extent r{c * o.c, sets};
  r.sets.insert(r.sets.end(), o.sets.begin(), o.sets.end());
  std::sort(r.sets.begin(), r.sets.end());
  return r;
}

IndexAnalysis::IndexAnalysis(const Block &scope) : def_(definitions(scope)) {
  walk(scope, [&](const Inst &in) {
    if (in.op == Op::Loop)
      loopSet_[in.body->arg] = in.set;
  });
}

const Inst *IndexAnalysis::def(ValueId v) const {
  auto it = def_.find(v);
  return it == def_.end() ? nullptr : it->second;
}

std::optional<int> IndexAnalysis::loopSet(ValueId v) const {
  auto it = loopSet_.find(v);
  return it == loopSet_.end() ? std::nullopt : std::optional<int>(it->second);
}

std::optional<Extent> IndexAnalysis::multiplier(ValueId v) const {
  const Inst *d = def(v);
  if (!d)
    return std::nullopt;
  if (d->op == Op::ConstI && d->i >= 1)
    return Extent{d->i, {}};
  if (d->op == Op::Size)
    return Extent{1, {d->set}};
  if (d->op == Op::IMul) {
    auto a = multiplier(d->args[0]), b = multiplier(d->args[1]);
    if (a && b)
      return *a * *b;
  }
  return std::nullopt;
}

std::optional<Extent> IndexAnalysis::bound(ValueId v) const {
  if (auto s = loopSet(v))
    return Extent{1, {*s}};
  const Inst *d = def(v);
  if (!d)
    return std::nullopt;
  if (d->op == Op::ConstI && d->i >= 0)
    return Extent{d->i + 1, {}};
  if (d->op == Op::IMul)
    for (int o = 0; o < 2; ++o) {
      auto x = bound(d->args[o]);
      auto m = multiplier(d->args[1 - o]);
      if (x && m)
        return *x * *m;
    }
  if (d->op == Op::IAdd)
    for (int o = 0; o < 2; ++o)
      if (auto s = scaled(d->args[o], d->args[1 - o], [&](ValueId x) { return bound(x); }))
        return s;
  return std::nullopt;
}

/// For mulv * ... + r: with mulv = x * M and r in [0, M), f(x) * M.
template <class Fn>
std::optional<Extent> IndexAnalysis::scaled(ValueId mulv, ValueId r, Fn f) const {
  const Inst *d = def(mulv);
  if (!d || d->op != Op::IMul)
    return std::nullopt;
  auto rb = bound(r);
  if (!rb)
    return std::nullopt;
  for (int o = 0; o < 2; ++o) {
    auto m = multiplier(d->args[1 - o]);
    if (!m || !rb->leq(*m))
      continue;
    if (auto x = f(d->args[o]))
      return *x * *m;
  }
  return std::nullopt;
}

std::optional<Extent> IndexAnalysis::ownedSlice(ValueId v, ValueId e) const {
  if (v == e)
    return Extent{1, {}};
  const Inst *d = def(v);
  if (!d)
    return std::nullopt;
  if (d->op == Op::IMul)
    for (int o = 0; o < 2; ++o) {
      auto m = multiplier(d->args[1 - o]);
      auto x = ownedSlice(d->args[o], e);
      if (m && x)
        return *x * *m;
    }
  if (d->op == Op::IAdd)
    for (int o = 0; o < 2; ++o)
      if (auto s = scaled(d->args[o], d->args[1 - o], [&](ValueId x) { return ownedSlice(x, e); }))
        return s;
  return std::nullopt;
}

bool IndexAnalysis::ownElement(ValueId v, ValueId e, int comps) const {
  std::optional<Extent> s = ownedSlice(v, e);
  return s && *s == Extent{comps, {}};
}

bool IndexAnalysis::ownedByPair(ValueId v, ValueId e, ValueId j) const {
  const Inst *d = def(v);
  if (!d)
    return false;
  if (d->op == Op::IMul)
    for (int o = 0; o < 2; ++o)
      if (multiplier(d->args[1 - o]) && ownedByPair(d->args[o], e, j))
        return true;
  if (d->op != Op::IAdd)
    return false;
  for (int o = 0; o < 2; ++o) {
    const Inst *mul = def(d->args[o]);
    ValueId r = d->args[1 - o];
    auto rb = bound(r);
    if (!mul || mul->op != Op::IMul || !rb)
      continue;
    for (int q = 0; q < 2; ++q) {
      ValueId x = mul->args[q];
      auto m = multiplier(mul->args[1 - q]);
      if (!m || !rb->leq(*m))
        continue;
      if (ownedSlice(x, e) && ownedSlice(r, j))
        return true;
      if (ownedByPair(x, e, j))
        return true;
    }
  }
  return false;
}

bool IndexAnalysis::affine(ValueId v, ValueId e) const { return affine(v, e, 0); }

bool IndexAnalysis::affine(ValueId v, ValueId e, int depth) const {
  if (v == e)
    return true;
  const Inst *d = def(v);
  if (!d)
    return true; // defined outside the scope: invariant in it
  if (depth > 16)
    return false;
  if (d->op == Op::ConstI || d->op == Op::Size)
    return true;
  if (d->op == Op::IAdd || d->op == Op::ISub || d->op == Op::IMul) {
    for (ValueId a : d->args)
      if (!affine(a, e, depth + 1))
        return false;
    return true;
  }
  return false;
}

bool IndexAnalysis::bodyInvariant(const Module &m, ValueId v) const {
  if (loopSet(v))
    return true;
  const Inst *d = def(v);
  if (!d)
    return false;
  switch (d->op) {
  case Op::ConstI:
  case Op::Size:
    return true;
  EVOC_IR_CASE_INT:
    return bodyInvariant(m, d->args[0]) && bodyInvariant(m, d->args[1]);
  case Op::Load:
    return m.buffers[d->buffer].role == Role::Body && m.buffers[d->buffer].elem == Type::I &&
           bodyInvariant(m, d->args[0]);
  case Op::ConstF:
  case Op::ConstB:
  case Op::Time:
  case Op::Select:
  case Op::IToF:
  case Op::FToI:
  case Op::Store:
  case Op::AccAdd:
  case Op::Local:
  case Op::LocalGet:
  case Op::Loop:
  EVOC_IR_CASE_FLOAT_BINARY:
  EVOC_IR_CASE_FLOAT_UNARY:
  EVOC_IR_CASE_COMPARE:
  EVOC_IR_CASE_LOGIC:
  EVOC_IR_CASE_LOCAL_UPDATE:
    return false;
  }
  return false;
}

} // namespace evoc::ir
