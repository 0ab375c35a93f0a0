// Verifier: operand types, SSA scoping, loop nesting, locals, buffer writes.
#include "ir/Verifier.h"

#include <map>
#include <set>

#include "ir/Printer.h"
#include "support/Error.h"

namespace evoc::ir {
namespace {

class Verifier {
public:
  Verifier(const Module &m, std::vector<std::string> &errs) : m_(m), errs_(errs) {}

  void module() {
    for (size_t b = 0; b < m_.buffers.size(); ++b) {
      const Buffer &buf = m_.buffers[b];
      for (int s : buf.sets)
        if (s < 0 || s >= static_cast<int>(m_.sets.size()))
          err("buffer " + buf.name + ": bad set index");
      if (buf.elem != Type::F && buf.elem != Type::I)
        err("buffer " + buf.name + ": element type must be f or i");
      if (buf.role == Role::Adjoint &&
          (buf.primal < 0 || buf.primal >= static_cast<int>(m_.buffers.size())))
        err("buffer " + buf.name + ": adjoint without a valid primal");
      if (buf.comps < 1)
        err("buffer " + buf.name + ": comps < 1");
      if (buf.role == Role::Command && (buf.differentiable || buf.elem != Type::F))
        err("buffer " + buf.name + ": a command buffer holds floats and is not differentiable");
      if (buf.tape && (buf.role != Role::Temp || buf.elem != Type::F))
        err("buffer " + buf.name + ": only a float temp buffer is kept per step (tape)");
      if (buf.time == TimeRef::Offset && buf.fixedTime > 0)
        err("buffer " + buf.name + ": a time offset must not be positive (a later time)");
    }
    for (const WindowProduct &p : m_.products)
      product(p);
    for (const ElementSet &s : m_.sets)
      layout(s);
    for (const Kernel &k : m_.kernels)
      kernel(k);
  }

private:
  // A layout must cover the set exactly: fixed counts add up to base, the
  // counts of each set to its term's coefficient.
  void layout(const ElementSet &s) {
    if (s.layout.empty())
      return;
    int64_t fixed = 0;
    std::map<int, int64_t> per, want;
    for (auto [set, n] : s.layout) {
      if (n < 1 || set < -1 || set >= static_cast<int>(m_.sets.size())) {
        err("set " + s.name + ": bad layout segment");
        return;
      }
      (set < 0 ? fixed : per[set]) += n;
    }
    for (auto [set, coef] : s.terms)
      want[set] += coef;
    if (s.fromBody || fixed != s.base || per != want)
      err("set " + s.name + ": the layout does not add up to the set's size");
  }

  void err(const std::string &s) { errs_.push_back(s); }
  void err(const Inst &in, const std::string &s) {
    err("kernel " + k_->name + ": " + instToString(m_, in) + ": " + s);
  }
  Type type(ValueId v) const { return v < k_->valueTypes.size() ? k_->valueTypes[v] : Type::None; }

  // grad[s, u] += sum_t rows_t[s] x_t[u]: shapes and roles (IR.h).
  void product(const WindowProduct &p) {
    const int nb = static_cast<int>(m_.buffers.size());
    if (p.grad < 0 || p.grad >= nb || p.rows < 0 || p.rows >= nb || p.x < 0 || p.x >= nb) {
      err("product: bad buffer index");
      return;
    }
    const Buffer &g = m_.buffers[size_t(p.grad)], &r = m_.buffers[size_t(p.rows)],
                 &x = m_.buffers[size_t(p.x)];
    const bool param = g.role == Role::Adjoint && g.primal >= 0 && g.primal < nb &&
                       m_.buffers[size_t(g.primal)].role == Role::Param;
    if (!param || g.sets.size() != 2 || g.comps != 1)
      err("product " + g.name + ": not the adjoint of a [S, U] parameter");
    else if (!r.tape || !x.tape || r.sets != std::vector<int>{g.sets[0]} ||
             x.sets != std::vector<int>{g.sets[1]} || r.comps != 1 || x.comps != 1)
      err("product " + g.name + ": rows and x must be kept temporaries over its two sets");
  }

