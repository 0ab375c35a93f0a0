// Parse tree -> AST for declarations and statements: one function per grammar
// rule, a range on every node (expressions: ExprBuilder.cpp).
#include "frontend/AstBuilder.h"

#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include <cstdlib>

namespace evoc::frontend {

using namespace ast;

SourceLoc LocMap::at(size_t cp) const {
  int byte = cp < cpToByte.size() ? cpToByte[cp] : (cpToByte.empty() ? 0 : cpToByte.back());
  return sources->locAt(file, byte);
}

SourceRange LocMap::token(const antlr4::Token *t) const {
  SourceRange r;
  if (!t)
    return r;
  r.begin = at(t->getStartIndex());
  r.end = at(t->getStopIndex() + 1);
  return r;
}

SourceRange LocMap::rule(antlr4::ParserRuleContext *ctx) const {
  SourceRange r;
  if (!ctx || !ctx->getStart())
    return r;
  r.begin = at(ctx->getStart()->getStartIndex());
  antlr4::Token *stop = ctx->getStop() ? ctx->getStop() : ctx->getStart();
  r.end = at(stop->getStopIndex() + 1);
  if (r.end.offset < r.begin.offset)
    r.end = r.begin;
  return r;
}

namespace {

/// Builds declarations and statements; expressions come from ExprBuilder.
class Builder : public ExprBuilder {
public:
  using ExprBuilder::ExprBuilder;

  std::unique_ptr<Module> program(EvoParser::ProgramContext *ctx) {
    auto m = std::make_unique<Module>();
    m->file = L.file;
    m->path = L.sources->path(L.file);
    for (auto *item : ctx->item())
      if (auto d = decl(item))
        m->decls.push_back(std::move(d));
    return m;
  }

private:
  DeclPtr decl(EvoParser::ItemContext *item) {
    if (auto *c = item->importDecl())
      return importDecl(c);
    if (auto *c = item->worldDecl())
      return blockDecl<WorldDecl>(c, "world");
    if (auto *c = item->evolveDecl())
      return blockDecl<EvolveDecl>(c, "evolve");
    if (auto *c = item->commandsDecl())
      return blockDecl<CommandsDecl>(c, "commands");
    if (auto *c = item->trainDecl())
      return blockDecl<TrainDecl>(c, "train");
    if (auto *c = item->requiresDecl())
      return blockDecl<RequiresDecl>(c, "requires");
    if (auto *c = item->fnDecl())
      return fnDecl(c);
    if (auto *c = item->physicsDecl())
      return physicsDecl(c);
    if (auto *c = item->materialDecl()) {
      auto d = std::make_unique<MaterialDecl>();
      d->range = L.rule(c);
      d->name = ident(c->IDENT());
      settings(c->settingsBlock(), d->body);
      return d;
    }
    if (auto *c = item->partDecl())
      return partDecl(c);
    if (auto *c = item->grammarDecl())
      return grammarDecl(c);
    if (auto *c = item->bodyDecl())
      return bodyDecl(c);
    if (auto *c = item->mutationDecl())
      return mutationDecl(c);
    if (auto *c = item->controllerDecl())
      return controllerDecl(c);
    if (auto *c = item->lossDecl())
      return lossDecl(c);
    return nullptr;
  }

  /// An anonymous block `word { ... }` (world, evolve, commands, train,
  /// requires): named by its keyword, at the keyword.
  template <class D, class Ctx> DeclPtr blockDecl(Ctx *c, const char *word) {
    auto d = std::make_unique<D>();
    d->range = L.rule(c);
    d->name.name = word;
    d->name.range = L.token(c->getStart());
    settings(c->settingsBlock(), d->body);
    return d;
  }

  DeclPtr importDecl(EvoParser::ImportDeclContext *c) {
    auto d = std::make_unique<ImportDecl>();
    d->range = L.rule(c);
    d->name.name = "import";
    d->name.range = L.token(c->getStart());
    d->path = unquote(c->STRING()->getText());
    d->pathRange = L.token(c->STRING()->getSymbol());
    return d;
  }

