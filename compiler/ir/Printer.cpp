// The IR printer: one line per instruction, loops as indented blocks.
#include "ir/Printer.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace evoc::ir {

const char *typeName(Type t) {
  switch (t) {
  case Type::None:
    return "none";
  case Type::F:
    return "f";
  case Type::I:
    return "i";
  case Type::B:
    return "b";
  }
  return "?";
}

const char *roleName(Role r) {
  switch (r) {
  case Role::State:
    return "state";
  case Role::NextState:
    return "next";
  case Role::Body:
    return "body";
  case Role::Param:
    return "param";
  case Role::Temp:
    return "temp";
  case Role::Output:
    return "output";
  case Role::Adjoint:
    return "adjoint";
  case Role::Command:
    return "command";
  case Role::Window:
    return "window";
  }
  return "?";
}

const char *reduceName(WindowReduce r) {
  switch (r) {
  case WindowReduce::Sum:
    return "sum";
  case WindowReduce::Mean:
    return "mean";
  case WindowReduce::Max:
    return "max";
  case WindowReduce::Min:
    return "min";
  }
  return "?";
}

const char *kindName(KernelKind k) {
  switch (k) {
  case KernelKind::Step:
    return "step";
  case KernelKind::Loss:
    return "loss";
  case KernelKind::LossStep:
    return "lossstep";
  case KernelKind::StepAdj:
    return "stepadj";
  case KernelKind::LossAdj:
    return "lossadj";
  case KernelKind::LossStepAdj:
    return "lossstepadj";
  case KernelKind::Init:
    return "init";
  }
  return "?";
}

const char *timeRefName(TimeRef t) {
  switch (t) {
  case TimeRef::Current:
    return "current";
  case TimeRef::First:
    return "first";
  case TimeRef::Last:
    return "last";
  case TimeRef::Fixed:
    return "fixed";
  case TimeRef::Offset:
    return "offset";
  }
  return "?";
}

namespace {

// The shortest decimal form that reads back to exactly `v`.
std::string num(double v) {
  char buf[40];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v)
      break;
  }
  return buf;
}

std::string val(ValueId v) { return "%" + std::to_string(v); }

std::string bufName(const Module &m, int b) {
  return b >= 0 && b < static_cast<int>(m.buffers.size()) ? m.buffers[b].name
                                                          : "<buffer" + std::to_string(b) + ">";
}

std::string setName(const Module &m, int s) {
  return s >= 0 && s < static_cast<int>(m.sets.size()) ? m.sets[s].name
                                                       : "<set" + std::to_string(s) + ">";
}

void printBlock(const Module &m, const Block &b, int depth, std::ostream &os) {
  std::string ind(2 * depth, ' ');
  for (const auto &ip : b.insts) {
    os << ind << instToString(m, *ip);
    if (ip->op == Op::Loop) {
      os << " {\n";
      printBlock(m, *ip->body, depth + 1, os);
      os << ind << "}";
    }
    os << "\n";
  }
}

} // namespace

std::string instToString(const Module &m, const Inst &in) {
  std::string s;
  if (in.result && in.op != Op::Loop)
    s = val(in.result) + " = ";
  s += opName(in.op);
  switch (in.op) {
  case Op::ConstF:
    return s + " " + num(in.f);
  case Op::ConstI:
    return s + " " + std::to_string(in.i);
  case Op::ConstB:
    return s + (in.i ? " true" : " false");
  case Op::Size:
    return s + " " + setName(m, in.set);
  case Op::Local:
    return s + " " + num(in.f);
  case Op::Load:
    return s + " " + bufName(m, in.buffer) + "[" + val(in.args.at(0)) + "]";
  case Op::Store:
  case Op::AccAdd:
    return s + " " + bufName(m, in.buffer) + "[" + val(in.args.at(0)) + "], " + val(in.args.at(1));
  case Op::Loop:
    return s + " " + setName(m, in.set) + " " + val(in.body ? in.body->arg : 0);
  case Op::Time:
  case Op::LocalGet:
  EVOC_IR_CASE_LOCAL_UPDATE:
  EVOC_IR_CASE_COMPUTE:
    break;
  }
  for (size_t k = 0; k < in.args.size(); ++k)
    s += (k ? ", " : " ") + val(in.args[k]);
  return s;
}

