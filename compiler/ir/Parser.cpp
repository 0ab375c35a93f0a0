// A line-oriented parser for the IR text form written by Printer.cpp.
#include "ir/Parser.h"

#include <map>
#include <sstream>
#include <vector>

#include "ir/Builder.h"
#include "ir/Printer.h"
#include "support/Error.h"

namespace evoc::ir {
namespace {

bool isPunct(char c) {
  return c == ',' || c == '[' || c == ']' || c == '{' || c == '}' || c == '=';
}

std::vector<std::string> tokenize(const std::string &line) {
  std::vector<std::string> toks;
  size_t i = 0;
  while (i < line.size()) {
    char c = line[i];
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
    } else if (isPunct(c)) {
      toks.emplace_back(1, c);
      ++i;
    } else {
      size_t j = i;
      while (j < line.size() && !isPunct(line[j]) && line[j] != ' ' && line[j] != '\t' &&
             line[j] != '\r')
        ++j;
      toks.push_back(line.substr(i, j - i));
      i = j;
    }
  }
  return toks;
}

class Parser {
public:
  explicit Parser(const std::string &text) {
    std::istringstream is(text);
    std::string l;
    while (std::getline(is, l))
      lines_.push_back(l);
#define EVOC_X(Name, mnemonic, nargs, type, traits) ops_[mnemonic] = Op::Name;
    EVOC_IR_OPS(EVOC_X)
#undef EVOC_X
  }

  Module run() {
    for (ln_ = 0; ln_ < lines_.size(); ++ln_) {
      toks_ = tokenize(lines_[ln_]);
      pos_ = 0;
      if (toks_.empty() || toks_[0][0] == ';')
        continue;
      std::string w = next();
      if (w == "module")
        moduleLine();
      else if (w == "file")
        fileLine();
      else if (w == "set")
        setLine();
      else if (w == "buffer")
        bufferLine();
      else if (w == "product") { // GRAD ROWS X (WindowProduct)
        WindowProduct p;
        p.grad = findBuffer(next());
        p.rows = findBuffer(next());
        p.x = findBuffer(next());
        m_.products.push_back(p);
      } else if (w == "kernel")
        kernelLine();
      else
        fail("expected module, file, set, buffer, product or kernel, found '" + w + "'");
    }
    for (auto &[b, name] : primals_)
      m_.buffers[b].primal = findBuffer(name);
    return std::move(m_);
  }

private:
  [[noreturn]] void fail(const std::string &msg) {
    throw Error("ir:" + std::to_string(ln_ + 1) + ": " + msg);
  }
  bool atEnd() const { return pos_ >= toks_.size(); }
  std::string next() {
    if (atEnd())
      fail("unexpected end of line");
    return toks_[pos_++];
  }
  void expect(const std::string &t) {
    std::string got = next();
    if (got != t)
      fail("expected '" + t + "', found '" + got + "'");
  }
  int64_t integer(const std::string &s) {
    try {
      size_t n;
      int64_t v = std::stoll(s, &n);
      if (n == s.size())
        return v;
    } catch (...) {
    }
    fail("expected an integer, found '" + s + "'");
  }
  double number(const std::string &s) {
    try {
      size_t n;
      double v = std::stod(s, &n);
      if (n == s.size())
        return v;
    } catch (...) {
    }
    if (s == "inf")
      return 1.0 / 0.0;
    if (s == "-inf")
      return -1.0 / 0.0;
    if (s == "nan" || s == "-nan")
      return 0.0 / 0.0;
    fail("expected a number, found '" + s + "'");
  }
  int findSet(const std::string &n) {
    int s = m_.findSet(n);
    if (s < 0)
      fail("unknown set '" + n + "'");
    return s;
  }
  int findBuffer(const std::string &n) {
    int b = m_.findBuffer(n);
    if (b < 0)
      fail("unknown buffer '" + n + "'");
    return b;
  }
  // key=value attributes up to the end of the line or a '{'.
  std::vector<std::pair<std::string, std::string>> attrs() {
    std::vector<std::pair<std::string, std::string>> out;
    while (!atEnd() && toks_[pos_] != "{") {
      std::string k = next();
      if (!atEnd() && toks_[pos_] == "=") {
        ++pos_;
        std::string v = next();
        while (!atEnd() && toks_[pos_] == ",") { // comma lists
          ++pos_;
          v += "," + next();
        }
        out.emplace_back(k, v);
      } else {
        out.emplace_back(k, "");
      }
    }
    return out;
  }
  static std::vector<std::string> split(const std::string &s, char c) {
    std::vector<std::string> out;
    std::string cur;
    for (char ch : s) {
      if (ch == c) {
        out.push_back(cur);
        cur.clear();
      } else
        cur += ch;
    }
    out.push_back(cur);
    return out;
  }

  // The rest of the line, verbatim: file names may hold spaces.
  void fileLine() {
    const std::string &l = lines_[ln_];
    size_t at = l.find("file") + 4;
    if (at < l.size() && l[at] == ' ')
      ++at;
    m_.files.push_back(l.substr(at));
    pos_ = toks_.size();
  }

