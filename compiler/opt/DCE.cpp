// Dead-code elimination: unused pure values, unread locals, empty loops.
#include <functional>
#include <set>

#include "ir/Walk.h"
#include "opt/Passes.h"

namespace evoc::opt {

using namespace ir;

namespace {

// One sweep; returns true if anything was removed.
bool sweep(Kernel &k) {
  std::set<ValueId> used, readSlots;
  walk(k.body, [&](const Inst &in) {
    for (size_t a = 0; a < in.args.size(); ++a)
      if (!(isLocalUpdate(in.op) && a == 0))
        used.insert(in.args[a]);
    if (in.op == Op::LocalGet)
      readSlots.insert(in.args[0]);
  });
  bool changed = false;
  std::function<void(Block &)> clean = [&](Block &b) {
    std::vector<std::unique_ptr<Inst>> kept;
    for (auto &ip : b.insts) {
      Inst &in = *ip;
      bool dead = false;
      if (in.op == Op::Loop) {
        clean(*in.body);
        dead = in.body->insts.empty();
      } else if (in.op == Op::Store || in.op == Op::AccAdd) {
        dead = false;
      } else if (isLocalUpdate(in.op)) {
        dead = !readSlots.count(in.args[0]);
      } else if (in.op == Op::Local) {
        dead = !readSlots.count(in.result);
      } else {
        dead = !used.count(in.result);
      }
      if (dead)
        changed = true;
      else
        kept.push_back(std::move(ip));
    }
    b.insts = std::move(kept);
  };
  clean(k.body);
  return changed;
}

} // namespace

void dce(Module &m) {
  for (Kernel &k : m.kernels)
    while (sweep(k)) {
    }
}

} // namespace evoc::opt
