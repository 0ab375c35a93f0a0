// Loop fission, the CPU back end's pass (see opt/Passes.h).
//
// A loop body is distributed into up to three loops over the same set:
//   1. the reductions: inner loops, locals, and what they need;
//   2. the expensive elementwise slice (the ops of cost class ir::kCostly:
//      tanh, exp, div, ...) of the rest:
//      pure ops and loads of buffers the loop never writes, which vectorise;
//   3. everything else (stores, scatter-adds, gathers), as before.
// A loop this leaves alone but that cannot vectorise (an inner loop or a
// scatter) gets its divisions, roots and transcendentals of read-only data
// computed by a loop placed before it instead (hoist(), below).
// Values cross from one loop to a later one through scratch arrays (floats)
// or are recomputed (pure ops, read-only loads). Legal when no buffer is
// written in one loop and accessed in another, and no local spans loops.
#include "opt/Passes.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "ir/Builder.h"
#include "ir/IndexAnalysis.h"
#include "ir/Walk.h"

namespace evoc::opt {

namespace {

using ir::Block;
using ir::Inst;
using ir::Op;
using ir::ValueId;

/// Buffers written / accessed by an instruction, including inside its loop.
void access(const Inst &in, std::set<int> &written, std::set<int> &accessed) {
  ir::walk(in, [&](const Inst &i) {
    if (i.buffer < 0)
      return;
    accessed.insert(i.buffer);
    if (i.op == Op::Store || i.op == Op::AccAdd)
      written.insert(i.buffer);
  });
}

/// Every operand used by an instruction, including inside its loop body.
void collectArgs(const Inst &in, std::unordered_set<ValueId> &out) {
  ir::walk(in, [&](const Inst &i) { out.insert(i.args.begin(), i.args.end()); });
}

class Fission {
public:
  Fission(ir::Module &m, ir::Kernel &k) : m_(m), k_(k), bld_(m, k) {}
  int run() { return block(k_.body); }

private:
  /// A new float scratch array over `set` (one value per element).
  int scratch(int set) {
    ir::Buffer sb;
    sb.name = "codegen.fission." + std::to_string(m_.buffers.size());
    sb.elem = ir::Type::F;
    sb.role = ir::Role::Temp;
    sb.sets = {set};
    m_.buffers.push_back(sb);
    return int(m_.buffers.size()) - 1;
  }

  int block(Block &b) {
    int n = 0;
    for (size_t idx = 0; idx < b.insts.size(); ++idx) {
      Inst &in = *b.insts[idx];
      if (in.op != Op::Loop)
        continue;
      n += block(*in.body);               // inner loops first
      if (size_t added = split(b, idx)) { // loops inserted after it
        idx += added;
        ++n;
      } else if (hoist(b, idx)) { // a loop inserted before it
        ++idx;
        ++n;
      }
    }
    return n;
  }

  // --- pre-slice hoisting -----------------------------------------------
  // A loop that split() leaves alone but that cannot vectorise (an inner
  // loop, or a scatter through an index buffer) may still compute divisions,
  // square roots and transcendental functions from read-only data only (the
  // spring loop of an adjoint: its gathers of point.x and point.dv.adj feed
  // a serial chain of four divisions per spring). Those values are computed
  // by a new loop over the same set placed just before it, which vectorises,
  // and reach the loop through scratch arrays. The hoisted loop reads only
  // buffers the loop never writes, so it sees what each iteration would
  // have seen; the values are the same operations on the same operands.