  // ---- settings
  void settings(EvoParser::SettingsBlockContext *c, SettingsBlock &out) {
    for (auto *child : c->children) {
      if (auto *s = dynamic_cast<EvoParser::SettingContext *>(child)) {
        out.settings.push_back(setting(s));
      } else if (auto *n = dynamic_cast<EvoParser::NestedBlockContext *>(child)) {
        NestedBlock nb;
        nb.name = ident(n->anyName());
        nb.range = L.rule(n);
        nb.block = std::make_unique<SettingsBlock>();
        settings(n->settingsBlock(), *nb.block);
        out.blocks.push_back(std::move(nb));
      }
    }
  }

  Setting setting(EvoParser::SettingContext *c) {
    Setting s;
    s.key = ident(c->anyName());
    s.range = L.rule(c);
    for (auto *v : c->settingValue()) {
      s.values.push_back(expr(v->expr()));
      s.suffixes.push_back(ident(v->IDENT()));
    }
    return s;
  }

  // ---- functions and statements
  TypeExpr typeName(EvoParser::TypeNameContext *c) {
    TypeExpr t;
    t.name = ident(c->IDENT());
    return t;
  }

  DeclPtr fnDecl(EvoParser::FnDeclContext *c) {
    auto d = std::make_unique<FnDecl>();
    d->range = L.rule(c);
    d->name = ident(c->IDENT());
    for (auto *p : c->param()) {
      ParamDecl pd;
      pd.name = ident(p->IDENT());
      pd.type = typeName(p->typeName());
      pd.range = L.rule(p);
      d->params.push_back(std::move(pd));
    }
    d->result = typeName(c->typeName());
    for (auto *s : c->stmt())
      if (auto st = stmt(s))
        d->body.push_back(std::move(st));
    return d;
  }

  StmtPtr stmt(EvoParser::StmtContext *c) {
    if (auto *l = c->letStmt())
      return letStmt(l);
    if (auto *f = c->forStmt()) {
      auto s = std::make_unique<ForStmt>();
      s->range = L.rule(f);
      s->var = ident(f->IDENT(0));
      s->setName = ident(f->IDENT(1));
      if (!f->expr().empty()) {
        const ast::Ident callee = s->setName;
        s->stencil = stencilSpec(callee, f->expr(), s->setName);
      }
      for (auto *b : f->stmt())
        if (auto st = stmt(b))
          s->body.push_back(std::move(st));
      return s;
    }
    if (auto *r = c->returnStmt()) {
      auto s = std::make_unique<ReturnStmt>();
      s->range = L.rule(r);
      s->value = expr(r->expr());
      return s;
    }
    if (auto *a = c->assignStmt()) {
      auto s = std::make_unique<AssignStmt>();
      s->range = L.rule(a);
      s->target = expr(a->expr(0));
      s->value = expr(a->expr(1));
      s->opRange = L.token(a->op);
      std::string op = a->op->getText();
      s->op = op == "+=" ? AssignOp::AddTo : op == "-=" ? AssignOp::SubFrom : AssignOp::Set;
      return s;
    }
    return nullptr;
  }

  std::unique_ptr<LetStmt> letStmt(EvoParser::LetStmtContext *c) {
    auto s = std::make_unique<LetStmt>();
    s->range = L.rule(c);
    s->name = ident(c->IDENT());
    if (c->typeName())
      s->declaredType = std::make_unique<TypeExpr>(typeName(c->typeName()));
    s->value = expr(c->expr());
    return s;
  }

  // ---- physics
  DeclPtr physicsDecl(EvoParser::PhysicsDeclContext *c) {
    auto d = std::make_unique<PhysicsDecl>();
    d->range = L.rule(c);
    d->name = ident(c->IDENT());
    bool haveStep = false;
    for (auto *item : c->physicsItem()) {
      if (auto *s = item->setDecl()) {
        d->sets.push_back(setDecl(s, d.get(), int(d->sets.size())));
      } else if (auto *st = item->stepDecl()) {
        if (haveStep) {
          diags.error(L.token(st->getStart()),
                      "physics '" + d->name.name + "' has more than one step block; merge them");
          continue;
        }
        haveStep = true;
        d->stepRange = L.rule(st);
        for (auto *s : st->stmt())
          if (auto stp = stmt(s))
            d->step.push_back(std::move(stp));
      }
    }
    return d;
  }

