// dumpProgram: the readable, indented AST dump of `evoc compile --emit ast`.
#include "frontend/AstDump.h"

#include <fmt/format.h>

#include <ostream>
#include <sstream>

namespace evoc::ast {

namespace {

class Dumper {
public:
  explicit Dumper(std::ostream &out) : out(out) {}

  void module(const Module &m) {
    line(0) << "Module " << m.path << "\n";
    for (const auto &d : m.decls)
      decl(*d, 1);
  }

private:
  std::ostream &out;

  std::ostream &line(int depth) {
    for (int i = 0; i < depth; ++i)
      out << "  ";
    return out;
  }
  static std::string rng(const SourceRange &r) {
    std::ostringstream s;
    s << "<" << r.begin.line << ":" << r.begin.col << "-" << r.end.line << ":" << r.end.col << ">";
    return s.str();
  }
  static std::string nameRef(const NameExpr &n) {
    switch (n.ref) {
    case NameRef::Unresolved:
      return "";
    case NameRef::Let:
      return " [let]";
    case NameRef::Param:
      return " [param]";
    case NameRef::Element:
      return " [loop element]";
    case NameRef::WindowVar:
      return " [window variable]";
    case NameRef::Set:
      return " [set]";
    case NameRef::World:
      return " [world]";
    case NameRef::LastTime:
      return " [T = " + num(n.constValue) + "]";
    case NameRef::Constant:
      return " [constant " + num(n.constValue) + "]";
    case NameRef::Decl:
      return " [declaration]";
    case NameRef::Command: // not annotated (the dumps predate commands)
      return "";
    }
    return "";
  }
  static std::string memberRef(const MemberExpr &m) {
    switch (m.ref) {
    case MemberRef::Unresolved:
      return "";
    case MemberRef::Field:
      return std::string(" [") + fieldKindSpelling(m.field->kind) + " field]";
    case MemberRef::Endpoint:
      return " [endpoint]";
    case MemberRef::Component:
      return " [component " + std::to_string(m.component) + "]";
    case MemberRef::SetField:
      return std::string(" [") + fieldKindSpelling(m.field->kind) + " field of the set]";
    case MemberRef::WorldSetting:
      return m.worldKey == "ground" || m.worldKey == "grid"
                 ? " [world setting]"
                 : " [world setting = " + num(m.constValue) + "]";
    case MemberRef::GridIndex:
      return " [grid index]";
    case MemberRef::GridOffset:
      return " [stencil offset]";
    }
    return "";
  }
  // The shortest text that reads back as v: two different numbers never
  // dump alike (evoc fmt's check and the resume fingerprint rely on it).
  static std::string num(double v) { return fmt::format("{}", v); }
  static std::string ty(const Type &t) { return t.isError() ? "" : " : " + typeToString(t); }

  void settings(const SettingsBlock &b, int d) {
    for (const auto &s : b.settings) {
      line(d) << "Setting " << s.key.name << " " << rng(s.range) << "\n";
      for (size_t i = 0; i < s.values.size(); ++i) {
        expr(*s.values[i], d + 1);
        if (i < s.suffixes.size() && !s.suffixes[i].name.empty())
          line(d + 2) << "suffix " << s.suffixes[i].name << " " << rng(s.suffixes[i].range) << "\n";
      }
    }
    for (const auto &nb : b.blocks) {
      line(d) << "Block " << nb.name.name << " " << rng(nb.range) << "\n";
      settings(*nb.block, d + 1);
    }
  }

