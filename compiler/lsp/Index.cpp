// Index::build: one walk over the checked AST that declares every named
// thing and records every use of a name (docs/editors.md, "How").
#include "lsp/Index.h"

#include <algorithm>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "support/SourceManager.h"

namespace evoc::lsp {

using namespace ast;

const char *kindWord(SymbolKind k) {
  switch (k) {
  case SymbolKind::File:
    return "file";
  case SymbolKind::Block:
    return "block";
  case SymbolKind::Physics:
    return "physics";
  case SymbolKind::Set:
    return "element set";
  case SymbolKind::Field:
    return "field";
  case SymbolKind::Endpoint:
    return "endpoint";
  case SymbolKind::Fn:
    return "fn";
  case SymbolKind::FnParam:
    return "parameter";
  case SymbolKind::Let:
    return "let";
  case SymbolKind::LoopElement:
    return "loop element";
  case SymbolKind::WindowVar:
    return "window variable";
  case SymbolKind::Material:
    return "material";
  case SymbolKind::Part:
    return "part";
  case SymbolKind::PartParam:
    return "part parameter";
  case SymbolKind::Grammar:
    return "grammar";
  case SymbolKind::GrammarSymbol:
    return "grammar symbol";
  case SymbolKind::Body:
    return "body";
  case SymbolKind::Controller:
    return "controller";
  case SymbolKind::Loss:
    return "loss";
  case SymbolKind::Commands:
    return "commands";
  }
  return "symbol";
}

namespace {

bool covers(const SourceRange &r, int file, int offset) {
  return r.valid() && r.begin.file == file && r.begin.offset <= offset && offset <= r.end.offset;
}

class Builder {
public:
  Builder(Index &ix, const SourceManager &sm) : ix_(ix), sm_(sm) {}

  void run(const Program &p) {
    // Top-level names first: a use may precede its declaration (and sit in
    // another file).
    for (const auto &m : p.modules) {
      Symbol f;
      f.name = m->path;
      f.kind = SymbolKind::File;
      f.nameRange.begin = f.nameRange.end = sm_.locAt(m->file, 0);
      f.range = f.nameRange;
      f.hover = fmt::format("file `{}`", m->path);
      fileSymbol_[m->file] = add(std::move(f));
      for (const auto &d : m->decls)
        declareTop(*d);
    }
    for (const auto &m : p.modules)
      for (const auto &d : m->decls)
        decl(*d);
    // Uses recorded before their target was declared (a grammar symbol used
    // above its production, say) are resolved now.
    for (const auto &[r, target] : pending_) {
      auto it = declOf_.find(target);
      if (it != declOf_.end())
        ix_.occurrences.push_back({r, it->second, false});
    }
  }

private:
  Index &ix_;
  const SourceManager &sm_;
  std::map<const void *, int> declOf_;
  std::map<std::string, int> top_; // top-level name -> symbol
  std::map<int, int> fileSymbol_;  // SourceManager file id -> File symbol
  std::vector<std::pair<SourceRange, const void *>> pending_;
  std::map<std::string, int> scope_; // grammar symbols / part params of the block walked
  int parent_ = -1;

  int add(Symbol s) {
    ix_.symbols.push_back(std::move(s));
    return int(ix_.symbols.size()) - 1;
  }

  std::string text(const SourceRange &r) const {
    if (!r.valid() || r.end.offset <= r.begin.offset)
      return "";
    std::string_view t = sm_.text(r.begin.file);
    return std::string(t.substr(size_t(r.begin.offset), size_t(r.end.offset - r.begin.offset)));
  }

  // The `//` lines right above a declaration, without the slashes.
  std::string docComment(const SourceRange &r) const {
    std::vector<std::string> lines;
    for (int l = r.begin.line - 1; l >= 1; --l) {
      std::string_view s = sm_.lineText(r.begin.file, l);
      size_t i = s.find_first_not_of(" \t");
      if (i == std::string_view::npos || s.substr(i, 2) != "//")
        break;
      std::string_view body = s.substr(i + 2);
      if (!body.empty() && body[0] == ' ')
        body.remove_prefix(1);
      lines.emplace_back(body);
    }
    std::string out;
    for (auto it = lines.rbegin(); it != lines.rend(); ++it)
      out += *it + "\n";
    return out;
  }