  void kernel(const Kernel &k) {
    k_ = &k;
    defined_.clear();
    scopes_.clear();
    slotBlock_.clear();
    slotUpdatedAfterGet_.clear();
    lastUpdate_.clear();
    written_.clear();
    stored_.clear();
    accumulated_.clear();
    counter_ = 0;
    if (k.valueTypes.size() < k.nextValue)
      err("kernel " + k.name + ": valueTypes shorter than nextValue");
    bool adj = k.kind == KernelKind::StepAdj || k.kind == KernelKind::LossAdj ||
               k.kind == KernelKind::LossStepAdj;
    if (adj && (k.primal < 0 || k.primal >= static_cast<int>(m_.kernels.size())))
      err("kernel " + k.name + ": adjoint kernel without a valid primal");
    block(k.body);
    for (int b : stored_)
      if (accumulated_.count(b))
        err("kernel " + k.name + ": buffer " + m_.buffers[b].name +
            " is both stored and accumulated");
  }

  void define(const Inst *in, ValueId v, Type t) {
    if (v == 0 || v >= k_->nextValue) {
      err("kernel " + k_->name + ": value id %" + std::to_string(v) + " out of range");
      return;
    }
    if (!defined_.insert(v).second)
      err("kernel " + k_->name + ": %" + std::to_string(v) + " defined twice");
    if (type(v) != t)
      err("kernel " + k_->name + ": %" + std::to_string(v) + " has type " + typeName(type(v)) +
          " in valueTypes but " + typeName(t) + " at its definition");
    scopes_.back().insert(v);
    (void)in;
  }
  bool inScope(ValueId v) const {
    for (const auto &s : scopes_)
      if (s.count(v))
        return true;
    return false;
  }

  void block(const Block &b) {
    scopes_.emplace_back();
    if (&b != &k_->body)
      define(nullptr, b.arg, Type::I);
    for (const auto &ip : b.insts)
      inst(*ip, b);
    scopes_.pop_back();
  }

  void expectType(const Inst &in, size_t k, Type t) {
    if (k < in.args.size() && type(in.args[k]) != t)
      err(in, "operand " + std::to_string(k + 1) + " must be " + typeName(t) + ", is " +
                  typeName(type(in.args[k])));
  }

  bool checkBuffer(const Inst &in) {
    if (in.buffer < 0 || in.buffer >= static_cast<int>(m_.buffers.size())) {
      err(in, "bad buffer index");
      return false;
    }
    return true;
  }

  void write(const Inst &in) {
    const Buffer &b = m_.buffers[in.buffer];
    (in.op == Op::Store ? stored_ : accumulated_).insert(in.buffer);
    written_.insert(in.buffer);
    bool init = k_->kind == KernelKind::Init;
    bool adj = k_->primal >= 0;
    if (b.role == Role::State || b.role == Role::Command || b.role == Role::Window ||
        (!init && (b.role == Role::Body || b.role == Role::Param)))
      err(in, "kernel may not write a " + std::string(roleName(b.role)) + " buffer");
    if (adj && (b.role == Role::NextState || b.role == Role::Output))
      err(in, "an adjoint kernel may not write the forward results");
    if (b.elem != type(in.args.at(1)))
      err(in, "stored value type does not match the buffer");
  }

