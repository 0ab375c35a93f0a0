// Use replacement and recursive walks shared by the optimisation passes.
#include "opt/Rewrite.h"

namespace evoc::opt {

using namespace ir;

void replaceUses(Block &b, const std::vector<ValueId> &repl) {
  for (auto &ip : b.insts) {
    for (ValueId &a : ip->args)
      while (a < repl.size() && repl[a] && repl[a] != a)
        a = repl[a];
    if (ip->body)
      replaceUses(*ip->body, repl);
  }
}

void forEachInst(const Block &b, const std::function<void(const Inst &)> &f) {
  for (const auto &ip : b.insts) {
    f(*ip);
    if (ip->body)
      forEachInst(*ip->body, f);
  }
}

} // namespace evoc::opt
