// Fusion of consecutive loops over the same element set, when legal.
//
// Legal when no iteration of one loop can observe another iteration of the
// other: every buffer written by one loop and touched by the other is, in
// both loops, accessed only at the iteration's own element (index i when
// comps == 1, i * comps + c with 0 <= c < comps), and no local is updated
// by both (that would reorder a float sum).
#include <map>
#include <set>
#include <unordered_map>

#include "ir/Walk.h"
#include "opt/Passes.h"

namespace evoc::opt {

using namespace ir;

namespace {

class Fuser {
public:
  Fuser(const Module &m, Kernel &k) : m_(m), k_(k) {}

  void run() {
    defs_ = definitions(k_.body);
    block(k_.body);
  }

private:
  const Inst *def(ValueId v) const {
    auto it = defs_.find(v);
    return it == defs_.end() ? nullptr : it->second;
  }
  bool constI(ValueId v, int64_t &out) const {
    const Inst *d = def(v);
    if (!d || d->op != Op::ConstI)
      return false;
    out = d->i;
    return true;
  }
  // Is `idx` the element of iteration `arg` itself in a buffer of `comps`?
  bool owned(ValueId idx, ValueId arg, int comps) const {
    if (idx == arg)
      return comps == 1;
    const Inst *d = def(idx);
    if (!d)
      return false;
    if (d->op == Op::IMul)
      return isScaled(idx, arg, comps);
    if (d->op != Op::IAdd)
      return false;
    int64_t c;
    for (int k = 0; k < 2; ++k)
      if (constI(d->args[1 - k], c) && c >= 0 && c < comps && isScaled(d->args[k], arg, comps))
        return true;
    return false;
  }
  bool isScaled(ValueId v, ValueId arg, int comps) const {
    const Inst *d = def(v);
    if (!d || d->op != Op::IMul)
      return false;
    int64_t c;
    return (d->args[0] == arg && constI(d->args[1], c) && c == comps) ||
           (d->args[1] == arg && constI(d->args[0], c) && c == comps);
  }

  struct Access {
    std::set<int> written;
    std::map<int, bool> allOwned; // buffer -> every access is at the own element
    std::set<ValueId> updatedSlots;
  };
  Access accesses(const Inst &loop) const {
    Access a;
    ValueId arg = loop.body->arg;
    walk(*loop.body, [&](const Inst &in) {
      if (isLocalUpdate(in.op))
        a.updatedSlots.insert(in.args[0]);
      if (in.buffer < 0)
        return;
      if (in.op == Op::Store || in.op == Op::AccAdd)
        a.written.insert(in.buffer);
      const Buffer &b = m_.buffers[in.buffer];
      bool own = b.sets.size() == 1 && b.sets[0] == loop.set && owned(in.args[0], arg, b.comps);
      auto it = a.allOwned.find(in.buffer);
      a.allOwned[in.buffer] = (it == a.allOwned.end() ? true : it->second) && own;
    });
    return a;
  }

  bool legal(const Inst &l1, const Inst &l2) const {
    if (l1.set != l2.set)
      return false;
    Access a = accesses(l1), b = accesses(l2);
    for (ValueId s : a.updatedSlots)
      if (b.updatedSlots.count(s))
        return false;
    auto conflictFree = [](const Access &w, const Access &o) {
      for (int buf : w.written) {
        auto it = o.allOwned.find(buf);
        if (it != o.allOwned.end() && !(it->second && w.allOwned.at(buf)))
          return false;
      }
      return true;
    };
    return conflictFree(a, b) && conflictFree(b, a);
  }

  void block(Block &b) {
    std::vector<std::unique_ptr<Inst>> out;
    for (auto &ip : b.insts) {
      if (ip->op == Op::Loop && !out.empty() && out.back()->op == Op::Loop &&
          legal(*out.back(), *ip)) {
        Inst &first = *out.back();
        std::vector<ValueId> repl(k_.nextValue + 1, 0);
        repl[ip->body->arg] = first.body->arg;
        replaceUses(*ip->body, repl);
        for (auto &inner : ip->body->insts)
          first.body->insts.push_back(std::move(inner));
        continue;
      }
      out.push_back(std::move(ip));
    }
    b.insts = std::move(out);
    for (auto &ip : b.insts)
      if (ip->op == Op::Loop)
        block(*ip->body);
  }

  const Module &m_;
  Kernel &k_;
  std::unordered_map<ValueId, const Inst *> defs_;
};

} // namespace

void fuseLoops(Module &m) {
  for (Kernel &k : m.kernels)
    Fuser(m, k).run();
}

} // namespace evoc::opt
