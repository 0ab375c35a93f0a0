// Which temporaries of the step are kept per step instead of recomputed by
// its adjoint (docs/architecture.md, "Kept temporaries"): the per-element
// reductions, such as a layer's activations tanh(W x + b), whose replay
// costs a matrix-vector product, the sums scattered into a temp (the forces
// on the points), whose replay costs a loop over the springs, and a layer's
// inputs x, which the weight gradient's window products need; cheap
// temporaries are still recomputed.
// And deferProducts, which turns step.adj's per-step accumulation of such a
// weight gradient into rows the runtime multiplies once per window.
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <tuple>

#include "autodiff/Differentiate.h"
#include "ir/Builder.h"
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

// The Temp buffers `b` multiplies with a parameter matrix in a reduction
// (sum_u W[s, u] * X[u]): the inputs whose outer products with the
// adjoint rows give W's gradient, which the runtime forms per window.
void findProductInputs(const Module &m, const Block &b, std::set<int> &out) {
  auto defs = definitions(b);
  for (const auto &ip : b.insts) {
    if (ip->op == Op::Loop)
      findProductInputs(m, *ip->body, out);
    if (ip->op != Op::LocalAdd)
      continue;
    auto it = defs.find(ip->args[1]);
    if (it == defs.end() || it->second->op != Op::Mul)
      continue;
    const Inst *l[2] = {nullptr, nullptr};
    for (int k = 0; k < 2; ++k)
      if (auto d = defs.find(it->second->args[size_t(k)]);
          d != defs.end() && d->second->op == Op::Load)
        l[k] = d->second;
    if (!l[0] || !l[1])
      continue;
    for (int k = 0; k < 2; ++k) {
      const Buffer &W = m.buffers[size_t(l[k]->buffer)], &X = m.buffers[size_t(l[1 - k]->buffer)];
      if (W.role == Role::Param && W.sets.size() == 2 && X.role == Role::Temp &&
          X.sets == std::vector<int>{W.sets[1]} && X.comps == 1)
        out.insert(l[1 - k]->buffer);
    }
  }
}

} // namespace

void planTape(Module &m, bool productInputs) {
  int step = -1;
  for (size_t k = 0; k < m.kernels.size(); ++k)
    if (m.kernels[k].kind == KernelKind::Step && step < 0)
      step = static_cast<int>(k);
  if (step < 0)
    return;
  std::set<int> candidates;
  findReductionStores(m.kernels[size_t(step)].body, candidates);
  if (productInputs)
    findProductInputs(m, m.kernels[size_t(step)].body, candidates);
  // And the sums the step scatters into a temp (the springs' forces on
  // their points, point.dv): replaying them costs step.adj a loop over the
  // springs with its square roots and divisions, only to find the values
  // the forward step had (the runtime zeroes their slot of the tape before
  // the step: the rollout contract's keptZero).
  walk(m.kernels[size_t(step)].body, [&](const Inst &in) {
    if (in.op == Op::AccAdd)
      candidates.insert(in.buffer);
  });
  // Only what the step alone writes: the runtime keeps one copy per step.
  std::set<int> excluded;
  for (size_t k = 0; k < m.kernels.size(); ++k)
    if (static_cast<int>(k) != step)
      walk(m.kernels[k].body, [&](const Inst &in) {
        if (in.buffer >= 0)
          excluded.insert(in.buffer);
      });
  // Nor a grid's temps (docs/architecture.md, "Grids"): a copy per step of
  // the whole grid would outweigh the particles' state many times over.
  for (size_t b = 0; b < m.buffers.size(); ++b)
    for (int s : m.buffers[b].sets)
      if (m.sets[size_t(s)].grid)
        excluded.insert(static_cast<int>(b));
  for (int b : candidates) {
    Buffer &B = m.buffers[size_t(b)];
    if (B.role == Role::Temp && B.elem == Type::F && !excluded.count(b))
      B.tape = true;
  }
}

} // namespace evoc::autodiff