  void moduleLine() {
    m_.name = next();
    for (auto &[k, v] : attrs()) {
      if (k == "precision" && (v == "f64" || v == "f32"))
        m_.precision = v == "f64" ? Precision::F64 : Precision::F32;
      else
        fail("bad module attribute '" + k + "'");
    }
  }

  void setLine() {
    ElementSet s;
    s.name = next();
    for (auto &[k, v] : attrs()) {
      if (k == "body")
        s.fromBody = true;
      else if (k == "grid")
        s.grid = true;
      else if (k == "base")
        s.base = integer(v);
      else if (k == "terms") {
        for (auto &t : split(v, ',')) {
          auto f = split(t, '*');
          if (f.size() != 2)
            fail("bad set term '" + t + "'");
          s.terms.emplace_back(findSet(f[0]), integer(f[1]));
        }
      } else if (k == "layout") {
        for (auto &t : split(v, ',')) {
          auto f = split(t, '*');
          if (f.size() != 2)
            fail("bad layout segment '" + t + "'");
          s.layout.emplace_back(f[0] == "-" ? -1 : findSet(f[0]), integer(f[1]));
        }
      } else if (k == "pairs") {
        for (auto &t : split(v, ',')) {
          auto f = split(t, ':');
          if (f.size() != 2)
            fail("bad pair endpoint '" + t + "'");
          s.pairs.emplace_back(f[0], findSet(f[1]));
        }
      } else if (k.rfind("value.", 0) == 0) {
        std::vector<double> vals;
        for (auto &t : split(v, ';'))
          vals.push_back(number(t));
        s.values.emplace_back(k.substr(6), std::move(vals));
      } else
        fail("bad set attribute '" + k + "'");
    }
    m_.sets.push_back(s);
  }

  void bufferLine() {
    Buffer b;
    b.name = next();
    for (auto &[k, v] : attrs()) {
      if (k == "elem")
        b.elem = v == "f" ? Type::F : v == "i" ? Type::I : (fail("bad elem"), Type::F);
      else if (k == "role") {
        bool ok = false;
        for (Role r : {Role::State, Role::NextState, Role::Body, Role::Param, Role::Temp,
                       Role::Output, Role::Adjoint, Role::Command, Role::Window})
          if (v == roleName(r)) {
            b.role = r;
            ok = true;
          }
        if (!ok)
          fail("bad role '" + v + "'");
      } else if (k == "sets") {
        for (auto &s : split(v, ','))
          b.sets.push_back(findSet(s));
      } else if (k == "comps")
        b.comps = static_cast<int>(integer(v));
      else if (k == "field")
        b.field = v;
      else if (k == "time") {
        bool ok = false;
        for (TimeRef t :
             {TimeRef::Current, TimeRef::First, TimeRef::Last, TimeRef::Fixed, TimeRef::Offset})
          if (v == timeRefName(t)) {
            b.time = t;
            ok = true;
          }
        if (!ok)
          fail("bad time '" + v + "'");
      } else if (k == "at")
        b.fixedTime = integer(v);
      else if (k == "col")
        b.column = static_cast<int>(integer(v));
      else if (k == "diff")
        b.differentiable = true;
      else if (k == "tape")
        b.tape = true;
      else if (k == "primal")
        primals_.emplace_back(static_cast<int>(m_.buffers.size()), v);
      else if (k == "init")
        b.init = v;
      else if (k == "gain")
        b.initGain = number(v);
      else if (k == "start")
        for (const std::string &x : split(v, ','))
          b.start.push_back(number(x));
      else
        fail("bad buffer attribute '" + k + "'");
    }
    m_.buffers.push_back(b);
  }

  void kernelLine() {
    Kernel &k = addKernel(m_, next());
    for (auto &[key, v] : attrs()) {
      if (key == "kind") {
        bool ok = false;
        for (KernelKind kk :
             {KernelKind::Step, KernelKind::Loss, KernelKind::LossStep, KernelKind::StepAdj,
              KernelKind::LossAdj, KernelKind::LossStepAdj, KernelKind::Init})
          if (v == kindName(kk)) {
            k.kind = kk;
            ok = true;
          }
        if (!ok)
          fail("bad kernel kind '" + v + "'");
      } else if (key == "window") {
        auto p = split(v, ':');
        if (p.size() != 2)
          fail("bad window '" + v + "'");
        k.windowBegin = integer(p[0]);
        k.windowEnd = integer(p[1]);
      } else if (key == "slot")
        k.windowSlot = static_cast<int>(integer(v));
      else if (key == "reduce") {
        bool ok = false;
        for (WindowReduce r :
             {WindowReduce::Sum, WindowReduce::Mean, WindowReduce::Max, WindowReduce::Min})
          if (v == reduceName(r)) {
            k.windowReduce = r;
            ok = true;
          }
        if (!ok)
          fail("bad window reduction '" + v + "'");
      } else if (key == "primal")
        k.primal = static_cast<int>(integer(v));
      else
        fail("bad kernel attribute '" + key + "'");
    }
    expect("{");
    k_ = &k;
    slots_.clear();
    k.valueTypes.assign(1, Type::None);
    block(k.body);
    k.nextValue = static_cast<ValueId>(k.valueTypes.size());
  }

