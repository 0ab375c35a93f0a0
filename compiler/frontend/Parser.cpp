// parseModule: UTF-8 check, ANTLR lexing and parsing with evoc's own syntax
// error messages, then the AST builder.
#include "frontend/Parser.h"

#include "EvoLexer.h"
#include "EvoParser.h"
#include "frontend/AstBuilder.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include <algorithm>
#include <cctype>
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
    // Overlong forms, surrogates and code points past U+10FFFF are invalid
    // too (and ANTLR's decoder throws on them).
    unsigned char c1 = n > 1 ? static_cast<unsigned char>(s[i + 1]) : 0;
    if ((n == 2 && c < 0xC2) || (n == 3 && c == 0xE0 && c1 < 0xA0) ||
        (n == 3 && c == 0xED && c1 >= 0xA0) || (n == 4 && c == 0xF0 && c1 < 0x90) ||
        (n == 4 && (c > 0xF4 || (c == 0xF4 && c1 >= 0x90))))
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
  void reportNoViableAlternative(antlr4::Parser *p,
                                 const antlr4::NoViableAltException &e) override {
    antlr4::Token *t = e.getOffendingToken();
    if (special(p, t, nullptr))
      return;
    report(p, t, "unexpected " + describe(t) + where(p));
  }
  void reportInputMismatch(antlr4::Parser *p, const antlr4::InputMismatchException &e) override {
    antlr4::Token *t = e.getOffendingToken();
    auto expected = e.getExpectedTokens();
    if (special(p, t, &expected))
      return;
    if (expectsOnly(p, expected, ";")) {
      reportAfterPrevious(p, "expected ';'" + after(p));
      return;
    }
    std::string w = where(p);
    if (w.rfind("; expected", 0) == 0)
      report(p, t, "unexpected " + describe(t) + w);
    else
      report(p, t, "unexpected " + describe(t) + "; expected " + expectedText(p, expected));
  }
  void reportFailedPredicate(antlr4::Parser *p,
                             const antlr4::FailedPredicateException &e) override {
    report(p, e.getOffendingToken(), "unexpected " + describe(e.getOffendingToken()));
  }
  void reportUnwantedToken(antlr4::Parser *p) override {
    if (inErrorRecoveryMode(p))
      return;
    beginErrorCondition(p);
    antlr4::Token *t = p->getCurrentToken();
    auto expectedHere = getExpectedTokens(p);
    if (special(p, t, &expectedHere))
      return;
    report(p, t,
           "unexpected " + describe(t) + "; expected " + expectedText(p, getExpectedTokens(p)));
  }
  void reportMissingToken(antlr4::Parser *p) override {
    if (inErrorRecoveryMode(p))
      return;
    beginErrorCondition(p);
    auto expected = getExpectedTokens(p);
    if (special(p, p->getCurrentToken(), &expected))
      return;
    reportAfterPrevious(p, "expected " + expectedText(p, expected) + after(p));
  }