  /// Hoists out of loop b.insts[idx] into a loop inserted before it; returns
  /// whether it did.
  bool hoist(Block &b, size_t idx) {
    Inst &loop = *b.insts[idx];
    Block &body = *loop.body;
    const ValueId arg = body.arg;
    const ir::IndexAnalysis ix(body); // values defined outside the loop are invariants
    std::set<int> written, ignored;
    bool blocked = false;
    for (const auto &in : body.insts) {
      access(*in, written, ignored);
      if (in->op == Op::Loop)
        blocked = true;
      else if ((in->op == Op::AccAdd || in->op == Op::Store) && !ix.affine(in->args[0], arg))
        blocked = true;
    }
    if (!blocked)
      return false;
    // Hoistable: pure ops and loads of never-written buffers whose operands
    // are hoistable, the loop index, or defined outside the loop.
    const size_t n = body.insts.size();
    std::unordered_map<ValueId, size_t> at;
    std::vector<char> ok(n, 0);
    for (size_t i = 0; i < n; ++i) {
      const Inst &in = *body.insts[i];
      if (!in.result || in.body || in.op == Op::Local)
        continue;
      bool can = ir::isPure(in.op) || (in.op == Op::Load && !written.count(in.buffer));
      for (ValueId a : in.args)
        if (auto d = at.find(a); d != at.end() && !ok[d->second])
          can = false;
        else if (d == at.end() && a != arg && ix.def(a))
          can = false; // defined inside a nested loop: not in scope
      ok[i] = can;
      at[in.result] = i;
    }
    // Cone: hoistable values that depend on a division, root or
    // transcendental. Roots: the cone's float values the loop still needs
    // (found backwards from its effects; a root becomes a load, so what it
    // needs is no longer needed there). Those cross through scratch; the
    // rest of the cone's arithmetic moves with them into the vector loop.
    std::vector<char> cone(n, 0);
    for (size_t i = 0; i < n; ++i) {
      if (!ok[i])
        continue;
      const Inst &in = *body.insts[i];
      cone[i] = ir::isCostly(in.op) && in.type == ir::Type::F;
      for (ValueId a : in.args)
        if (auto d = at.find(a); d != at.end() && cone[d->second])
          cone[i] = 1;
    }
    std::vector<size_t> roots;
    std::unordered_set<ValueId> live;
    for (size_t i = n; i-- > 0;) {
      const Inst &in = *body.insts[i];
      bool effect = !in.result || in.body || ir::isLocalOp(in.op) || in.op == Op::Store ||
                    in.op == Op::AccAdd;
      if (!effect && !live.count(in.result))
        continue;
      if (cone[i] && in.type == ir::Type::F && in.op != Op::Load) {
        roots.push_back(i);
        continue;
      }
      collectArgs(in, live);
    }
    std::reverse(roots.begin(), roots.end());
    if (roots.empty())
      return false;
    // The hoisted loop: every hoistable instruction some root needs, cloned
    // in order, then the saves of the roots the loop still uses.
    std::vector<char> need(n, 0);
    for (size_t r : roots)
      need[r] = 1;
    for (size_t i = n; i-- > 0;)
      if (need[i])
        for (ValueId a : body.insts[i]->args)
          if (auto d = at.find(a); d != at.end())
            need[d->second] = 1;
    int costly = 0;
    for (size_t i = 0; i < n; ++i)
      costly += need[i] && ir::isCostly(body.insts[i]->op);
    if (costly < 2)
      return false;
    bld_.setInsertPoint(b, idx);
    bld_.setLoc(loop.loc);
    const ValueId pidx = bld_.beginLoop(loop.set);
    std::unordered_map<ValueId, ValueId> remap{{arg, pidx}};
    auto mapped = [&](ValueId v) {
      auto it = remap.find(v);
      return it == remap.end() ? v : it->second;
    };
    for (size_t i = 0; i < n; ++i) {
      if (!need[i])
        continue;
      const Inst &src = *body.insts[i];
      std::unique_ptr<Inst> c = ir::cloneInst(src);
      for (ValueId &a : c->args)
        a = mapped(a);
      c->result = remap[src.result] = bld_.newValue(src.type);
      bld_.insert(std::move(c));
    }
    bld_.setLoc({});
    for (size_t r : roots) {
      Inst &in = *body.insts[r];
      const int buf = scratch(loop.set);
      bld_.store(buf, pidx, remap.at(in.result));
      // The loop loads the value instead of computing it (same result id).
      in.op = Op::Load;
      in.buffer = buf;
      in.args = {arg};
    }
    bld_.endLoop();
    return true;
  }

  // --- one loop ---------------------------------------------------------
  std::vector<const Inst *> insts_;         // the loop body's instructions (stable)
  std::vector<std::vector<ValueId>> args_;  // their operands before any rewriting
  std::unordered_map<ValueId, size_t> def_; // value -> index of its instruction
  std::vector<int> group_;                  // per instruction: 1, 2 or 3
  std::set<int> writtenInLoop_;

  bool readOnlyLoad(const Inst &in) const {
    return in.op == Op::Load && !writtenInLoop_.count(in.buffer);
  }
  bool recomputable(const Inst &in) const { return ir::isPure(in.op) || readOnlyLoad(in); }

  /// Whether a value from group `from` is recomputed in a later group (cheap
  /// pure ops and read-only loads) rather than passed through scratch.
  bool recompute(const Inst &in, int /*from*/) const {
    return recomputable(in) && !ir::isCostly(in.op);
  }

  /// The instructions of the rest (group 3) that value-producing
  /// instruction i needs, if all of them can run in the slice.
  bool slice(size_t i, std::vector<size_t> &out) const {
    for (ValueId a : insts_[i]->args) {
      auto d = def_.find(a);
      if (d == def_.end() || group_[d->second] != 3 ||
          std::find(out.begin(), out.end(), d->second) != out.end())
        continue;
      if (!recomputable(*insts_[d->second]))
        return false;
      out.push_back(d->second);
      if (!slice(d->second, out))
        return false;
    }
    return true;
  }