  ValueId valueRef(const std::string &s) {
    if (s.size() < 2 || s[0] != '%')
      fail("expected a value '%N', found '" + s + "'");
    int64_t v = integer(s.substr(1));
    if (v <= 0 || v >= static_cast<int64_t>(k_->valueTypes.size()) ||
        (k_->valueTypes[v] == Type::None && !slots_.count(v)))
      fail("use of undefined value " + s);
    return static_cast<ValueId>(v);
  }
  ValueId define(const std::string &s, Type t) {
    if (s.size() < 2 || s[0] != '%')
      fail("expected a value '%N', found '" + s + "'");
    int64_t v = integer(s.substr(1));
    if (v <= 0 || v > (1 << 30))
      fail("bad value id " + s);
    if (static_cast<size_t>(v) >= k_->valueTypes.size())
      k_->valueTypes.resize(v + 1, Type::None);
    if (k_->valueTypes[v] != Type::None || slots_.count(v))
      fail("value " + s + " defined twice");
    k_->valueTypes[v] = t;
    if (t == Type::None)
      slots_.insert({static_cast<ValueId>(v), true});
    return static_cast<ValueId>(v);
  }

  // Parses instructions up to the matching '}' line.
  void block(Block &b) {
    for (++ln_; ln_ < lines_.size(); ++ln_) {
      toks_ = tokenize(lines_[ln_]);
      pos_ = 0;
      if (toks_.empty() || toks_[0][0] == ';')
        continue;
      if (toks_[0] == "}" && toks_.size() == 1)
        return;
      b.insts.push_back(inst());
    }
    fail("missing '}'");
  }

  std::unique_ptr<Inst> inst() {
    auto in = std::make_unique<Inst>();
    std::string res;
    if (toks_[0][0] == '%') {
      res = next();
      expect("=");
    }
    std::string mn = next();
    auto it = ops_.find(mn);
    if (it == ops_.end())
      fail("unknown op '" + mn + "'");
    in->op = it->second;
    Op op = in->op;
    Type t = opResultType(op);
    auto argList = [&] {
      while (!atEnd()) {
        in->args.push_back(valueRef(next()));
        if (!atEnd())
          expect(",");
      }
    };
    switch (op) {
    case Op::ConstF:
      in->f = number(next());
      break;
    case Op::ConstI:
      in->i = integer(next());
      break;
    case Op::ConstB: {
      std::string v = next();
      if (v != "true" && v != "false")
        fail("expected true or false");
      in->i = v == "true";
      break;
    }
    case Op::Size:
      in->set = findSet(next());
      break;
    case Op::Local:
      in->f = number(next());
      break;
    case Op::Load:
    case Op::Store:
    case Op::AccAdd:
      in->buffer = findBuffer(next());
      expect("[");
      in->args.push_back(valueRef(next()));
      expect("]");
      if (op != Op::Load) {
        expect(",");
        in->args.push_back(valueRef(next()));
      } else {
        t = m_.buffers[in->buffer].elem;
      }
      break;
    case Op::Loop: {
      in->set = findSet(next());
      std::string arg = next();
      expect("{");
      in->body = std::make_unique<Block>();
      in->body->arg = define(arg, Type::I);
      if (!atEnd())
        fail("unexpected text after '{'");
      block(*in->body);
      return in;
    }
    case Op::Time:
    case Op::LocalGet:
    EVOC_IR_CASE_LOCAL_UPDATE:
    EVOC_IR_CASE_COMPUTE:
      argList();
      if (opNumArgs(op) >= 0 && static_cast<int>(in->args.size()) != opNumArgs(op))
        fail(std::string("wrong operand count for ") + opName(op));
      if (op == Op::Select)
        t = k_->valueTypes[in->args[1]];
      break;
    }
    if (!atEnd())
      fail("unexpected '" + toks_[pos_] + "'");
    in->type = op == Op::Local ? Type::None : t;
    bool hasResult = op == Op::Local || t != Type::None;
    if (hasResult != !res.empty())
      fail(hasResult ? std::string(opName(op)) + " needs a result" : "op has no result");
    if (hasResult)
      in->result = define(res, in->type);
    return in;
  }

  std::vector<std::string> lines_;
  size_t ln_ = 0;
  std::vector<std::string> toks_;
  size_t pos_ = 0;
  std::map<std::string, Op> ops_;
  std::vector<std::pair<int, std::string>> primals_;
  std::map<ValueId, bool> slots_;
  Module m_;
  Kernel *k_ = nullptr;
};

} // namespace

Module parse(const std::string &text) { return Parser(text).run(); }

} // namespace evoc::ir