  void decl(const Decl &d, int depth) {
    switch (d.kind) {
    case DeclKind::Import: {
      auto &i = *cast<ImportDecl>(&d);
      line(depth) << "Import \"" << i.path << "\" " << rng(i.range);
      if (!i.resolvedPath.empty())
        out << " -> " << i.resolvedPath;
      out << "\n";
      break;
    }
    case DeclKind::World:
      line(depth) << "World " << rng(d.range) << "\n";
      settings(cast<WorldDecl>(&d)->body, depth + 1);
      break;
    case DeclKind::Evolve:
      line(depth) << "Evolve " << rng(d.range) << "\n";
      settings(cast<EvolveDecl>(&d)->body, depth + 1);
      break;
    case DeclKind::Commands:
      line(depth) << "Commands " << rng(d.range) << "\n";
      settings(cast<CommandsDecl>(&d)->body, depth + 1);
      break;
    case DeclKind::Train:
      line(depth) << "Train " << rng(d.range) << "\n";
      settings(cast<TrainDecl>(&d)->body, depth + 1);
      break;
    case DeclKind::Requires:
      line(depth) << "Requires " << rng(d.range) << "\n";
      settings(cast<RequiresDecl>(&d)->body, depth + 1);
      break;
    case DeclKind::Part: {
      auto &p = *cast<PartDecl>(&d);
      line(depth) << "Part " << p.name.name << " " << rng(p.range) << "\n";
      for (const auto &prm : p.params) {
        line(depth + 1) << "Param " << prm.name.name << " " << rng(prm.range) << "\n";
        expr(*prm.init, depth + 2);
        expr(*prm.lo, depth + 2);
        expr(*prm.hi, depth + 2);
      }
      settings(p.body, depth + 1);
      break;
    }
    case DeclKind::Fn:
      fnDecl(*cast<FnDecl>(&d), depth);
      break;
    case DeclKind::Physics:
      physicsDecl(*cast<PhysicsDecl>(&d), depth);
      break;
    case DeclKind::Grammar:
      grammarDecl(*cast<GrammarDecl>(&d), depth);
      break;
    case DeclKind::Material: {
      auto &m = *cast<MaterialDecl>(&d);
      line(depth) << "Material " << m.name.name << " " << rng(m.range) << "\n";
      settings(m.body, depth + 1);
      break;
    }
    case DeclKind::Body: {
      auto &b = *cast<BodyDecl>(&d);
      line(depth) << "Body " << b.kindWord.name << " " << b.name.name << " " << rng(b.range)
                  << "\n";
      settings(b.body, depth + 1);
      break;
    }
    case DeclKind::Mutation:
      line(depth) << "Mutation " << rng(d.range) << "\n";
      for (const auto &r : cast<MutationDecl>(&d)->rules) {
        line(depth + 1) << "Rule " << r.op.name;
        if (!r.target.name.empty())
          out << " " << r.target.name;
        if (r.untilChanged)
          out << " until-changed";
        out << " " << rng(r.range) << "\n";
        expr(*r.rate, depth + 2);
      }
      break;
    case DeclKind::Controller:
      controllerDecl(*cast<ControllerDecl>(&d), depth);
      break;
    case DeclKind::Loss: {
      auto &l = *cast<LossDecl>(&d);
      line(depth) << "Loss " << l.name.name << " " << rng(l.range) << "\n";
      for (const auto &s : l.lets)
        stmt(*s, depth + 1);
      if (l.value)
        expr(*l.value, depth + 1);
      break;
    }
    }
  }

  void fnDecl(const FnDecl &f, int depth) {
    line(depth) << "Fn " << f.name.name << " -> " << f.result.name.name << " " << rng(f.range)
                << "\n";
    for (const auto &p : f.params)
      line(depth + 1) << "Param " << p.name.name << ": " << p.type.name.name << " " << rng(p.range)
                      << "\n";
    for (const auto &s : f.body)
      stmt(*s, depth + 1);
  }

  void physicsDecl(const PhysicsDecl &p, int depth) {
    line(depth) << "Physics " << p.name.name << " " << rng(p.range) << "\n";
    for (const auto &s : p.sets) {
      line(depth + 1) << "Set " << s->name.name << " " << rng(s->range) << "\n";
      for (const auto &e : s->endpoints)
        line(depth + 2) << "Endpoint " << e.name.name << ": " << e.setName.name << " "
                        << rng(e.range) << "\n";
      for (const auto &f : s->fields) {
        line(depth + 2) << "Field " << fieldKindSpelling(f->kind) << " " << f->name.name << ": "
                        << f->type.name.name << " " << rng(f->range) << "\n";
        if (f->init)
          expr(*f->init, depth + 3);
      }
    }
    line(depth + 1) << "Step " << rng(p.stepRange) << "\n";
    for (const auto &s : p.step)
      stmt(*s, depth + 2);
  }