  /// Whether value v, defined in an earlier group, can reach group g: by
  /// recomputation (recursively) or as a float through scratch.
  bool reachable(ValueId v, int g) const {
    auto it = def_.find(v);
    if (it == def_.end() || group_[it->second] == g)
      return true;
    const Inst &in = *insts_[it->second];
    if (recompute(in, group_[it->second])) {
      for (ValueId a : args_[it->second])
        if (!reachable(a, g))
          return false;
      return true;
    }
    return k_.valueTypes.at(v) == ir::Type::F;
  }

  /// Makes value v available in the loop of group g being built in `out`.
  ValueId materialize(ValueId v, int g, Block &out, std::unordered_map<ValueId, ValueId> &remap,
                      int setIdx) {
    if (auto r = remap.find(v); r != remap.end())
      return r->second;
    auto it = def_.find(v);
    if (it == def_.end() || group_[it->second] == g)
      return v;
    const Inst &src = *insts_[it->second];
    ValueId nv;
    if (recompute(src, group_[it->second])) { // clone it here, on its original operands
      std::unique_ptr<Inst> c = ir::cloneInst(src);
      c->args = args_[it->second];
      for (ValueId &a : c->args)
        a = materialize(a, g, out, remap, setIdx);
      c->result = nv = bld_.newValue(src.type);
      bld_.setInsertPoint(out);
      bld_.insert(std::move(c));
    } else { // through a scratch array written by its own loop
      const int buf = scratch(setIdx);
      saves_.push_back({group_[it->second], buf, v});
      bld_.setInsertPoint(out);
      bld_.setLoc({});
      nv = bld_.load(buf, indexOf_[size_t(g)]);
    }
    remap[v] = nv;
    return nv;
  }
  ValueId indexOf_[4] = {0, 0, 0, 0}; // the loop index of each group's loop
  /// Values stored to scratch at the end of their group's loop: (group,
  /// buffer, value).
  struct Save {
    int group, buffer;
    ValueId value;
  };
  std::vector<Save> saves_;

  /// Splits loop b.insts[idx] into loops inserted after it; returns how many.
  size_t split(Block &b, size_t idx) {
    Inst &loop = *b.insts[idx];
    Block &body = *loop.body;
    const size_t n = body.insts.size();
    insts_.clear();
    args_.clear();
    for (const auto &in : body.insts) {
      insts_.push_back(in.get());
      args_.push_back(in->args);
    }
    def_.clear();
    for (size_t i = 0; i < n; ++i)
      if (body.insts[i]->result && body.insts[i]->op != Op::Local)
        def_[body.insts[i]->result] = i;
    writtenInLoop_.clear();
    std::set<int> ignored;
    for (const auto &in : body.insts)
      access(*in, writtenInLoop_, ignored);

    // Group 1: loops, locals and everything they need.
    group_.assign(n, 3);
    std::unordered_set<ValueId> need1;
    bool hasLoop = false;
    for (size_t i = n; i-- > 0;) {
      const Inst &in = *body.insts[i];
      if (in.op == Op::Loop || ir::isLocalOp(in.op) || (in.result && need1.count(in.result))) {
        group_[i] = 1;
        hasLoop |= in.op == Op::Loop;
        collectArgs(in, need1);
      }
    }
    // Group 2: the expensive ops of the rest whose inputs the slice can
    // compute (pure ops, read-only loads, values of group 1).
    bool costly = false;
    for (size_t i = n; i-- > 0;) {
      const Inst &in = *body.insts[i];
      if (group_[i] != 3 || !ir::isCostly(in.op) || !ir::isPure(in.op))
        continue;
      std::vector<size_t> members{i};
      if (!slice(i, members))
        continue;
      for (size_t j : members)
        group_[j] = 2;
      costly = true;
    }
    if (!hasLoop || !costly)
      return 0;
    // Stores of the slice's results join the slice when no other
    // instruction of the loop touches their buffer.
    for (size_t i = 0; i < n; ++i) {
      const Inst &st = *body.insts[i];
      if (group_[i] != 3 || st.op != Op::Store)
        continue;
      bool ok = true;
      for (ValueId a : st.args)
        if (auto d = def_.find(a); d != def_.end() && group_[d->second] == 3)
          ok = false;
      for (size_t j = 0; j < n && ok; ++j) {
        std::set<int> w, acc;
        if (j != i)
          access(*body.insts[j], w, acc);
        ok = !acc.count(st.buffer);
      }
      if (ok)
        group_[i] = 2;
    }
    // Legality: nothing written in one loop is accessed in another (the
    // slice reads only buffers the loop never writes, and its stores'
    // buffers are touched by nothing else).
    std::set<int> w1, a1, w3, a3;
    for (size_t i = 0; i < n; ++i)
      if (group_[i] != 2)
        access(*body.insts[i], group_[i] == 1 ? w1 : w3, group_[i] == 1 ? a1 : a3);
    for (int b : w1)
      if (a3.count(b))
        return 0;
    for (int b : w3)
      if (a1.count(b))
        return 0;
    bool any3 = false;
    for (size_t i = 0; i < n; ++i) {
      if (group_[i] == 1)
        continue;
      any3 |= group_[i] == 3;
      for (ValueId a : body.insts[i]->args)
        if (a != body.arg && !reachable(a, group_[i]))
          return 0;
    }

    // Build the loops, after this one.
    const int last = any3 ? 3 : 2;
    Block *out[4] = {nullptr, &body, nullptr, nullptr};
    indexOf_[1] = body.arg;
    saves_.clear();
    bld_.setInsertPoint(b, idx + 1);
    bld_.setLoc(loop.loc);
    for (int g = 2; g <= last; ++g) {
      indexOf_[g] = bld_.beginLoop(loop.set);
      out[g] = b.insts[idx + size_t(g) - 1]->body.get();
      bld_.endLoop();
    }
    std::vector<std::unique_ptr<Inst>> kept; // group 1 stays in this loop
    std::unordered_map<ValueId, ValueId> remap[4];
    for (int g = 2; g <= 3; ++g)
      remap[g][body.arg] = indexOf_[g];
    for (size_t i = 0; i < n; ++i) {
      std::unique_ptr<Inst> in = std::move(body.insts[i]);
      const int g = group_[i];
      if (g == 1) {
        kept.push_back(std::move(in));
        continue;
      }
      for (ValueId &a : in->args)
        a = materialize(a, g, *out[g], remap[g], loop.set);
      out[g]->insts.push_back(std::move(in));
    }
    body.insts = std::move(kept);
    // Values a later loop takes from an earlier one are saved at its end.
    bld_.setLoc({});
    for (const Save &sv : saves_) {
      bld_.setInsertPoint(*out[sv.group]);
      bld_.store(sv.buffer, indexOf_[size_t(sv.group)], sv.value);
    }
    return size_t(last - 1);
  }

