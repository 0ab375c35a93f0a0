// Builder: appends typed SSA instructions to a kernel's (nested) blocks.
#include "ir/Builder.h"

#include "support/Error.h"

namespace evoc::ir {

Builder::Builder(Module &m, Kernel &k) : m_(m), k_(k) {
  if (k_.valueTypes.empty())
    k_.valueTypes.push_back(Type::None); // slot 0: "no value"
  if (k_.valueTypes.size() < k_.nextValue)
    k_.valueTypes.resize(k_.nextValue, Type::None);
  blocks_.push_back({&k_.body, kEnd});
}

void Builder::setInsertPoint(Block &b, size_t pos) {
  EVOC_ASSERT(pos == kEnd || pos <= b.insts.size(), "setInsertPoint: position past the block");
  blocks_.assign(1, {&b, pos});
  openLoops_.clear();
}

Inst &Builder::place(std::unique_ptr<Inst> inst) {
  Inst &ref = *inst;
  Point &p = blocks_.back();
  if (p.pos == kEnd)
    p.block->insts.push_back(std::move(inst));
  else
    p.block->insts.insert(p.block->insts.begin() + std::ptrdiff_t(p.pos++), std::move(inst));
  return ref;
}

Inst &Builder::insert(std::unique_ptr<Inst> inst) {
  ++emitted_;
  Inst &ref = place(std::move(inst));
  if (ref.result && ref.op != Op::Local) {
    if (defs_.size() <= ref.result)
      defs_.resize(ref.result + 1, nullptr);
    defs_[ref.result] = &ref;
  }
  if (ref.op == Op::Store || ref.op == Op::AccAdd)
    ++writes_;
  return ref;
}

ValueId Builder::fresh(Type t) {
  ValueId id = k_.nextValue++;
  if (k_.valueTypes.size() <= id)
    k_.valueTypes.resize(id + 1, Type::None);
  k_.valueTypes[id] = t;
  return id;
}

ValueId Builder::result(Inst &i, Type t) {
  i.result = fresh(t);
  if (defs_.size() <= i.result)
    defs_.resize(i.result + 1, nullptr);
  defs_[i.result] = &i;
  return i.result;
}

Inst &Builder::emit(Op op, Type type, std::vector<ValueId> args) {
  ++emitted_;
  auto inst = std::make_unique<Inst>();
  inst->op = op;
  inst->type = type;
  inst->args = std::move(args);
  inst->loc = loc_;
  return place(std::move(inst));
}

ValueId Builder::constF(double v) {
  Inst &i = emit(Op::ConstF, Type::F, {});
  i.f = v;
  return result(i, Type::F);
}

ValueId Builder::constI(int64_t v) {
  Inst &i = emit(Op::ConstI, Type::I, {});
  i.i = v;
  return result(i, Type::I);
}

ValueId Builder::constB(bool v) {
  Inst &i = emit(Op::ConstB, Type::B, {});
  i.i = v ? 1 : 0;
  return result(i, Type::B);
}

ValueId Builder::time() {
  Inst &i = emit(Op::Time, Type::I, {});
  return result(i, Type::I);
}

ValueId Builder::size(int set) {
  EVOC_ASSERT(set >= 0 && set < static_cast<int>(m_.sets.size()), "size: bad set");
  Inst &i = emit(Op::Size, Type::I, {});
  i.set = set;
  return result(i, Type::I);
}

ValueId Builder::op(Op o, std::vector<ValueId> args) {
  EVOC_ASSERT(opNumArgs(o) < 0 || static_cast<int>(args.size()) == opNumArgs(o),
              std::string("wrong operand count for ") + opName(o));
  Type t = opResultType(o);
  if (o == Op::Select)
    t = k_.valueTypes.at(args.at(1)); // select is F or I, like its branches
  EVOC_ASSERT(t != Type::None, std::string("op has no result: ") + opName(o));
  Inst &i = emit(o, t, std::move(args));
  return result(i, t);
}

ValueId Builder::load(int buffer, ValueId index) {
  EVOC_ASSERT(buffer >= 0 && buffer < static_cast<int>(m_.buffers.size()), "load: bad buffer");
  Type t = m_.buffers[buffer].elem;
  Inst &i = emit(Op::Load, t, {index});
  i.buffer = buffer;
  return result(i, t);
}

void Builder::store(int buffer, ValueId index, ValueId value) {
  EVOC_ASSERT(buffer >= 0 && buffer < static_cast<int>(m_.buffers.size()), "store: bad buffer");
  emit(Op::Store, Type::None, {index, value}).buffer = buffer;
  ++writes_;
}

void Builder::accAdd(int buffer, ValueId index, ValueId value) {
  EVOC_ASSERT(buffer >= 0 && buffer < static_cast<int>(m_.buffers.size()), "accadd: bad buffer");
  emit(Op::AccAdd, Type::None, {index, value}).buffer = buffer;
  ++writes_;
}

ValueId Builder::local(double init) {
  Inst &i = emit(Op::Local, Type::None, {});
  i.f = init;
  return i.result = fresh(Type::None); // a slot, not a value: no def
}

void Builder::localUpdate(Op o, ValueId slot, ValueId value) {
  EVOC_ASSERT(isLocalUpdate(o), "localUpdate: not a local update op");
  emit(o, Type::None, {slot, value});
}

ValueId Builder::localGet(ValueId slot) {
  Inst &i = emit(Op::LocalGet, Type::F, {slot});
  return result(i, Type::F);
}

ValueId Builder::beginLoop(int set) {
  EVOC_ASSERT(set >= 0 && set < static_cast<int>(m_.sets.size()), "loop: bad set");
  Inst &i = emit(Op::Loop, Type::None, {});
  i.set = set;
  i.body = std::make_unique<Block>();
  i.body->arg = fresh(Type::I);
  blocks_.push_back({i.body.get(), kEnd});
  openLoops_.push_back(++loopSerial_);
  return i.body->arg;
}

void Builder::endLoop() {
  EVOC_ASSERT(blocks_.size() > 1, "endLoop without beginLoop");
  blocks_.pop_back();
  openLoops_.pop_back();
}

int addBuffer(Module &m, Buffer b) {
  m.buffers.push_back(std::move(b));
  return static_cast<int>(m.buffers.size()) - 1;
}

int addBuffer(Module &m, std::string name, Role role, std::vector<int> sets, Type elem, int comps) {
  Buffer b;
  b.name = std::move(name);
  b.role = role;
  b.sets = std::move(sets);
  b.elem = elem;
  b.comps = comps;
  return addBuffer(m, std::move(b));
}

Kernel &addKernel(Module &m, std::string name, KernelKind kind) {
  Kernel &k = m.kernels.emplace_back();
  k.name = std::move(name);
  k.kind = kind;
  return k;
}

int addSet(Module &m, const std::string &name) {
  int s = m.findSet(name);
  if (s >= 0)
    return s;
  ElementSet es;
  es.name = name;
  m.sets.push_back(es);
  return static_cast<int>(m.sets.size()) - 1;
}

} // namespace evoc::ir