  void grammarDecl(const GrammarDecl &g, int depth) {
    line(depth) << "Grammar " << g.name.name << " " << rng(g.range) << "\n";
    settings(g.body, depth + 1);
    for (const auto &l : g.limits) {
      line(depth + 1) << "Limit " << l.kind.name << " " << l.symbol.name << " " << rng(l.range)
                      << "\n";
      expr(*l.value, depth + 2);
    }
    for (const auto &p : g.productions) {
      line(depth + 1) << "Production " << p.lhs.name << " " << rng(p.range) << "\n";
      for (const auto &a : p.alternatives)
        alternative(a, depth + 2);
    }
  }

  void alternative(const Alternative &a, int depth) {
    line(depth) << "Alternative " << a.part.name;
    if (!a.attach.name.empty() || a.hasAngle || a.hasTurn) {
      out << "<" << a.attach.name;
      if (a.hasAngle)
        out << (a.attach.name.empty() ? "" : ", ") << "angle " << a.angleLo << ".." << a.angleHi;
      if (a.hasTurn)
        out << (a.attach.name.empty() && !a.hasAngle ? "" : ", ") << "turn " << a.turn;
      out << ">";
    }
    for (const auto &pb : a.ports) {
      out << " ";
      if (pb.tied)
        out << "[" << pb.port.name << "," << pb.port2.name << "]";
      else
        out << pb.port.name;
      out << ":" << pb.symbol.name << (pb.optional ? "?" : "");
    }
    out << " " << rng(a.range) << "\n";
    if (a.weight)
      expr(*a.weight, depth + 1);
  }

  void controllerDecl(const ControllerDecl &c, int depth) {
    line(depth) << "Controller " << c.name.name << " " << rng(c.range) << "\n";
    for (const auto &l : c.lets)
      stmt(*l, depth + 1);
    line(depth + 1) << "Inputs " << rng(c.inputsRange) << "\n";
    for (const auto &e : c.inputs)
      expr(*e, depth + 2);
    for (const auto &h : c.hidden) {
      line(depth + 1) << "Hidden " << h.activation.name << "\n";
      expr(*h.units, depth + 2);
    }
    for (const auto &o : c.outputs) {
      line(depth + 1) << "Output " << o.activation.name << "\n";
      expr(*o.target, depth + 2);
    }
    if (c.init) {
      line(depth + 1) << "Init\n";
      expr(*c.init, depth + 2);
    }
  }

  void stmt(const Stmt &s, int d) {
    switch (s.kind) {
    case StmtKind::Let: {
      auto &l = *cast<LetStmt>(&s);
      line(d) << "Let " << l.name.name;
      if (l.declaredType)
        out << ": " << l.declaredType->name.name;
      out << " " << rng(l.range) << ty(l.type) << "\n";
      expr(*l.value, d + 1);
      break;
    }
    case StmtKind::Assign: {
      auto &a = *cast<AssignStmt>(&s);
      const char *op = a.op == AssignOp::Set ? "=" : a.op == AssignOp::AddTo ? "+=" : "-=";
      line(d) << "Assign " << op << " " << rng(a.range);
      if (a.ref == AssignRef::NextState)
        out << " [next state]";
      else if (a.ref == AssignRef::Accumulate)
        out << " [accumulate]";
      out << "\n";
      expr(*a.target, d + 1);
      expr(*a.value, d + 1);
      break;
    }
    case StmtKind::For: {
      auto &f = *cast<ForStmt>(&s);
      line(d) << "For " << f.var.name << " in " << (f.stencil ? "stencil of " : "")
              << f.setName.name << " " << rng(f.range) << "\n";
      if (f.stencil) {
        expr(*f.stencil->base, d + 1);
        expr(*f.stencil->size, d + 1);
      }
      for (const auto &b : f.body)
        stmt(*b, d + 1);
      break;
    }
    case StmtKind::Return:
      line(d) << "Return " << rng(s.range) << "\n";
      expr(*cast<ReturnStmt>(&s)->value, d + 1);
      break;
    }
  }

