// Common-subexpression elimination by scoped value numbering.
#include <cstring>
#include <map>
#include <set>
#include <tuple>

#include "ir/Walk.h"
#include "opt/Passes.h"

namespace evoc::opt {

using namespace ir;

namespace {

using Key = std::tuple<Op, Type, std::vector<ValueId>, uint64_t, int64_t, int, int>;

class CSE {
public:
  CSE(Kernel &k) : k_(k), repl_(k.nextValue + 1, 0) {
    walk(k.body, [&](const Inst &in) {
      if (in.op == Op::Store || in.op == Op::AccAdd)
        written_.insert(in.buffer);
    });
  }

  void run() {
    block(k_.body);
    replaceUses(k_.body, repl_);
  }

private:
  /// Pure ops, and loads of buffers this kernel never writes.
  bool pure(const Inst &in) const {
    return in.op == Op::Load ? !written_.count(in.buffer) : ir::isPure(in.op);
  }

  void block(Block &b) {
    std::vector<Key> added;
    for (auto &ip : b.insts) {
      Inst &in = *ip;
      for (ValueId &a : in.args)
        while (repl_[a])
          a = repl_[a];
      if (in.body) {
        block(*in.body);
        continue;
      }
      if (!pure(in))
        continue;
      std::vector<ValueId> args = in.args;
      bool commutative = in.op == Op::Add || in.op == Op::Mul || in.op == Op::IAdd ||
                         in.op == Op::IMul || in.op == Op::And || in.op == Op::Or ||
                         in.op == Op::Eq || in.op == Op::Ne;
      if (commutative && args[0] > args[1])
        std::swap(args[0], args[1]);
      uint64_t fbits;
      std::memcpy(&fbits, &in.f, sizeof fbits);
      Key key{in.op, in.type, args, fbits, in.i, in.buffer, in.set};
      auto it = table_.find(key);
      if (it != table_.end()) {
        repl_[in.result] = it->second;
      } else {
        table_.emplace(key, in.result);
        added.push_back(key);
      }
    }
    for (const Key &key : added) // leaving the scope
      table_.erase(key);
  }

  Kernel &k_;
  std::vector<ValueId> repl_;
  std::set<int> written_;
  std::map<Key, ValueId> table_;
};

} // namespace

void cse(Module &m) {
  for (Kernel &k : m.kernels)
    CSE(k).run();
}

} // namespace evoc::opt