  // The declaration as written: whole when short, else its first line.
  std::string excerpt(const SourceRange &r) const {
    std::string t = text(r);
    size_t lines = size_t(std::count(t.begin(), t.end(), '\n'));
    if (lines > 8)
      t = t.substr(0, t.find('\n')) + " ...";
    return t;
  }

  int declare(const void *node, const Ident &name, SymbolKind kind, const SourceRange &range,
              std::string hover = "") {
    Symbol s;
    s.name = name.name;
    s.kind = kind;
    s.nameRange = name.range;
    s.range = range;
    s.parent = parent_;
    if (hover.empty()) {
      hover = fmt::format("{} `{}`\n```evo\n{}\n```", kindWord(kind), name.name, excerpt(range));
      if (std::string doc = docComment(range); !doc.empty())
        hover += "\n\n" + doc;
      if (range.valid() && range.begin.file >= 0 &&
          sm_.path(range.begin.file).find("stdlib") != std::string::npos)
        hover += fmt::format("\n\n(from `{}`)", sm_.path(range.begin.file));
    }
    s.hover = std::move(hover);
    int id = add(std::move(s));
    if (node)
      declOf_[node] = id;
    if (name.range.valid())
      ix_.occurrences.push_back({name.range, id, true});
    return id;
  }

  void use(const SourceRange &r, const void *target) {
    if (target && r.valid())
      pending_.push_back({r, target});
  }
  void useSymbol(const SourceRange &r, int symbol) {
    if (symbol >= 0 && r.valid())
      ix_.occurrences.push_back({r, symbol, false});
  }
  // A name resolved by name: the block's own scope, then the top level.
  bool useName(const SourceRange &r, const std::string &name) {
    for (const auto *names : {&scope_, &top_}) {
      auto it = names->find(name);
      if (it != names->end()) {
        useSymbol(r, it->second);
        return true;
      }
    }
    return false;
  }

  void declareTop(const Decl &d) {
    static const std::map<DeclKind, SymbolKind> kinds = {
        {DeclKind::Fn, SymbolKind::Fn},
        {DeclKind::Physics, SymbolKind::Physics},
        {DeclKind::Material, SymbolKind::Material},
        {DeclKind::Part, SymbolKind::Part},
        {DeclKind::Grammar, SymbolKind::Grammar},
        {DeclKind::Body, SymbolKind::Body},
        {DeclKind::Controller, SymbolKind::Controller},
        {DeclKind::Loss, SymbolKind::Loss},
        {DeclKind::Commands, SymbolKind::Commands}};
    auto k = kinds.find(d.kind);
    if (k == kinds.end() || d.name.name.empty())
      return;
    parent_ = -1;
    int id = declare(&d, d.name, k->second, d.range);
    top_.emplace(d.name.name, id);
    if (const auto *part = dynCast<PartDecl>(&d))
      if (const Setting *ports = part->body.find("ports"))
        for (const auto &v : ports->values)
          if (const auto *c = dynCast<CallExpr>(v.get()))
            ix_.symbols[size_t(id)].ports.push_back(c->callee.name);
  }

  int topOf(const Decl &d) const {
    auto it = declOf_.find(&d);
    return it == declOf_.end() ? -1 : it->second;
  }

  void block(const Decl &d, const char *word) {
    Ident name{word, {}};
    parent_ = -1;
    int id = declare(nullptr, name, SymbolKind::Block, d.range, std::string(word) + " block");
    ix_.symbols[size_t(id)].nameRange = {d.range.begin, d.range.begin};
  }