  std::unique_ptr<SetDecl> setDecl(EvoParser::SetDeclContext *c, PhysicsDecl *phys, int index) {
    auto s = std::make_unique<SetDecl>();
    s->name = ident(c->IDENT(0));
    s->range = L.rule(c);
    s->physics = phys;
    s->index = index;
    if (c->IDENT().size() > 1) { // `set node: grid`
      s->kindWord = ident(c->IDENT(1));
      if (s->kindWord.name == "grid")
        s->grid = true;
      else
        diags.error(s->kindWord.range, "unknown set kind '" + s->kindWord.name +
                                           "'; the only one is 'grid' (set node: grid { ... })");
    }
    for (auto *e : c->endpoint()) {
      EndpointDecl ep;
      ep.name = ident(e->IDENT(0));
      ep.setName = ident(e->IDENT(1));
      ep.range = L.rule(e);
      ep.owner = s.get();
      s->endpoints.push_back(std::move(ep));
    }
    for (auto *f : c->fieldDecl()) {
      auto fd = std::make_unique<FieldDecl>();
      fd->kindWord = ident(f->anyName());
      fd->name = ident(f->IDENT());
      fd->type = typeName(f->typeName());
      fd->range = L.rule(f);
      fd->owner = s.get();
      if (f->expr())
        fd->init = expr(f->expr());
      const std::string &k = fd->kindWord.name;
      if (k == "state")
        fd->kind = FieldKind::State;
      else if (k == "temp")
        fd->kind = FieldKind::Temp;
      else if (k == "body")
        fd->kind = FieldKind::Body;
      else if (k == "param")
        fd->kind = FieldKind::Param;
      else if (k == "input")
        fd->kind = FieldKind::Input;
      else {
        diags.error(fd->kindWord.range,
                    "unknown field kind '" + k + "'; expected state, temp, body, param or input");
        continue;
      }
      if (fd->init && fd->kind != FieldKind::Param && fd->kind != FieldKind::State)
        diags.error(fd->init->range, "only 'state' and 'param' fields take an initial value");
      s->fields.push_back(std::move(fd));
    }
    return s;
  }

  // ---- bodies
  /// A contextual word (`param`, `limit`) that must read `want`.
  bool expectWord(antlr4::tree::TerminalNode *n, const std::string &want, const std::string &form) {
    Ident w = ident(n);
    if (w.name == want)
      return true;
    diags.error(w.range, "expected '" + want + "' here (" + form + "), found '" + w.name + "'");
    return false;
  }

  DeclPtr partDecl(EvoParser::PartDeclContext *c) {
    auto d = std::make_unique<PartDecl>();
    d->range = L.rule(c);
    d->name = ident(c->IDENT());
    for (auto *child : c->children) {
      if (auto *s = dynamic_cast<EvoParser::SettingContext *>(child)) {
        d->body.settings.push_back(setting(s));
      } else if (auto *pp = dynamic_cast<EvoParser::PartParamContext *>(child)) {
        if (!expectWord(pp->IDENT(0), "param", "'param NAME = DEFAULT in LO .. HI;'"))
          continue;
        PartParam prm;
        prm.name = ident(pp->IDENT(1));
        prm.range = L.rule(pp);
        prm.init = expr(pp->expr(0));
        prm.lo = expr(pp->expr(1));
        prm.hi = expr(pp->expr(2));
        d->params.push_back(std::move(prm));
      }
    }
    return d;
  }

  double angleBound(EvoParser::AngleBoundContext *b) {
    double v = std::strtod(b->NUMBER()->getText().c_str(), nullptr);
    return b->getStart()->getText() == "-" ? -v : v;
  }