  void inst(const Inst &in, const Block &b) {
    ++counter_;
    int n = opNumArgs(in.op);
    if (n >= 0 && static_cast<int>(in.args.size()) != n) {
      err(in, "wrong operand count");
      return;
    }
    for (ValueId a : in.args)
      if (!inScope(a)) {
        err(in, "operand %" + std::to_string(a) + " is not defined before use or not in scope");
        return;
      }
    Type rt = opResultType(in.op);
    switch (in.op) {
    EVOC_IR_CASE_FLOAT_BINARY:
    EVOC_IR_CASE_FLOAT_UNARY:
      for (size_t k = 0; k < in.args.size(); ++k)
        expectType(in, k, Type::F);
      break;
    case Op::Select:
      expectType(in, 0, Type::B);
      rt = type(in.args[1]);
      if (rt != Type::F && rt != Type::I)
        err(in, "select branches must be f or i");
      expectType(in, 2, rt);
      break;
    EVOC_IR_CASE_COMPARE : {
      Type t = type(in.args[0]);
      bool ok =
          t == Type::F || t == Type::I || (t == Type::B && (in.op == Op::Eq || in.op == Op::Ne));
      if (!ok)
        err(in, "cannot compare values of type " + std::string(typeName(t)));
      expectType(in, 1, t);
      break;
    }
    case Op::And:
    case Op::Or:
    case Op::Not:
      for (size_t k = 0; k < in.args.size(); ++k)
        expectType(in, k, Type::B);
      break;
    case Op::IAdd:
    case Op::ISub:
    case Op::IMul:
    case Op::IToF:
      for (size_t k = 0; k < in.args.size(); ++k)
        expectType(in, k, Type::I);
      break;
    case Op::FToI:
      expectType(in, 0, Type::F);
      break;
    case Op::Size:
    case Op::Loop:
      if (in.set < 0 || in.set >= static_cast<int>(m_.sets.size()))
        err(in, "bad set index");
      break;
    case Op::Load:
      expectType(in, 0, Type::I);
      if (!checkBuffer(in))
        return;
      rt = m_.buffers[in.buffer].elem;
      // A temp the step keeps (tape) reaches step.adj holding the step's values.
      if (m_.buffers[in.buffer].role == Role::Temp && !written_.count(in.buffer) &&
          !(m_.buffers[in.buffer].tape && k_->kind == KernelKind::StepAdj))
        err(in, "temporary read before it is written");
      if (m_.buffers[in.buffer].role == Role::NextState ||
          m_.buffers[in.buffer].role == Role::Output)
        err(in, "a kernel may not read a " + std::string(roleName(m_.buffers[in.buffer].role)) +
                    " buffer (the runtime does not supply it as an input)");
      break;
    case Op::Store:
    case Op::AccAdd:
      expectType(in, 0, Type::I);
      if (checkBuffer(in))
        write(in);
      break;
    case Op::Local:
      slotBlock_[in.result] = &b;
      break;
    case Op::LocalAdd:
    case Op::LocalMax:
    case Op::LocalMin:
      if (!slotBlock_.count(in.args[0]))
        err(in, "first operand is not a local");
      else if (slotUpdatedAfterGet_.count(in.args[0]))
        err(in, "local updated after it was read");
      lastUpdate_[in.args[0]] = counter_;
      expectType(in, 1, Type::F);
      break;
    case Op::LocalGet:
      if (!slotBlock_.count(in.args[0]))
        err(in, "operand is not a local");
      else if (slotBlock_[in.args[0]] != &b)
        err(in, "a local is read only in the block that declares it");
      slotUpdatedAfterGet_.insert(in.args[0]);
      break;
    case Op::ConstF:
    case Op::ConstI:
    case Op::ConstB:
    case Op::Time:
      break;
    }
    if (in.op == Op::Loop) {
      if (!in.body) {
        err(in, "loop without a body");
        return;
      }
      block(*in.body);
      return;
    }
    if (in.op == Op::Local) {
      define(&in, in.result, Type::None);
      return;
    }
    if (in.type != rt)
      err(in, std::string("result type is ") + typeName(in.type) + ", expected " + typeName(rt));
    if (rt != Type::None)
      define(&in, in.result, rt);
    else if (in.result)
      err(in, "op has no result");
  }

  const Module &m_;
  std::vector<std::string> &errs_;
  const Kernel *k_ = nullptr;
  std::set<ValueId> defined_;
  std::vector<std::set<ValueId>> scopes_;
  std::map<ValueId, const Block *> slotBlock_;
  std::set<ValueId> slotUpdatedAfterGet_;
  std::map<ValueId, int> lastUpdate_;
  std::set<int> written_, stored_, accumulated_;
  int counter_ = 0;
};

} // namespace

std::vector<std::string> verify(const Module &m) {
  std::vector<std::string> errs;
  Verifier(m, errs).module();
  return errs;
}

void verifyAfter(const Module &m, const std::string &after) {
#ifdef EVOC_VERIFY_IR
  auto errs = verify(m);
  if (errs.empty())
    return;
  std::string msg = "IR verification failed after " + after + ":";
  for (const auto &e : errs)
    msg += "\n  " + e;
  internalError(__FILE__, __LINE__, msg);
#else
  (void)m;
  (void)after;
#endif
}

} // namespace evoc::ir