  void decl(const Decl &d) {
    scope_.clear();
    parent_ = topOf(d);
    switch (d.kind) {
    case DeclKind::Import: {
      const auto &im = *cast<ImportDecl>(&d);
      auto it = fileSymbol_.find(im.resolvedFile);
      if (it != fileSymbol_.end())
        useSymbol(im.pathRange, it->second);
      break;
    }
    case DeclKind::World:
      block(d, "world");
      settings(cast<WorldDecl>(&d)->body, "world");
      break;
    case DeclKind::Fn: {
      const auto &fn = *cast<FnDecl>(&d);
      for (const auto &p : fn.params)
        declare(&p, p.name, SymbolKind::FnParam, p.range,
                fmt::format("parameter `{}: {}` of fn `{}`", p.name.name, p.type.name.name,
                            fn.name.name));
      parent_ = topOf(d);
      stmts(fn.body);
      break;
    }
    case DeclKind::Physics:
      physics(*cast<PhysicsDecl>(&d));
      break;
    case DeclKind::Material:
      settings(cast<MaterialDecl>(&d)->body, "material");
      break;
    case DeclKind::Part: {
      const auto &part = *cast<PartDecl>(&d);
      for (const auto &pp : part.params) {
        parent_ = topOf(d);
        scope_[pp.name.name] = declare(&pp, pp.name, SymbolKind::PartParam, pp.range);
        expr(pp.init.get());
        expr(pp.lo.get());
        expr(pp.hi.get());
      }
      settings(part.body, "part");
      break;
    }
    case DeclKind::Grammar:
      grammar(*cast<GrammarDecl>(&d));
      break;
    case DeclKind::Body:
      settings(cast<BodyDecl>(&d)->body, "body");
      break;
    case DeclKind::Mutation:
      block(d, "mutation");
      for (const auto &r : cast<MutationDecl>(&d)->rules)
        expr(r.rate.get());
      break;
    case DeclKind::Controller: {
      const auto &c = *cast<ControllerDecl>(&d);
      for (const auto &l : c.lets)
        stmt(*l);
      for (const auto &e : c.inputs)
        expr(e.get());
      for (const auto &h : c.hidden)
        expr(h.units.get());
      for (const auto &o : c.outputs)
        expr(o.target.get());
      expr(c.init.get());
      break;
    }
    case DeclKind::Loss: {
      const auto &l = *cast<LossDecl>(&d);
      for (const auto &s : l.lets)
        stmt(*s);
      expr(l.value.get());
      break;
    }
    case DeclKind::Evolve:
      block(d, "evolve");
      settings(cast<EvolveDecl>(&d)->body, "evolve");
      break;
    case DeclKind::Commands:
      if (d.name.name.empty())
        block(d, "commands");
      settings(cast<CommandsDecl>(&d)->body, "commands");
      break;
    case DeclKind::Train:
      block(d, "train");
      settings(cast<TrainDecl>(&d)->body, "train");
      break;
    case DeclKind::Requires:
      block(d, "requires");
      settings(cast<RequiresDecl>(&d)->body, "requires");
      break;
    }
  }

  void physics(const PhysicsDecl &p) {
    const int phys = topOf(p);
    for (const auto &set : p.sets) {
      parent_ = phys;
      const int s = declare(set.get(), set->name, SymbolKind::Set, set->range);
      parent_ = s;
      for (const auto &e : set->endpoints) {
        const int id = declare(&e, e.name, SymbolKind::Endpoint, e.range,
                               fmt::format("endpoint `{}: {}` of set `{}`", e.name.name,
                                           e.setName.name, set->name.name));
        ix_.symbols[size_t(id)].set = e.setName.name;
        use(e.setName.range, e.target);
      }
      for (const auto &f : set->fields) {
        declare(f.get(), f->name, SymbolKind::Field, f->range,
                fmt::format("{} field `{}.{}: {}` of physics `{}`\n```evo\n{}\n```",
                            fieldKindSpelling(f->kind), set->name.name, f->name.name,
                            f->type.name.name, p.name.name, text(f->range)));
        expr(f->init.get());
      }
    }
    parent_ = phys;
    stmts(p.step);
  }

