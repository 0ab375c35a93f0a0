// Loop fission for the CPU back end (see LoopFission.h).
#include "codegen/llvm/LoopFission.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "support/Error.h"

namespace evoc::codegen::cpu {

namespace {

using ir::Block;
using ir::Inst;
using ir::Op;
using ir::ValueId;

bool pure(Op op) {
  switch (op) {
  case Op::ConstF: case Op::ConstI: case Op::ConstB: case Op::Time: case Op::Size:
  case Op::Add: case Op::Sub: case Op::Mul: case Op::Div: case Op::Neg: case Op::Min:
  case Op::Max: case Op::Pow: case Op::Sin: case Op::Cos: case Op::Tanh: case Op::Exp:
  case Op::Log: case Op::Sqrt: case Op::Abs: case Op::Floor: case Op::Select: case Op::Lt:
  case Op::Le: case Op::Gt: case Op::Ge: case Op::Eq: case Op::Ne: case Op::And: case Op::Or:
  case Op::Not: case Op::IAdd: case Op::ISub: case Op::IMul: case Op::IToF:
    return true;
  default:
    return false;
  }
}

bool expensive(Op op) {
  return op == Op::Tanh || op == Op::Exp || op == Op::Log || op == Op::Sin || op == Op::Cos ||
         op == Op::Pow || op == Op::Div || op == Op::Sqrt;
}

/// Buffers accessed anywhere in a block (recursively); whether it has a loop.
void scan(const Block &b, std::set<int> &bufs, bool &hasLoop) {
  for (const auto &in : b.insts) {
    if (in->buffer >= 0)
      bufs.insert(in->buffer);
    if (in->op == Op::Loop) {
      hasLoop = true;
      scan(*in->body, bufs, hasLoop);
    }
  }
}

void collectWrites(const Block &b, std::set<int> &out) {
  for (const auto &in : b.insts) {
    if (in->op == Op::Store || in->op == Op::AccAdd)
      out.insert(in->buffer);
    if (in->body)
      collectWrites(*in->body, out);
  }
}

/// Every operand used by an instruction, including inside its loop body.
void collectArgs(const Inst &in, std::unordered_set<ValueId> &out) {
  for (ValueId a : in.args)
    out.insert(a);
  if (in.body)
    for (const auto &i : in.body->insts)
      collectArgs(*i, out);
}

class Fission {
public:
  Fission(ir::Module &m, ir::Kernel &k) : m_(m), k_(k) {}
  int run() { return block(k_.body); }

private:
  ValueId fresh(ir::Type t) {
    ValueId v = k_.nextValue++;
    if (k_.valueTypes.size() <= v)
      k_.valueTypes.resize(v + 1, ir::Type::None);
    k_.valueTypes[v] = t;
    return v;
  }

  int block(Block &b) {
    int n = 0;
    for (size_t idx = 0; idx < b.insts.size(); ++idx) {
      Inst &in = *b.insts[idx];
      if (in.op != Op::Loop)
        continue;
      n += block(*in.body); // inner loops first
      if (auto second = split(in)) {
        b.insts.insert(b.insts.begin() + std::ptrdiff_t(idx) + 1, std::move(second));
        ++idx; // the new loop is an elementwise tail: nothing left to split in it
        ++n;
      }
    }
    return n;
  }

