// parseModule: UTF-8 check, ANTLR lexing and parsing with evoc's own syntax
// error messages, then the AST builder.
#include "frontend/Parser.h"

#include "EvoLexer.h"
#include "EvoParser.h"
#include "frontend/AstBuilder.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include <algorithm>
#include <set>

namespace evoc::frontend {

namespace {

/// Bracket nesting deeper than this is rejected before parsing, so that no
/// input can exhaust the parser's stack.
constexpr int kMaxNesting = 200;

/// Validates UTF-8 and fills the code point -> byte map. Returns the byte
/// offset of the first invalid sequence, or -1.
int mapUtf8(std::string_view s, std::vector<int> &cpToByte) {
  cpToByte.clear();
  cpToByte.reserve(s.size() + 1);
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = s[i];
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size())
      return int(i);
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2)
        return int(i);
    if (c == 0)
      return int(i);
    cpToByte.push_back(int(i));
    i += n;
  }
  cpToByte.push_back(int(s.size()));
  return -1;
}

/// How a token is named in a message.
std::string tokenName(const antlr4::dfa::Vocabulary &voc, size_t type) {
  if (type == antlr4::Token::EOF)
    return "end of file";
  std::string lit = voc.getLiteralName(type);
  if (!lit.empty())
    return lit;
  std::string sym = voc.getSymbolicName(type);
  if (sym == "IDENT")
    return "a name";
  if (sym == "NUMBER")
    return "a number";
  if (sym == "STRING")
    return "a string";
  return sym;
}

std::string describe(const antlr4::Token *t) {
  if (!t || t->getType() == antlr4::Token::EOF)
    return "end of file";
  std::string s = t->getText();
  if (s.size() > 30)
    s = s.substr(0, 27) + "...";
  return "'" + s + "'";
}

/// The error strategy: ANTLR's recovery, evoc's messages.
class Strategy : public antlr4::DefaultErrorStrategy {
public:
  Strategy(const LocMap &locs, DiagnosticEngine &diags) : L(locs), diags(diags) {}
  int errors = 0;

protected:
  void reportNoViableAlternative(antlr4::Parser *p, const antlr4::NoViableAltException &e) override {
    report(p, e.getOffendingToken(), "unexpected " + describe(e.getOffendingToken()) + where(p));
  }
  void reportInputMismatch(antlr4::Parser *p, const antlr4::InputMismatchException &e) override {
    antlr4::Token *t = e.getOffendingToken();
    auto expected = e.getExpectedTokens();
    if (expectsOnly(p, expected, ";")) {
      reportAfterPrevious(p, "expected ';'" + after(p));
      return;
    }
    report(p, t, "unexpected " + describe(t) + "; expected " + expectedText(p, expected));
  }
  void reportFailedPredicate(antlr4::Parser *p, const antlr4::FailedPredicateException &e) override {
    report(p, e.getOffendingToken(), "unexpected " + describe(e.getOffendingToken()));
  }
  void reportUnwantedToken(antlr4::Parser *p) override {
    if (inErrorRecoveryMode(p))
      return;
    beginErrorCondition(p);
    antlr4::Token *t = p->getCurrentToken();
    report(p, t, "unexpected " + describe(t) + "; expected " +
                     expectedText(p, getExpectedTokens(p)));
  }
  void reportMissingToken(antlr4::Parser *p) override {
    if (inErrorRecoveryMode(p))
      return;
    beginErrorCondition(p);
    auto expected = getExpectedTokens(p);
    reportAfterPrevious(p, "expected " + expectedText(p, expected) + after(p));
  }

private:
  const LocMap &L;
  DiagnosticEngine &diags;

  void report(antlr4::Parser *, antlr4::Token *t, const std::string &msg) {
    ++errors;
    SourceRange r = L.token(t);
    if (t && t->getType() == antlr4::Token::EOF)
      r.end = r.begin;
    diags.error(r, msg);
  }

  /// Puts the caret just after the previous token (a missing ';').
  void reportAfterPrevious(antlr4::Parser *p, const std::string &msg) {
    ++errors;
    antlr4::Token *prev = p->getTokenStream()->LT(-1);
    SourceRange r;
    if (prev) {
      r.begin = L.at(prev->getStopIndex() + 1);
      r.end = r.begin;
    } else {
      r = L.token(p->getCurrentToken());
    }
    diags.error(r, msg);
  }

  std::string after(antlr4::Parser *p) {
    antlr4::Token *prev = p->getTokenStream()->LT(-1);
    return prev ? " after " + describe(prev) : "";
  }

  bool expectsOnly(antlr4::Parser *p, const antlr4::misc::IntervalSet &set, const char *lit) {
    if (set.size() != 1)
      return false;
    return tokenName(p->getVocabulary(), set.getMinElement()) == std::string("'") + lit + "'";
  }

  std::string where(antlr4::Parser *p) {
    auto *ctx = p->getContext();
    if (!ctx)
      return "";
    switch (ctx->getRuleIndex()) {
    case EvoParser::RuleItem:
    case EvoParser::RuleProgram:
      return "; expected a declaration (import, world, fn, physics, part, grammar, body, "
             "mutation, controller, loss or evolve)";
    case EvoParser::RuleExpr:
    case EvoParser::RulePrimary:
      return " in an expression";
    case EvoParser::RuleStmt:
      return "; expected a statement (let, for, return or an assignment)";
    default:
      return "";
    }
  }