  void grammar(const GrammarDecl &g) {
    const int gram = topOf(g);
    for (const auto &pr : g.productions) {
      if (scope_.count(pr.lhs.name)) {
        useSymbol(pr.lhs.range, scope_[pr.lhs.name]);
        continue;
      }
      parent_ = gram;
      std::string alts;
      for (const auto &q : g.productions)
        if (q.lhs.name == pr.lhs.name)
          alts += text(q.range) + "\n";
      scope_[pr.lhs.name] =
          declare(&pr, pr.lhs, SymbolKind::GrammarSymbol, pr.range,
                  fmt::format("grammar symbol `{}` of grammar `{}`\n```evo\n{}```", pr.lhs.name,
                              g.name.name, alts));
    }
    for (const auto &l : g.limits) {
      useName(l.symbol.range, l.symbol.name);
      expr(l.value.get());
    }
    for (const auto &pr : g.productions)
      for (const auto &a : pr.alternatives) {
        useName(a.part.range, a.part.name);
        for (const auto &pb : a.ports)
          if (pb.symbol.name != "_")
            useName(pb.symbol.range, pb.symbol.name);
        expr(a.weight.get());
      }
    settings(g.body, "grammar");
  }

  void settings(const SettingsBlock &b, const std::string &blockName) {
    for (const auto &s : b.settings) {
      ix_.settings.push_back({s.key.range, blockName, s.key.name, text(s.range)});
      for (const auto &v : s.values)
        expr(v.get());
    }
    for (const auto &nb : b.blocks)
      settings(*nb.block, nb.name.name);
  }

  void stmts(const std::vector<StmtPtr> &ss) {
    for (const auto &s : ss)
      stmt(*s);
  }

  void stmt(const Stmt &s) {
    const int outer = parent_;
    switch (s.kind) {
    case StmtKind::Let: {
      const auto &l = *cast<LetStmt>(&s);
      expr(l.value.get());
      std::string type = l.type.isError() ? "" : ": " + typeToString(l.type);
      declare(&l, l.name, SymbolKind::Let, l.range,
              fmt::format("let `{}{}`\n```evo\n{}\n```", l.name.name, type, excerpt(l.range)));
      break;
    }
    case StmtKind::Assign: {
      const auto &a = *cast<AssignStmt>(&s);
      expr(a.target.get());
      expr(a.value.get());
      break;
    }
    case StmtKind::For: {
      const auto &f = *cast<ForStmt>(&s);
      declare(
          &f, f.var, SymbolKind::LoopElement, f.range,
          fmt::format("loop element `{}`: one element of set `{}`", f.var.name, f.setName.name));
      use(f.setName.range, f.set);
      if (f.stencil) {
        expr(f.stencil->base.get());
        expr(f.stencil->size.get());
      }
      stmts(f.body);
      break;
    }
    case StmtKind::Return:
      expr(cast<ReturnStmt>(&s)->value.get());
      break;
    }
    parent_ = outer;
  }