  ir::Module &m_;
  ir::Kernel &k_;
  ir::Builder bld_;
};

} // namespace

namespace {

// Store-to-load forwarding inside one block, on fission's private copy:
// `store B[i], v` then `load B[i]` (the same index value, B a float buffer,
// nothing writing B in between, nested loops included) is v. Buffers never
// alias (the runtime passes distinct memory) and a float store keeps its
// value exactly, so results are bit-identical. irgen stores a spring's
// activation and reads it back in the same loop; forwarded, the spring
// force's division depends on the tanh rather than on memory, so the split
// moves it into the vectorised slice with the tanh.
void writtenIn(const Block &b, std::set<int> &out) {
  ir::walk(b, [&](const Inst &in) {
    if (in.op == Op::Store || in.op == Op::AccAdd)
      out.insert(in.buffer);
  });
}

void forwardStores(const ir::Module &m, Block &b, std::unordered_map<ValueId, ValueId> &repl) {
  std::map<std::pair<int, ValueId>, ValueId> stored; // (buffer, index) -> value
  auto forget = [&](int buf) {
    for (auto it = stored.begin(); it != stored.end();)
      it = it->first.first == buf ? stored.erase(it) : std::next(it);
  };
  for (auto &ip : b.insts) {
    Inst &in = *ip;
    for (ValueId &a : in.args)
      if (auto r = repl.find(a); r != repl.end())
        a = r->second;
    if (in.body) {
      forwardStores(m, *in.body, repl);
      std::set<int> w;
      writtenIn(*in.body, w);
      for (int buf : w)
        forget(buf);
    } else if (in.op == Op::Store || in.op == Op::AccAdd) {
      forget(in.buffer);
      if (in.op == Op::Store && m.buffers[size_t(in.buffer)].elem == ir::Type::F)
        stored[{in.buffer, in.args[0]}] = in.args[1];
    } else if (in.op == Op::Load) {
      if (auto it = stored.find({in.buffer, in.args[0]}); it != stored.end()) {
        repl[in.result] = it->second; // every later use reads v instead
        ip.reset();
      }
    }
  }
  b.insts.erase(std::remove(b.insts.begin(), b.insts.end(), nullptr), b.insts.end());
}

} // namespace

int fissionLoops(ir::Module &m) {
  int n = 0;
  for (ir::Kernel &k : m.kernels) {
    std::unordered_map<ValueId, ValueId> repl;
    forwardStores(m, k.body, repl);
    n += Fission(m, k).run();
  }
  return n;
}

} // namespace evoc::opt