  Alternative alternative(EvoParser::AlternativeContext *a) {
    Alternative alt;
    alt.part = ident(a->IDENT());
    alt.range = L.rule(a);
    if (auto *at = a->attachSpec()) {
      // `<port>`, `<port, option, ...>` or `<option, ...>`; an option is
      // `angle = LO .. HI` or `turn = K`.
      if (at->IDENT())
        alt.attach = ident(at->IDENT());
      for (auto *o : at->attachOption()) {
        auto *word = o->IDENT();
        const std::string w = word->getText();
        SourceRange r = L.rule(o);
        const bool range = o->angleBound().size() == 2;
        if (w == "angle" && range && !alt.hasAngle) {
          alt.hasAngle = true;
          alt.angleLo = angleBound(o->angleBound(0));
          alt.angleHi = angleBound(o->angleBound(1));
          alt.angleRange = r;
        } else if (w == "turn" && !range && !alt.hasTurn) {
          alt.hasTurn = true;
          alt.turn = angleBound(o->angleBound(0));
          alt.turnRange = r;
        } else if ((w == "angle" && alt.hasAngle) || (w == "turn" && alt.hasTurn)) {
          diags.error(r, "'" + w + "' is given twice");
        } else if (w == "angle") {
          diags.error(r, "an angle is a range of degrees: 'angle = LO .. HI'");
        } else if (w == "turn") {
          diags.error(r, "a turn is one whole number: 'turn = K'");
        } else {
          diags.error(L.token(word->getSymbol()),
                      "expected 'angle = LO .. HI' or 'turn = K' after the attach port, not '" + w +
                          "'");
        }
      }
    }
    for (auto *pb : a->portBinding()) {
      PortBinding b;
      auto words = pb->IDENT();
      b.range = L.rule(pb);
      b.tied = words.size() == 3;
      b.port = ident(words[0]);
      if (b.tied)
        b.port2 = ident(words[1]);
      b.symbol = ident(words.back());
      b.optional = pb->optional != nullptr;
      alt.ports.push_back(std::move(b));
    }
    if (a->expr())
      alt.weight = expr(a->expr());
    return alt;
  }

  DeclPtr grammarDecl(EvoParser::GrammarDeclContext *c) {
    auto d = std::make_unique<GrammarDecl>();
    d->range = L.rule(c);
    d->name = ident(c->IDENT());
    for (auto *child : c->children) {
      if (auto *s = dynamic_cast<EvoParser::SettingContext *>(child)) {
        d->body.settings.push_back(setting(s));
      } else if (auto *l = dynamic_cast<EvoParser::GrammarLimitContext *>(child)) {
        Ident kind = ident(l->IDENT(0));
        if (kind.name != "limit" && kind.name != "depth" && kind.name != "scale") {
          diags.error(kind.range, "expected 'limit', 'depth' or 'scale' here ('limit SYMBOL = "
                                  "N;', 'depth SYMBOL = N;', 'scale SYMBOL = F;'), found '" +
                                      kind.name + "'");
          continue;
        }
        d->limits.push_back({kind, ident(l->IDENT(1)), expr(l->expr()), L.rule(l)});
      } else if (auto *p = dynamic_cast<EvoParser::ProductionContext *>(child)) {
        Production prod;
        prod.lhs = ident(p->IDENT());
        prod.range = L.rule(p);
        for (auto *a : p->alternative())
          prod.alternatives.push_back(alternative(a));
        d->productions.push_back(std::move(prod));
      }
    }
    return d;
  }

  DeclPtr bodyDecl(EvoParser::BodyDeclContext *c) {
    auto d = std::make_unique<BodyDecl>();
    d->range = L.rule(c);
    // children: 'body' kind name settingsBlock
    auto *kindTok = dynamic_cast<antlr4::tree::TerminalNode *>(c->children.at(1));
    auto *nameTok = dynamic_cast<antlr4::tree::TerminalNode *>(c->children.at(2));
    d->kindWord = ident(kindTok);
    d->name = ident(nameTok);
    if (d->kindWord.name == "lattice")
      d->bodyKind = BodyKind::Lattice;
    else if (d->kindWord.name == "grammar")
      d->bodyKind = BodyKind::Grammar;
    else if (d->kindWord.name == "cells" || d->kindWord.name == "particles")
      d->bodyKind = BodyKind::Cells; // both fixed bodies

    else if (d->kindWord.name == "voxel")
      d->bodyKind = BodyKind::Voxel;
    else
      diags.error(d->kindWord.range,
                  "unknown body kind '" + d->kindWord.name +
                      "'; expected 'lattice', 'grammar', 'voxel', 'cells' or 'particles'");
    settings(c->settingsBlock(), d->body);
    return d;
  }