namespace evoc::autodiff {

namespace {

struct ProductSite {
  Block *outer = nullptr; // the body of the loop over S
  size_t innerAt = 0;     // index of the loop over U in it
  Block *inner = nullptr; // the body of the loop over U
  size_t accAt = 0;       // index of the accadd in it
  ValueId row = 0, s = 0; // the row factor and the outer index
  int x = -1;             // the kept input
};

// Whether inner's `accadd G[s * |U| + u], guard(r * X[u])` (any operand
// order) is a window product site; fills `site`.
bool matchSite(const Module &m, const Inst &acc, const Inst &outerLoop, const Inst &innerLoop,
               ProductSite &site) {
  const Buffer &G = m.buffers[size_t(acc.buffer)];
  if (G.role != Role::Adjoint || G.primal < 0 || G.sets.size() != 2 || G.comps != 1 ||
      m.buffers[size_t(G.primal)].role != Role::Param || outerLoop.set != G.sets[0] ||
      innerLoop.set != G.sets[1])
    return false;
  const Block &outerBody = *outerLoop.body;
  auto inner = definitions(*innerLoop.body), outer = definitions(outerBody);
  auto def = [&](ValueId v) -> const Inst * {
    if (auto it = inner.find(v); it != inner.end())
      return it->second;
    if (auto it = outer.find(v); it != outer.end())
      return it->second;
    return nullptr;
  };
  const ValueId u = innerLoop.body->arg, s = outerBody.arg;
  // The index s * |U| + u.
  const Inst *add = def(acc.args[0]);
  if (!add || add->op != Op::IAdd)
    return false;
  bool indexOk = false;
  for (int k = 0; k < 2; ++k) {
    const Inst *mul = def(add->args[size_t(k)]);
    if (add->args[size_t(1 - k)] != u || !mul || mul->op != Op::IMul)
      continue;
    for (int j = 0; j < 2; ++j) {
      const Inst *size = def(mul->args[size_t(1 - j)]);
      indexOk |=
          mul->args[size_t(j)] == s && size && size->op == Op::Size && size->set == innerLoop.set;
    }
  }
  if (!indexOk)
    return false;
  // The value guard(r, r * X[u]) = select(r == 0, 0, r * X[u]) (the adjoint
  // guard, AdjointEmitter::guard), r defined outside the loop over U: what
  // Executable::windowProduct adds, guard included.
  auto isZero = [&](ValueId v) {
    const Inst *c = def(v);
    return c && c->op == Op::ConstF && c->f == 0.0;
  };
  const Inst *sel = def(acc.args[1]);
  if (!sel || sel->op != Op::Select || !isZero(sel->args[1]))
    return false;
  const Inst *cond = def(sel->args[0]), *prod = def(sel->args[2]);
  if (!cond || cond->op != Op::Eq || !isZero(cond->args[1]) || !prod || prod->op != Op::Mul)
    return false;
  for (int k = 0; k < 2; ++k) {
    const Inst *load = def(prod->args[size_t(k)]);
    const ValueId r = prod->args[size_t(1 - k)];
    if (!load || load->op != Op::Load || load->args[0] != u || inner.count(r) || cond->args[0] != r)
      continue;
    const Buffer &X = m.buffers[size_t(load->buffer)];
    if (!X.tape || X.sets != std::vector<int>{G.sets[1]} || X.comps != 1)
      continue;
    site.row = r;
    site.s = s;
    site.x = load->buffer;
    return true;
  }
  return false;
}

// Every product site of `b`'s loops (a loop over S holding a loop over U).
void findSites(const Module &m, Block &b, const std::map<int, int> &accCount,
               std::vector<ProductSite> &out) {
  for (auto &ip : b.insts) {
    if (ip->op != Op::Loop)
      continue;
    Block &outer = *ip->body;
    for (size_t i = 0; i < outer.insts.size(); ++i) {
      Inst &innerLoop = *outer.insts[i];
      if (innerLoop.op != Op::Loop)
        continue;
      for (size_t j = 0; j < innerLoop.body->insts.size(); ++j) {
        const Inst &acc = *innerLoop.body->insts[j];
        ProductSite site;
        if (acc.op == Op::AccAdd && accCount.at(acc.buffer) == 1 &&
            matchSite(m, acc, *ip, innerLoop, site)) {
          site.outer = &outer;
          site.innerAt = i;
          site.inner = innerLoop.body.get();
          site.accAt = j;
          out.push_back(site);
        }
      }
    }
    findSites(m, outer, accCount, out);
  }
}

} // namespace

void deferProducts(Module &m, int stepAdj) {
  Kernel &k = m.kernels.at(size_t(stepAdj));
  std::map<int, int> accCount; // accumulations into each buffer
  walk(k.body, [&](const Inst &in) {
    if (in.op == Op::AccAdd)
      ++accCount[in.buffer];
  });
  std::vector<ProductSite> sites;
  findSites(m, k.body, accCount, sites);
  // Later sites first, so that earlier indices stay valid. Blocks are told
  // apart by the order findSites met them (not by address, which would make
  // the buffers' numbering depend on where the allocator put the blocks).
  std::map<const Block *, size_t> blockOrder;
  for (const ProductSite &p : sites)
    blockOrder.emplace(p.outer, blockOrder.size());
  auto key = [&](const ProductSite &p) {
    return std::make_tuple(blockOrder.at(p.outer), p.innerAt, p.accAt);
  };
  std::sort(sites.begin(), sites.end(),
            [&](const ProductSite &a, const ProductSite &b) { return key(a) > key(b); });
  for (const ProductSite &site : sites) {
    const int grad = site.inner->insts[site.accAt]->buffer;
    Buffer rows = m.buffers[size_t(grad)];
    rows.name += ".rows";
    rows.role = Role::Temp;
    rows.sets = {rows.sets[0]};
    rows.primal = -1;
    rows.tape = true;
    rows.field.clear();
    const int r = addBuffer(m, rows);
    site.inner->insts.erase(site.inner->insts.begin() + long(site.accAt));
    auto store = std::make_unique<Inst>();
    store->op = Op::Store;
    store->buffer = r;
    store->args = {site.s, site.row};
    site.outer->insts.insert(site.outer->insts.begin() + long(site.innerAt), std::move(store));
    m.products.push_back({grad, r, site.x});
  }
}

} // namespace evoc::autodiff
