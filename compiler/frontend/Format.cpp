// formatSource: the canonical layout (frontend/Format.h). The tokens come
// from the ANTLR lexer (comments on the hidden channel); where a line breaks
// is the author's, how it is indented and spaced is decided here.
#include "frontend/Format.h"

#include "EvoLexer.h"
#include "frontend/AstDump.h"
#include "frontend/Parser.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include <algorithm>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

namespace evoc::frontend {

namespace {

struct Tok {
  std::string text;
  size_t type = 0;
  int line = 0, endLine = 0; // 1-based; a block comment may span lines
  int col = 0;               // 0-based, in code points
  bool comment = false;
  bool unary = false;      // a prefix - + !
  bool angleOpen = false;  // `<` of `part<attach>` in a production
  bool angleClose = false; // its `>`
};

bool isIdent(const Tok &t) { return t.type == EvoLexer::IDENT; }

int codePoints(const std::string &s) {
  int n = 0;
  for (unsigned char c : s)
    n += (c & 0xC0) != 0x80;
  return n;
}

std::vector<Tok> lex(const std::string &text) {
  antlr4::ANTLRInputStream input(text.data(), text.size());
  EvoLexer lexer(&input);
  lexer.removeErrorListeners();
  std::vector<Tok> out;
  for (auto t = lexer.nextToken(); t->getType() != antlr4::Token::EOF; t = lexer.nextToken()) {
    Tok k;
    k.text = t->getText();
    k.type = t->getType();
    k.line = int(t->getLine());
    k.col = int(t->getCharPositionInLine());
    k.comment = t->getChannel() != antlr4::Token::DEFAULT_CHANNEL;
    k.endLine = k.line + int(std::count(k.text.begin(), k.text.end(), '\n'));
    out.push_back(std::move(k));
  }
  return out;
}

// Marks prefix operators and the angle brackets of attach specs.
void classify(std::vector<Tok> &toks) {
  static const std::set<std::string> beforeOperand = {
      "=",  "+=", "-=", "+", "-", "*", "/", "<", "<=", ">=", "==",     "!=",   "&&",   "||", "!",
      "->", "|",  "..", "@", ",", "(", "[", "{", ";",  ":",  "return", "then", "else", "if", "in"};
  const Tok *prev = nullptr, *prev2 = nullptr;
  bool inAngle = false;
  for (Tok &t : toks) {
    if (t.comment)
      continue;
    if (t.text == "-" || t.text == "+" || t.text == "!")
      t.unary = !prev || beforeOperand.count(prev->text) || prev->angleOpen;
    // `Sym -> part<attach>(...) | part<...>`: a `<` right after the part
    // that follows `->` or `|` opens an attach spec, the next `>` closes it.
    if (t.text == "<" && prev && isIdent(*prev) && prev2 &&
        (prev2->text == "->" || prev2->text == "|")) {
      t.angleOpen = true;
      inAngle = true;
    } else if (t.text == ">" && inAngle) {
      t.angleClose = true;
      inAngle = false;
    }
    prev2 = prev;
    prev = &t;
  }
}

// Whether a space goes between `p` and `t` on one line.
bool spaced(const Tok &p, const Tok &t) {
  const std::string &P = p.text, &T = t.text;
  if (T == "," || T == ";" || T == ")" || T == "]" || T == "." || T == ":" || T == "?")
    return false;
  if (P == "(" || P == "[" || P == "." || (P == "{" && T == "}"))
    return false;
  if (p.unary)
    return false;
  if (T == "(" && (isIdent(p) || p.angleClose))
    return false;
  if (T == "[" && (isIdent(p) || P == ")" || P == "]"))
    return false;
  if (t.angleOpen || p.angleOpen || t.angleClose)
    return false;
  return true;
}

std::string layout(const std::vector<Tok> &toks) {
  std::vector<std::string> lines;
  std::string cur;
  int depth = 0;
  const Tok *prev = nullptr;     // the last token emitted (comments included)
  const Tok *prevCode = nullptr; // the last code token
  // The statement being written: where its continuation lines go.
  int stmtIndent = 0, eqCol = -1, arrowCol = -1;
  std::vector<int> brackets; // output column after each open ( or [
  int lineIndent = 0;        // the indentation of the line being written
  auto boundary = [&] {
    return !prevCode || prevCode->text == ";" || prevCode->text == "{" || prevCode->text == "}";
  };
  for (const Tok &t : toks) {
    const bool newLine = !prev || t.line > prev->endLine;
    // A bracket or `=` that ends its line: what follows is indented from
    // that line, not aligned after it.
    if (newLine && prevCode && prevCode == prev) {
      const std::string &P = prevCode->text;
      if ((P == "(" || P == "[") && !brackets.empty())
        brackets.back() = lineIndent + 4;
      else if ((P == "=" || P == "+=" || P == "-=") && brackets.empty())
        eqCol = lineIndent + 4;
    }
    if (newLine) {
      if (prev) {
        lines.push_back(cur);
        if (t.line > prev->endLine + 1)
          lines.emplace_back();
      }
      int indent;
      if (boundary()) {
        indent = 2 * std::max(0, depth - (t.text == "}" ? 1 : 0));
      } else if (t.text == "|" && arrowCol >= 0) {
        indent = arrowCol + 1;
      } else if (!brackets.empty()) {
        indent = brackets.back();
      } else if (eqCol >= 0) {
        indent = eqCol;
      } else {
        indent = stmtIndent + 4;
      }
      cur.assign(size_t(indent), ' ');
      lineIndent = indent;
      if (boundary() && !t.comment)
        stmtIndent = indent;
    } else if (t.comment) {
      // A comment after code keeps the author's gap (at least one space).
      int gap = t.col - (prev->col + codePoints(prev->text));
      cur.append(size_t(std::max(1, gap)), ' ');
    } else if (prev->comment || spaced(*prev, t)) {
      cur += ' ';
    }
    if (!t.comment && boundary()) { // a new statement starts here
      eqCol = arrowCol = -1;
      brackets.clear();
      if (!newLine)
        stmtIndent = int(cur.size()) - (cur.empty() || cur.back() != ' ' ? 0 : 1);
    }
    const int start = int(cur.size());
    cur += t.text;
    if (!t.comment) {
      if (t.text == "{") {
        ++depth;
      } else if (t.text == "}") {
        depth = std::max(0, depth - 1);
      } else if (t.text == "(" || t.text == "[") {
        brackets.push_back(int(cur.size()));
      } else if ((t.text == ")" || t.text == "]") && !brackets.empty()) {
        brackets.pop_back();
      } else if ((t.text == "=" || t.text == "+=" || t.text == "-=") && brackets.empty() &&
                 eqCol < 0) {
        eqCol = int(cur.size()) + 1;
      } else if (t.text == "->" && arrowCol < 0) {
        arrowCol = start;
      }
      prevCode = &t;
    }
    prev = &t;
  }
  if (prev)
    lines.push_back(cur);
  std::string out;
  for (std::string &l : lines) {
    while (!l.empty() && (l.back() == ' ' || l.back() == '\t' || l.back() == '\r'))
      l.pop_back();
    out += l + "\n";
  }
  return out;
}

// The program a text parses to, as the AST dump without source ranges; ""
// with `error` (a headline) and `rendered` set when it does not parse.
std::string program(const std::string &text, const std::string &name, std::string &error,
                    std::string &rendered) {
  SourceManager sm;
  DiagnosticEngine diags(sm);
  int file = sm.addBuffer(name, text);
  auto module = parseModule(file, sm, diags);
  if (!module) {
    error = diags.diagnostics().empty() ? name + ": error: the file does not parse"
                                        : diags.headline(diags.diagnostics().front());
    rendered = diags.diagnostics().empty() ? error : diags.render(diags.diagnostics().front());
    return "";
  }
  ast::Program p;
  p.modules.push_back(std::move(module));
  std::ostringstream dump;
  ast::dumpProgram(p, dump);
  static const std::regex ranges("<[0-9]+:[0-9]+-[0-9]+:[0-9]+>");
  return std::regex_replace(dump.str(), ranges, "");
}

} // namespace

FormatResult formatSource(const std::string &text, const std::string &name) {
  FormatResult r;
  std::string before = program(text, name, r.error, r.rendered);
  if (before.empty())
    return r;
  std::vector<Tok> toks = lex(text);
  classify(toks);
  std::string formatted = layout(toks);
  std::string why, whyRendered;
  if (program(formatted, name, why, whyRendered) != before) {
    r.error = name + ": error: formatting would change the program (a bug in evoc fmt; the "
                     "file is left as it is)";
    r.rendered = r.error;
    return r;
  }
  r.ok = true;
  r.text = std::move(formatted);
  return r;
}

} // namespace evoc::frontend