  std::string expectedText(antlr4::Parser *p, const antlr4::misc::IntervalSet &set) {
    const auto &voc = p->getVocabulary();
    std::vector<size_t> types;
    for (auto t : set.toList())
      types.push_back(t);
    bool exprStart = false;
    for (auto t : types)
      if (voc.getSymbolicName(t) == "NUMBER")
        exprStart = true;
    std::vector<std::string> names;
    std::set<std::string> seen;
    if (exprStart) {
      names.push_back("an expression");
      // Keep only tokens that do not start an expression.
      static const std::set<std::string> starts = {"a number", "a name", "a string", "'('",
                                                   "'['", "'-'", "'+'", "'!'", "'if'",
                                                   "'true'", "'false'"};
      for (auto t : types) {
        std::string n = tokenName(voc, t);
        if (!starts.count(n) && seen.insert(n).second)
          names.push_back(n);
      }
    } else {
      for (auto t : types) {
        std::string n = tokenName(voc, t);
        if (seen.insert(n).second)
          names.push_back(n);
      }
    }
    if (names.size() > 6)
      names.resize(6), names.push_back("...");
    std::string out;
    for (size_t i = 0; i < names.size(); ++i) {
      if (i > 0)
        out += (i + 1 == names.size()) ? " or " : ", ";
      out += names[i];
    }
    return out.empty() ? "something else" : out;
  }
};

/// Lexer errors: an unexpected character.
class LexerErrors : public antlr4::BaseErrorListener {
public:
  LexerErrors(const LocMap &locs, DiagnosticEngine &diags) : L(locs), diags(diags) {}
  int errors = 0;
  void syntaxError(antlr4::Recognizer *rec, antlr4::Token *, size_t, size_t, const std::string &,
                   std::exception_ptr) override {
    auto *lexer = static_cast<antlr4::Lexer *>(rec);
    size_t start = lexer->tokenStartCharIndex;
    SourceRange r;
    r.begin = L.at(start);
    r.end = L.at(start + 1);
    std::string_view text = L.sources->text(L.file);
    int b = r.begin.offset;
    std::string ch(text.substr(b, std::max(1, r.end.offset - b)));
    ++errors;
    if (ch == "\"")
      diags.error(r, "unterminated string literal");
    else if (ch == "/" && text.substr(b, 2) == "/*")
      diags.error(r, "unterminated block comment");
    else if (ch == ".")
      diags.error(r, "unexpected '.'; numbers need a digit before and after '.' (0.5, not .5)");
    else
      diags.error(r, "unexpected character '" + ch + "'");
  }

private:
  const LocMap &L;
  DiagnosticEngine &diags;
};

/// Rejects nesting of (, [, { deeper than kMaxNesting. Returns false if so.
bool checkNesting(antlr4::CommonTokenStream &tokens, const LocMap &L, DiagnosticEngine &diags) {
  int depth = 0, run = 0;
  for (auto *t : tokens.getTokens()) {
    std::string s = t->getType() == antlr4::Token::EOF ? "" : t->getText();
    if (s == "(" || s == "[" || s == "{")
      ++depth;
    else if (s == ")" || s == "]" || s == "}")
      depth = std::max(0, depth - 1);
    // Chains of prefix operators and `if`s recurse in the parser too.
    bool prefix = s == "-" || s == "+" || s == "!" || s == "if" || s == "then" || s == "else";
    run = prefix ? run + 1 : 0;
    if (depth > kMaxNesting || run > kMaxNesting) {
      diags.error(L.token(t), "nesting deeper than " + std::to_string(kMaxNesting) +
                                  " levels; simplify this expression");
      return false;
    }
  }
  return true;
}

} // namespace

std::unique_ptr<ast::Module> parseModule(int file, const SourceManager &sources,
                                         DiagnosticEngine &diags) {
  LocMap L;
  L.file = file;
  L.sources = &sources;
  std::string_view text = sources.text(file);
  int bad = mapUtf8(text, L.cpToByte);
  if (bad >= 0) {
    SourceRange r;
    r.begin = sources.locAt(file, bad);
    r.end = sources.locAt(file, bad + 1);
    diags.error(r, text[bad] == 0 ? "unexpected NUL byte in source file"
                                  : "source file is not valid UTF-8");
    return nullptr;
  }
  antlr4::ANTLRInputStream input(text.data(), text.size());
  EvoLexer lexer(&input);
  LexerErrors lexErrors(L, diags);
  lexer.removeErrorListeners();
  lexer.addErrorListener(&lexErrors);
  antlr4::CommonTokenStream tokens(&lexer);
  tokens.fill();
  if (!checkNesting(tokens, L, diags))
    return nullptr;

  EvoParser parser(&tokens);
  parser.removeErrorListeners();
  auto strategy = std::make_shared<Strategy>(L, diags);
  parser.setErrorHandler(strategy);
  EvoParser::ProgramContext *tree = parser.program();
  if (lexErrors.errors > 0 || strategy->errors > 0)
    return nullptr;
  int before = diags.errorCount();
  auto module = buildModule(tree, L, diags);
  if (diags.errorCount() > before)
    return nullptr;
  return module;
}

} // namespace evoc::frontend