  void expr(const Expr &e, int d) {
    switch (e.kind) {
    case ExprKind::Number:
      line(d) << "Number " << cast<NumberExpr>(&e)->text;
      break;
    case ExprKind::Bool:
      line(d) << "Bool " << (cast<BoolExpr>(&e)->value ? "true" : "false");
      break;
    case ExprKind::String:
      line(d) << "String \"" << cast<StringExpr>(&e)->value << "\"";
      break;
    case ExprKind::Name: {
      auto &n = *cast<NameExpr>(&e);
      line(d) << "Name " << n.name << nameRef(n);
      break;
    }
    case ExprKind::Member: {
      auto &m = *cast<MemberExpr>(&e);
      line(d) << "Member ." << m.member.name << memberRef(m);
      break;
    }
    case ExprKind::Index:
      line(d) << "Index";
      break;
    case ExprKind::Call: {
      auto &c = *cast<CallExpr>(&e);
      line(d) << "Call " << c.callee.name;
      if (c.ref == CallRef::Builtin)
        out << " [builtin " << builtinName(c.builtin) << "]";
      else if (c.ref == CallRef::Fn)
        out << " [fn]";
      break;
    }
    case ExprKind::Unary:
      line(d) << "Unary " << unaryOpSpelling(cast<UnaryExpr>(&e)->op);
      break;
    case ExprKind::Binary:
      line(d) << "Binary " << binaryOpSpelling(cast<BinaryExpr>(&e)->op);
      break;
    case ExprKind::If:
      line(d) << "If";
      break;
    case ExprKind::Window: {
      auto &w = *cast<WindowExpr>(&e);
      line(d) << "Window " << w.op_name.name << " " << w.var.name;
      break;
    }
    case ExprKind::Stencil: {
      auto &w = *cast<StencilExpr>(&e);
      line(d) << "Stencil " << w.op_name.name << " " << w.loop->var.name << " in "
              << w.loop->setName.name;
      break;
    }
    case ExprKind::Tuple:
      line(d) << "Tuple";
      break;
    case ExprKind::List:
      line(d) << "List";
      break;
    }
    out << " " << rng(e.range) << ty(e.type) << "\n";
    switch (e.kind) {
    case ExprKind::Member:
      expr(*cast<MemberExpr>(&e)->base, d + 1);
      break;
    case ExprKind::Index:
      expr(*cast<IndexExpr>(&e)->base, d + 1);
      expr(*cast<IndexExpr>(&e)->index, d + 1);
      break;
    case ExprKind::Call: {
      auto &c = *cast<CallExpr>(&e);
      for (const auto &a : c.args)
        expr(*a, d + 1);
      for (const auto &a : c.namedArgs) {
        line(d + 1) << a.name.name << " =\n";
        expr(*a.value, d + 2);
      }
      break;
    }
    case ExprKind::Unary:
      expr(*cast<UnaryExpr>(&e)->operand, d + 1);
      break;
    case ExprKind::Binary:
      expr(*cast<BinaryExpr>(&e)->lhs, d + 1);
      expr(*cast<BinaryExpr>(&e)->rhs, d + 1);
      break;
    case ExprKind::If:
      expr(*cast<IfExpr>(&e)->cond, d + 1);
      expr(*cast<IfExpr>(&e)->thenExpr, d + 1);
      expr(*cast<IfExpr>(&e)->elseExpr, d + 1);
      break;
    case ExprKind::Window: {
      auto &w = *cast<WindowExpr>(&e);
      expr(*w.lo, d + 1);
      expr(*w.hi, d + 1);
      expr(*w.body, d + 1);
      break;
    }
    case ExprKind::Stencil: {
      auto &w = *cast<StencilExpr>(&e);
      if (w.loop->stencil) {
        expr(*w.loop->stencil->base, d + 1);
        expr(*w.loop->stencil->size, d + 1);
      }
      expr(*w.body, d + 1);
      break;
    }
    case ExprKind::Tuple:
      for (const auto &x : cast<TupleExpr>(&e)->elems)
        expr(*x, d + 1);
      break;
    case ExprKind::List:
      for (const auto &x : cast<ListExpr>(&e)->elems)
        expr(*x, d + 1);
      break;
    default:
      break;
    }
  }
};

} // namespace

void dumpProgram(const Program &program, std::ostream &out) {
  Dumper dumper(out);
  for (const auto &m : program.modules)
    dumper.module(*m);
}

} // namespace evoc::ast