void printKernel(const Module &m, const Kernel &k, std::ostream &os) {
  os << "kernel " << k.name << " kind=" << kindName(k.kind);
  if (k.kind == KernelKind::LossStep || k.kind == KernelKind::LossStepAdj)
    os << " window=" << k.windowBegin << ":" << k.windowEnd;
  if (k.windowSlot >= 0)
    os << " slot=" << k.windowSlot << " reduce=" << reduceName(k.windowReduce);
  if (k.primal >= 0)
    os << " primal=" << k.primal;
  os << " {\n";
  printBlock(m, k.body, 1, os);
  os << "}\n";
}

void print(const Module &m, std::ostream &os) {
  os << "module " << (m.name.empty() ? "_" : m.name)
     << " precision=" << (m.precision == Precision::F64 ? "f64" : "f32") << "\n";
  for (const auto &f : m.files)
    os << "file " << f << "\n";
  for (const auto &s : m.sets) {
    os << "set " << s.name;
    if (s.fromBody)
      os << " body";
    if (s.grid)
      os << " grid";
    if (s.base)
      os << " base=" << s.base;
    if (!s.terms.empty()) {
      os << " terms=";
      for (size_t i = 0; i < s.terms.size(); ++i)
        os << (i ? "," : "") << setName(m, s.terms[i].first) << "*" << s.terms[i].second;
    }
    if (!s.layout.empty()) {
      os << " layout=";
      for (size_t i = 0; i < s.layout.size(); ++i)
        os << (i ? "," : "") << (s.layout[i].first < 0 ? "-" : setName(m, s.layout[i].first)) << "*"
           << s.layout[i].second;
    }
    if (!s.pairs.empty()) {
      os << " pairs=";
      for (size_t i = 0; i < s.pairs.size(); ++i)
        os << (i ? "," : "") << s.pairs[i].first << ":" << setName(m, s.pairs[i].second);
    }
    for (const auto &[field, vals] : s.values) {
      os << " value." << field << "=";
      for (size_t i = 0; i < vals.size(); ++i)
        os << (i ? ";" : "") << num(vals[i]);
    }
    os << "\n";
  }
  for (const auto &b : m.buffers) {
    os << "buffer " << b.name << " elem=" << typeName(b.elem) << " role=" << roleName(b.role);
    if (!b.sets.empty()) {
      os << " sets=";
      for (size_t i = 0; i < b.sets.size(); ++i)
        os << (i ? "," : "") << setName(m, b.sets[i]);
    }
    if (b.comps != 1)
      os << " comps=" << b.comps;
    if (!b.field.empty())
      os << " field=" << b.field;
    if (b.time != TimeRef::Current)
      os << " time=" << timeRefName(b.time);
    if (b.time == TimeRef::Fixed || b.time == TimeRef::Offset)
      os << " at=" << b.fixedTime;
    if (b.column != 0)
      os << " col=" << b.column;
    if (b.differentiable)
      os << " diff";
    if (b.tape)
      os << " tape";
    if (b.primal >= 0)
      os << " primal=" << bufName(m, b.primal);
    if (b.init != "zeros")
      os << " init=" << b.init;
    if (b.initGain != 1.0)
      os << " gain=" << num(b.initGain);
    for (size_t c = 0; c < b.start.size(); ++c)
      os << (c ? "," : " start=") << num(b.start[c]);
    os << "\n";
  }
  for (const auto &p : m.products)
    os << "product " << bufName(m, p.grad) << " " << bufName(m, p.rows) << " " << bufName(m, p.x)
       << "\n";
  for (const auto &k : m.kernels)
    printKernel(m, k, os);
}

std::string toString(const Module &m) {
  std::ostringstream os;
  print(m, os);
  return os.str();
}

} // namespace evoc::ir
