// The IR toolkit's non-template part: definitions, use replacement, cloning.
#include "ir/Walk.h"

namespace evoc::ir {

std::unordered_map<ValueId, const Inst *> definitions(const Block &b) {
  std::unordered_map<ValueId, const Inst *> defs;
  walk(b, [&](const Inst &in) {
    if (in.result)
      defs[in.result] = &in;
  });
  return defs;
}

void replaceUses(Block &b, const std::vector<ValueId> &repl) {
  walk(b, [&](Inst &in) {
    for (ValueId &a : in.args)
      while (a < repl.size() && repl[a] && repl[a] != a)
        a = repl[a];
  });
}

std::unique_ptr<Inst> cloneInst(const Inst &in) {
  auto c = std::make_unique<Inst>();
  c->op = in.op;
  c->type = in.type;
  c->result = in.result;
  c->args = in.args;
  c->f = in.f;
  c->i = in.i;
  c->buffer = in.buffer;
  c->set = in.set;
  c->loc = in.loc;
  if (in.body)
    c->body = std::make_unique<Block>(*in.body);
  return c;
}

Block::Block(const Block &from) : arg(from.arg) {
  insts.reserve(from.insts.size());
  for (const auto &ip : from.insts)
    insts.push_back(cloneInst(*ip));
}

Block &Block::operator=(const Block &from) {
  if (this != &from)
    *this = Block(from);
  return *this;
}

} // namespace evoc::ir
