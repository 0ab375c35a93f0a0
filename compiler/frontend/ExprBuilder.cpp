// Parse tree -> AST for expressions: precedence is the grammar's, unary
// minus on a literal folds, nesting deeper than kMaxDepth is an error.
#include "frontend/AstBuilder.h"

#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include <cstdlib>

namespace evoc::frontend {

using namespace ast;

namespace {
/// Expressions nested deeper than this are rejected (no stack overflow).
constexpr int kMaxDepth = 400;
} // namespace

Ident ExprBuilder::ident(antlr4::tree::TerminalNode *n) const {
  Ident id;
  if (!n)
    return id;
  id.name = n->getText();
  id.range = L.token(n->getSymbol());
  return id;
}

Ident ExprBuilder::ident(EvoParser::AnyNameContext *n) const {
  Ident id;
  if (!n)
    return id;
  id.name = n->getText();
  id.range = L.rule(n);
  return id;
}

std::unique_ptr<StencilSpec>
ExprBuilder::stencilSpec(const Ident &callee, const std::vector<EvoParser::ExprContext *> &args,
                         Ident &setName) {
  auto spec = std::make_unique<StencilSpec>();
  spec->range = callee.range;
  if (!args.empty())
    spec->range.end = L.rule(args.back()).end;
  if (callee.name != "stencil") {
    diags.error(callee.range, "'" + callee.name +
                                  "(...)' is not a range to loop over; write a set name "
                                  "(for p in point) or stencil(GRID_SET, BASE, SIZE)");
    return nullptr;
  }
  if (args.size() != 3) {
    diags.error(spec->range, "stencil takes three arguments: the grid set, the base node "
                             "(a vector of whole numbers) and the size (e.g. stencil(node, "
                             "base, 3)), not " +
                                 std::to_string(args.size()));
    return nullptr;
  }
  ExprPtr set = expr(args[0]);
  auto *name = dynCast<NameExpr>(set.get());
  if (!name) {
    diags.error(set->range, "the first argument of stencil is the name of a grid set "
                            "(set node: grid { ... })");
    return nullptr;
  }
  setName.name = name->name;
  setName.range = name->range;
  spec->base = expr(args[1]);
  spec->size = expr(args[2]);
  return spec;
}

std::string ExprBuilder::unquote(const std::string &s) {
  std::string out;
  for (size_t i = 1; i + 1 < s.size(); ++i) {
    char ch = s[i];
    if (ch == '\\' && i + 2 < s.size()) {
      char e = s[++i];
      out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
    } else {
      out += ch;
    }
  }
  return out;
}

ExprPtr ExprBuilder::expr(EvoParser::ExprContext *c) {
  if (++depth > kMaxDepth) {
    --depth;
    if (!depthReported)
      diags.error(L.rule(c), "expression nested too deeply (more than " +
                                 std::to_string(kMaxDepth) + " levels)");
    depthReported = true;
    auto n = node<NumberExpr>(c);
    n->text = "0";
    return n;
  }
  ExprPtr r = exprInner(c);
  --depth;
  return r;
}

ExprPtr ExprBuilder::exprInner(EvoParser::ExprContext *c) {
  if (auto *p = dynamic_cast<EvoParser::PrimaryExprContext *>(c))
    return primary(p->primary());
  if (auto *m = dynamic_cast<EvoParser::MemberExprContext *>(c)) {
    auto n = node<MemberExpr>(c);
    n->base = expr(m->expr());
    n->member = ident(m->IDENT());
    return n;
  }
  if (auto *i = dynamic_cast<EvoParser::IndexExprContext *>(c)) {
    auto n = node<IndexExpr>(c);
    n->base = expr(i->expr(0));
    n->index = expr(i->expr(1));
    return n;
  }
  if (auto *u = dynamic_cast<EvoParser::UnaryExprContext *>(c)) {
    std::string op = u->op->getText();
    ExprPtr operand = expr(u->expr());
    // Fold `-3` into a literal so `x[-1]` and settings read naturally.
    if (op == "-")
      if (auto *num = dynCast<NumberExpr>(operand.get())) {
        num->value = -num->value;
        num->text = "-" + num->text;
        num->range = L.rule(c);
        return operand;
      }
    auto n = node<UnaryExpr>(c);
    n->op = op == "-" ? UnaryOp::Neg : op == "+" ? UnaryOp::Plus : UnaryOp::Not;
    n->operand = std::move(operand);
    return n;
  }
  if (auto *b = dynamic_cast<EvoParser::BinaryExprContext *>(c)) {
    auto n = node<BinaryExpr>(c);
    std::string op = b->op->getText();
    n->opRange = L.token(b->op);
    n->lhs = expr(b->expr(0));
    n->rhs = expr(b->expr(1));
    static const std::pair<const char *, BinaryOp> ops[] = {
        {"+", BinaryOp::Add}, {"-", BinaryOp::Sub}, {"*", BinaryOp::Mul},  {"/", BinaryOp::Div},
        {"<", BinaryOp::Lt},  {"<=", BinaryOp::Le}, {">", BinaryOp::Gt},   {">=", BinaryOp::Ge},
        {"==", BinaryOp::Eq}, {"!=", BinaryOp::Ne}, {"&&", BinaryOp::And}, {"||", BinaryOp::Or}};
    for (auto &[s, o] : ops)
      if (op == s)
        n->op = o;
    return n;
  }
  if (auto *f = dynamic_cast<EvoParser::IfExprContext *>(c)) {
    auto n = node<IfExpr>(c);
    n->cond = expr(f->expr(0));
    n->thenExpr = expr(f->expr(1));
    n->elseExpr = expr(f->expr(2));
    return n;
  }
  auto n = node<NumberExpr>(c);
  n->text = "0";
  return n;
}

ExprPtr ExprBuilder::primary(EvoParser::PrimaryContext *c) {
  if (auto *p = dynamic_cast<EvoParser::NumberLitContext *>(c)) {
    auto n = node<NumberExpr>(c);
    n->text = p->getText();
    n->value = std::strtod(n->text.c_str(), nullptr);
    n->isInteger = n->text.find_first_of(".eE") == std::string::npos;
    return n;
  }
  if (dynamic_cast<EvoParser::BoolLitContext *>(c)) {
    auto n = node<BoolExpr>(c);
    n->value = c->getText() == "true";
    return n;
  }
  if (auto *s = dynamic_cast<EvoParser::StringLitContext *>(c)) {
    auto n = node<StringExpr>(c);
    n->value = unquote(s->getText());
    return n;
  }
  if (auto *sc = dynamic_cast<EvoParser::StencilCallContext *>(c)) {
    auto n = node<StencilExpr>(c);
    n->op_name = ident(sc->IDENT(0));
    n->loop = std::make_unique<ForStmt>();
    n->loop->range = n->range;
    n->loop->var = ident(sc->IDENT(1));
    std::vector<EvoParser::ExprContext *> args = sc->expr();
    n->body = expr(args.back());
    args.pop_back();
    n->loop->stencil = stencilSpec(ident(sc->IDENT(2)), args, n->loop->setName);
    const std::string &op = n->op_name.name;
    if (op == "sum")
      n->op = ReduceOp::Sum;
    else
      diags.error(n->op_name.range, "'" + op + "' cannot reduce over a stencil; use sum");
    return n;
  }
  if (auto *w = dynamic_cast<EvoParser::WindowCallContext *>(c)) {
    auto n = node<WindowExpr>(c);
    n->op_name = ident(w->IDENT(0));
    n->var = ident(w->IDENT(1));
    n->lo = expr(w->expr(0));
    n->hi = expr(w->expr(1));
    n->body = expr(w->expr(2));
    const std::string &op = n->op_name.name;
    if (op == "sum")
      n->op = ReduceOp::Sum;
    else if (op == "mean")
      n->op = ReduceOp::Mean;
    else if (op == "min")
      n->op = ReduceOp::Min;
    else if (op == "max")
      n->op = ReduceOp::Max;
    else
      diags.error(n->op_name.range, "'" + op +
                                        "' cannot reduce over a time window; "
                                        "use sum, mean, min or max");
    return n;
  }
  if (auto *k = dynamic_cast<EvoParser::CallContext *>(c)) {
    auto n = node<CallExpr>(c);
    n->callee = ident(k->IDENT());
    for (auto *a : k->callArg()) {
      if (a->anyName()) {
        n->namedArgs.push_back({ident(a->anyName()), expr(a->expr())});
      } else {
        if (!n->namedArgs.empty())
          diags.error(L.rule(a), "positional argument after a named argument");
        n->args.push_back(expr(a->expr()));
      }
    }
    return n;
  }
  if (auto *nm = dynamic_cast<EvoParser::NameContext *>(c)) {
    auto n = node<NameExpr>(c);
    n->name = nm->getText();
    return n;
  }
  if (auto *p = dynamic_cast<EvoParser::ParenContext *>(c)) {
    ExprPtr inner = expr(p->expr());
    inner->range = L.rule(c);
    return inner;
  }
  if (auto *t = dynamic_cast<EvoParser::TupleContext *>(c)) {
    auto n = node<TupleExpr>(c);
    for (auto *e : t->expr())
      n->elems.push_back(expr(e));
    return n;
  }
  if (auto *l = dynamic_cast<EvoParser::ListContext *>(c)) {
    auto n = node<ListExpr>(c);
    for (auto *e : l->expr())
      n->elems.push_back(expr(e));
    return n;
  }
  auto n = node<NumberExpr>(c);
  n->text = "0";
  return n;
}

} // namespace evoc::frontend