  void expr(const Expr *e) {
    if (!e)
      return;
    if (!e->type.isError() && e->type.kind != TypeKind::Void)
      ix_.typed.push_back({e->range, typeToString(e->type)});
    switch (e->kind) {
    case ExprKind::Name: {
      const auto &n = *cast<NameExpr>(e);
      switch (n.ref) {
      case NameRef::Let:
        use(n.range, n.let);
        break;
      case NameRef::Param:
        use(n.range, n.param);
        break;
      case NameRef::Element:
        use(n.range, n.loop);
        break;
      case NameRef::WindowVar:
        use(n.range, n.window);
        break;
      case NameRef::Set:
        use(n.range, n.set);
        break;
      case NameRef::Unresolved:
      case NameRef::Decl:
        useName(n.range, n.name);
        break;
      default:
        break;
      }
      break;
    }
    case ExprKind::Member: {
      const auto &m = *cast<MemberExpr>(e);
      expr(m.base.get());
      if (m.ref == MemberRef::Field || m.ref == MemberRef::SetField)
        use(m.member.range, m.field);
      else if (m.ref == MemberRef::Endpoint)
        use(m.member.range, m.endpoint);
      else if (m.ref == MemberRef::WorldSetting) {
        std::ostringstream v;
        v << m.constValue;
        ix_.settings.push_back({m.member.range, "world.", m.worldKey,
                                fmt::format("world.{} = {}", m.worldKey, v.str())});
      }
      break;
    }
    case ExprKind::Call: {
      const auto &c = *cast<CallExpr>(e);
      if (c.ref == CallRef::Fn)
        use(c.callee.range, c.fn);
      for (const auto &a : c.args)
        expr(a.get());
      for (const auto &a : c.namedArgs)
        expr(a.value.get());
      break;
    }
    case ExprKind::Index: {
      const auto &i = *cast<IndexExpr>(e);
      expr(i.base.get());
      expr(i.index.get());
      break;
    }
    case ExprKind::Unary:
      expr(cast<UnaryExpr>(e)->operand.get());
      break;
    case ExprKind::Binary:
      expr(cast<BinaryExpr>(e)->lhs.get());
      expr(cast<BinaryExpr>(e)->rhs.get());
      break;
    case ExprKind::If: {
      const auto &i = *cast<IfExpr>(e);
      expr(i.cond.get());
      expr(i.thenExpr.get());
      expr(i.elseExpr.get());
      break;
    }
    case ExprKind::Window: {
      const auto &w = *cast<WindowExpr>(e);
      expr(w.lo.get());
      expr(w.hi.get());
      declare(&w, w.var, SymbolKind::WindowVar, w.range,
              fmt::format("window variable `{}`: the time step of `{}` over [{}, {}]", w.var.name,
                          w.op_name.name, w.loValue, w.hiValue));
      expr(w.body.get());
      break;
    }
    case ExprKind::Stencil: {
      const auto &w = *cast<StencilExpr>(e);
      const ForStmt &f = *w.loop;
      if (f.stencil) {
        expr(f.stencil->base.get());
        expr(f.stencil->size.get());
      }
      declare(&f, f.var, SymbolKind::LoopElement, f.range,
              fmt::format("stencil node `{}`: one node of grid set `{}` around a position",
                          f.var.name, f.setName.name));
      use(f.setName.range, f.set);
      expr(w.body.get());
      break;
    }
    case ExprKind::Tuple:
      for (const auto &x : cast<TupleExpr>(e)->elems)
        expr(x.get());
      break;
    case ExprKind::List:
      for (const auto &x : cast<ListExpr>(e)->elems)
        expr(x.get());
      break;
    default:
      break;
    }
  }
};

} // namespace

Index Index::build(const sema::CheckedProgram &program, const SourceManager &sources) {
  Index ix;
  if (program.ast)
    Builder(ix, sources).run(*program.ast);
  return ix;
}

const Occurrence *Index::occurrenceAt(int file, int offset) const {
  const Occurrence *best = nullptr;
  for (const Occurrence &o : occurrences)
    if (covers(o.range, file, offset) &&
        (!best || o.range.end.offset - o.range.begin.offset <
                      best->range.end.offset - best->range.begin.offset))
      best = &o;
  return best;
}

const Typed *Index::typeAt(int file, int offset) const {
  const Typed *best = nullptr;
  for (const Typed &t : typed)
    if (covers(t.range, file, offset) &&
        (!best || t.range.end.offset - t.range.begin.offset <
                      best->range.end.offset - best->range.begin.offset))
      best = &t;
  return best;
}

const SettingUse *Index::settingAt(int file, int offset) const {
  for (const SettingUse &s : settings)
    if (covers(s.keyRange, file, offset))
      return &s;
  return nullptr;
}

std::vector<const Occurrence *> Index::occurrencesOf(int s) const {
  std::vector<const Occurrence *> out;
  for (const Occurrence &o : occurrences)
    if (o.symbol == s)
      out.push_back(&o);
  std::stable_partition(out.begin(), out.end(), [](const Occurrence *o) { return o->declaration; });
  return out;
}

std::vector<int> Index::find(const std::string &name, SymbolKind k) const {
  std::vector<int> out;
  for (size_t i = 0; i < symbols.size(); ++i)
    if (symbols[i].kind == k && symbols[i].name == name)
      out.push_back(int(i));
  return out;
}

} // namespace evoc::lsp