  std::unique_ptr<Inst> split(Inst &loop) {
    Block &body = *loop.body;
    // Buffers written anywhere in the loop: loads of others may move to the tail.
    std::set<int> written;
    collectWrites(body, written);
    auto movable = [&](const Inst &in) {
      return pure(in.op) || in.op == Op::Store ||
             (in.op == Op::Load && !written.count(in.buffer));
    };
    // The tail: movable instructions none of whose results the rest needs,
    // found walking backwards (operand order of the builder does not matter).
    const size_t n = body.insts.size();
    std::vector<bool> inTail(n, false);
    std::unordered_set<ValueId> keptUses;
    for (size_t i = n; i-- > 0;) {
      const Inst &in = *body.insts[i];
      if (movable(in) && !(in.result && keptUses.count(in.result)))
        inTail[i] = true;
      else
        collectArgs(in, keptUses);
    }
    bool stores = false, costly = false, prefixLoop = false;
    std::set<int> tailBufs, prefixBufs;
    std::unordered_set<ValueId> definedInPrefix;
    for (size_t i = 0; i < n; ++i) {
      const Inst &in = *body.insts[i];
      if (inTail[i]) {
        stores |= in.op == Op::Store;
        costly |= expensive(in.op);
        if (in.op == Op::Store)
          tailBufs.insert(in.buffer);
        continue;
      }
      if (in.result)
        definedInPrefix.insert(in.result);
      if (in.buffer >= 0)
        prefixBufs.insert(in.buffer);
      if (in.op == Op::Loop) {
        prefixLoop = true;
        scan(*in.body, prefixBufs, prefixLoop);
      }
    }
    // Worth it only when LLVM would not vectorise the loop as it is; legal
    // only when the first part never touches what the tail stores.
    if (!stores || !costly || !prefixLoop)
      return nullptr;
    for (int tb : tailBufs)
      if (prefixBufs.count(tb))
        return nullptr;
    // Values the tail takes from the first part (other than the index).
    std::vector<ValueId> crossing;
    for (size_t i = 0; i < n; ++i)
      if (inTail[i])
        for (ValueId a : body.insts[i]->args)
          if (definedInPrefix.count(a) &&
              std::find(crossing.begin(), crossing.end(), a) == crossing.end())
            crossing.push_back(a);
    for (ValueId v : crossing)
      if (k_.valueTypes.at(v) != ir::Type::F)
        return nullptr; // only floats travel through scratch
    // Build the second loop.
    auto second = std::make_unique<Inst>();
    second->op = Op::Loop;
    second->set = loop.set;
    second->loc = loop.loc;
    second->body = std::make_unique<Block>();
    Block &tail = *second->body;
    tail.arg = fresh(ir::Type::I);
    std::unordered_map<ValueId, ValueId> remap{{body.arg, tail.arg}};
    std::vector<std::unique_ptr<Inst>> saves;
    for (ValueId v : crossing) {
      ir::Buffer sb;
      sb.name = "codegen.fission." + std::to_string(m_.buffers.size());
      sb.elem = ir::Type::F;
      sb.role = ir::Role::Temp;
      sb.sets = {loop.set};
      const int buf = int(m_.buffers.size());
      m_.buffers.push_back(sb);
      auto save = std::make_unique<Inst>();
      save->op = Op::Store;
      save->buffer = buf;
      save->args = {body.arg, v};
      saves.push_back(std::move(save));
      auto load = std::make_unique<Inst>();
      load->op = Op::Load;
      load->type = ir::Type::F;
      load->buffer = buf;
      load->args = {tail.arg};
      load->result = fresh(ir::Type::F);
      remap[v] = load->result;
      tail.insts.push_back(std::move(load));
    }
    std::vector<std::unique_ptr<Inst>> first;
    for (size_t i = 0; i < n; ++i) {
      std::unique_ptr<Inst> in = std::move(body.insts[i]);
      if (!inTail[i]) {
        first.push_back(std::move(in));
        continue;
      }
      for (ValueId &a : in->args)
        if (auto it = remap.find(a); it != remap.end())
          a = it->second;
      tail.insts.push_back(std::move(in));
    }
    for (auto &s : saves)
      first.push_back(std::move(s));
    body.insts = std::move(first);
    return second;
  }

  ir::Module &m_;
  ir::Kernel &k_;
};

} // namespace

int fissionLoops(ir::Module &m) {
  int n = 0;
  for (ir::Kernel &k : m.kernels)
    n += Fission(m, k).run();
  return n;
}

} // namespace evoc::codegen::cpu