private:
  const LocMap &L;
  DiagnosticEngine &diags;

  void report(antlr4::Parser *, antlr4::Token *t, const std::string &msg) {
    // After an error, complaints at the end of the file are its echoes.
    if (errors > 0 && t && t->getType() == antlr4::Token::EOF)
      return;
    ++errors;
    SourceRange r = L.token(t);
    if (t && t->getType() == antlr4::Token::EOF)
      r.end = r.begin;
    emit(r, msg);
  }

  /// Reports, unless an error was already reported on this line (ANTLR's
  /// recovery often trips again right after the first error).
  DiagBuilder emit(const SourceRange &r, const std::string &msg) {
    if (r.begin.line == lastLine)
      return DiagBuilder(&diags, -1);
    lastLine = r.begin.line;
    return diags.error(r, msg);
  }
  int lastLine = -1;

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
    emit(r, msg);
  }

  /// Tokens from the start of the stream up to (not including) `t`.
  std::vector<antlr4::Token *> before(antlr4::Parser *p, antlr4::Token *t) {
    std::vector<antlr4::Token *> out;
    auto *ts = dynamic_cast<antlr4::BufferedTokenStream *>(p->getTokenStream());
    if (!ts || !t)
      return out;
    for (auto *x : ts->getTokens()) {
      if (x->getTokenIndex() >= t->getTokenIndex())
        break;
      if (x->getChannel() == antlr4::Token::DEFAULT_CHANNEL) // not a comment
        out.push_back(x);
    }
    return out;
  }

  /// Messages for the common mistakes: a missing ';' at a line end, an
  /// unclosed bracket, `.5`. Returns true if it reported.
  bool special(antlr4::Parser *p, antlr4::Token *t, const antlr4::misc::IntervalSet *expected) {
    if (!t)
      return false;
    auto toks = before(p, t);
    // `.5`
    if (t->getText() == "." && p->getTokenStream()->LA(2) != antlr4::Token::EOF) {
      antlr4::Token *next = p->getTokenStream()->get(t->getTokenIndex() + 1);
      if (next && p->getVocabulary().getSymbolicName(next->getType()) == "NUMBER" &&
          next->getStartIndex() == t->getStopIndex() + 1) {
        report(p, t, "numbers need a digit before '.': write 0" + next->getText().insert(0, "."));
        return true;
      }
    }
    // A missing ';' at the end of a line: `dim = 2 <newline> dt = 0.1;`
    bool wantsSemi = expected && expected->contains(size_t(semiType(p)));
    if (toks.size() >= 2 && t->getText() == "=" && (wantsSemi || !expected)) {
      antlr4::Token *prev = toks.back(), *prev2 = toks[toks.size() - 2];
      if (prev->getLine() > prev2->getLine()) {
        reportAfter(prev2, "expected ';' after " + describe(prev2));
        return true;
      }
    }
    if (!toks.empty() && wantsSemi &&
        (t->getLine() > toks.back()->getLine() || t->getText() == "}")) {
      reportAfter(toks.back(), "expected ';' after " + describe(toks.back()));
      return true;
    }
    // An unclosed bracket.
    std::vector<antlr4::Token *> open;
    for (auto *x : toks) {
      std::string s = x->getText();
      if (s == "(" || s == "[" || s == "{")
        open.push_back(x);
      else if ((s == ")" || s == "]" || s == "}") && !open.empty())
        open.pop_back();
    }
    std::string ts = t->getText();
    bool closes =
        t->getType() == antlr4::Token::EOF || ts == ";" || ts == "}" || ts == ")" || ts == "]";
    if (!open.empty() && closes) {
      std::string o = open.back()->getText();
      std::string c = o == "(" ? ")" : o == "[" ? "]" : "}";
      if (c != ts && (o != "{" || t->getType() == antlr4::Token::EOF)) {
        ++errors;
        SourceRange r = L.token(t);
        if (t->getType() == antlr4::Token::EOF)
          r.end = r.begin;
        emit(r, "expected '" + c + "' before " + describe(t))
            .note(L.token(open.back()), "to match this '" + o + "'");
        return true;
      }
    }
    return false;
  }

  size_t semiType(antlr4::Parser *p) {
    const auto &voc = p->getVocabulary();
    for (size_t i = 1; i <= voc.getMaxTokenType(); ++i)
      if (voc.getLiteralName(i) == "';'")
        return i;
    return 0;
  }

  void reportAfter(antlr4::Token *prev, const std::string &msg) {
    ++errors;
    SourceRange r;
    r.begin = L.at(prev->getStopIndex() + 1);
    r.end = r.begin;
    emit(r, msg);
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
      static const std::set<std::string> starts = {
          "a number", "a name", "a string", "'('",     "'['",     "'-'",   "'+'",
          "'!'",      "'if'",   "'true'",   "'false'", "'world'", "'loss'"};
      for (auto t : types) {
        std::string n = tokenName(voc, t);
        if (!starts.count(n) && seen.insert(n).second)
          names.push_back(n);
      }
    } else {
      bool name = false;
      for (auto t : types)
        name = name || voc.getSymbolicName(t) == "IDENT";
      for (auto t : types) {
        std::string n = tokenName(voc, t);
        // Keywords allowed as setting names: "a name" says it.
        bool keyword =
            n.size() > 2 && n[0] == '\'' && std::isalpha(static_cast<unsigned char>(n[1]));
        if (name && keyword)
          continue;
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
    if (t->getChannel() != antlr4::Token::DEFAULT_CHANNEL) // a comment
      continue;
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

namespace {
std::unique_ptr<ast::Module> parseChecked(int file, std::string_view text, const LocMap &L,
                                          DiagnosticEngine &diags);
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
  // ANTLR reports through exceptions in a few corners; none may escape.
  try {
    return parseChecked(file, text, L, diags);
  } catch (const std::exception &e) {
    SourceRange r;
    r.begin = sources.locAt(file, 0);
    r.end = r.begin;
    diags.error(r, std::string("cannot parse this file (") + e.what() + ")");
    return nullptr;
  }
}

namespace {

std::unique_ptr<ast::Module> parseChecked(int file, std::string_view text, const LocMap &L,
                                          DiagnosticEngine &diags) {
  (void)file;
  antlr4::ANTLRInputStream input(text.data(), text.size());
  EvoLexer lexer(&input);
  LexerErrors lexErrors(L, diags);
  lexer.removeErrorListeners();
  lexer.addErrorListener(&lexErrors);
  antlr4::CommonTokenStream tokens(&lexer);
  tokens.fill();
  // After a lexer error the parser's complaints are mostly echoes of it.
  if (lexErrors.errors > 0)
    return nullptr;
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

} // namespace

} // namespace evoc::frontend
