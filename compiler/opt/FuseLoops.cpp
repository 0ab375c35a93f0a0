// Fusion of consecutive loops over the same element set, when legal.
//
// Legal when no iteration of one loop can observe another iteration of the
// other: every buffer written by one loop and touched by the other is, in
// both loops, accessed only at the iteration's own element (index i when
// comps == 1, i * comps + c with 0 <= c < comps: ir::IndexAnalysis::
// ownElement), and no local is updated by both (that would reorder a float
// sum).
#include <map>
#include <set>

#include "ir/IndexAnalysis.h"
#include "ir/Walk.h"
#include "opt/Passes.h"

namespace evoc::opt {

using namespace ir;

namespace {

class Fuser {
public:
  Fuser(const Module &m, Kernel &k) : m_(m), k_(k), ix_(k.body) {}

  void run() { block(k_.body); }

private:
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
      bool own =
          b.sets.size() == 1 && b.sets[0] == loop.set && ix_.ownElement(in.args[0], arg, b.comps);
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
  IndexAnalysis ix_; // of the kernel as it was: fusion moves, never changes, an index
};

} // namespace

void fuseLoops(Module &m) {
  for (Kernel &k : m.kernels)
    Fuser(m, k).run();
}

} // namespace evoc::opt