  DeclPtr mutationDecl(EvoParser::MutationDeclContext *c) {
    auto d = std::make_unique<MutationDecl>();
    d->range = L.rule(c);
    d->name.name = "mutation";
    d->name.range = L.token(c->getStart());
    for (auto *r : c->mutationRule()) {
      MutationRule rule;
      rule.range = L.rule(r);
      auto words = r->IDENT();
      bool hasUntil = false;
      for (auto *ch : r->children)
        if (auto *t = dynamic_cast<antlr4::tree::TerminalNode *>(ch))
          if (t->getText() == "until")
            hasUntil = true;
      size_t nWords = words.size() - (hasUntil ? 1 : 0);
      if (nWords < 2 || nWords > 3) {
        diags.error(rule.range, "a mutation rule reads 'OP [TARGET] p = RATE;' "
                                "(e.g. 'flip cell p = 1 / cells;' or 'add p = 0.3;')");
        continue;
      }
      rule.op = ident(words[0]);
      if (nWords == 3)
        rule.target = ident(words[1]);
      rule.rateName = ident(words[nWords - 1]);
      rule.rate = expr(r->expr());
      if (hasUntil) {
        Ident w = ident(words.back());
        if (w.name != "changed")
          diags.error(w.range, "expected 'until changed', found 'until " + w.name + "'");
        rule.untilChanged = true;
      }
      if (rule.rateName.name != "p") {
        diags.error(rule.rateName.range,
                    "expected 'p = RATE' in a mutation rule, found '" + rule.rateName.name + "'");
        continue;
      }
      d->rules.push_back(std::move(rule));
    }
    return d;
  }

  // ---- learning
  DeclPtr controllerDecl(EvoParser::ControllerDeclContext *c) {
    auto d = std::make_unique<ControllerDecl>();
    d->range = L.rule(c);
    d->name = ident(c->IDENT());
    for (auto *child : c->children) {
      if (auto *l = dynamic_cast<EvoParser::LetStmtContext *>(child)) {
        d->lets.push_back(letStmt(l));
        continue;
      }
      auto *sc = dynamic_cast<EvoParser::SettingContext *>(child);
      if (!sc)
        continue;
      Setting s = setting(sc);
      const std::string &k = s.key.name;
      auto noSuffix = [&](size_t i) {
        if (!s.suffixes[i].name.empty())
          diags.error(s.suffixes[i].range,
                      "unexpected '" + s.suffixes[i].name + "' after a value of '" + k + "'");
      };
      if (k == "inputs") {
        d->inputsRange = s.range;
        for (size_t i = 0; i < s.values.size(); ++i) {
          noSuffix(i);
          d->inputs.push_back(std::move(s.values[i]));
        }
      } else if (k == "hidden") {
        d->hiddenRange = s.range;
        for (size_t i = 0; i < s.values.size(); ++i)
          d->hidden.push_back({std::move(s.values[i]), s.suffixes[i], 0});
      } else if (k == "outputs") {
        d->outputsRange = s.range;
        for (size_t i = 0; i < s.values.size(); ++i)
          d->outputs.push_back({std::move(s.values[i]), s.suffixes[i], nullptr});
      } else if (k == "init") {
        if (s.values.size() != 1)
          diags.error(s.range, "'init' takes one value, e.g. xavier_normal(w1 = 2, w2 = 3)");
        noSuffix(0);
        d->init = std::move(s.values[0]);
      } else {
        diags.error(s.key.range, "unknown controller setting '" + k +
                                     "'; expected let, inputs, hidden, outputs or init");
      }
    }
    return d;
  }

  DeclPtr lossDecl(EvoParser::LossDeclContext *c) {
    auto d = std::make_unique<LossDecl>();
    d->range = L.rule(c);
    d->name = ident(c->IDENT());
    if (c->expr()) {
      d->value = expr(c->expr());
      return d;
    }
    for (auto *s : c->stmt()) {
      StmtPtr st = stmt(s);
      if (!st)
        continue;
      if (auto *let = dynCast<LetStmt>(st.get())) {
        if (d->value)
          diags.error(let->range, "'let' after 'return' in loss '" + d->name.name + "'");
        st.release();
        d->lets.emplace_back(let);
      } else if (auto *ret = dynCast<ReturnStmt>(st.get())) {
        if (d->value)
          diags.error(ret->range, "loss '" + d->name.name + "' returns twice");
        else
          d->value = std::move(ret->value);
      } else {
        diags.error(st->range, "a loss body holds only 'let' and one 'return'");
      }
    }
    if (!d->value)
      diags.error(d->name.range, "loss '" + d->name.name + "' has no 'return'");
    return d;
  }
};

} // namespace

std::unique_ptr<Module> buildModule(EvoParser::ProgramContext *tree, const LocMap &locs,
                                    DiagnosticEngine &diags) {
  Builder b(locs, diags);
  return b.program(tree);
}

} // namespace evoc::frontend
