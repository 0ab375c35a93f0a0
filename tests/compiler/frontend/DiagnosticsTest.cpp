// Diagnostics engine tests: headline format, source line, caret, notes,
// warnings, error limit.
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include <catch2/catch.hpp>

#include <sstream>

using namespace evoc;

static SourceRange rangeOf(const SourceManager &sm, int file, int b, int e) {
  return {sm.locAt(file, b), sm.locAt(file, e)};
}

TEST_CASE("an error renders as file:line:col, the line and a caret", "[diagnostics]") {
  SourceManager sm;
  int f = sm.addBuffer("a.evo", "world {\n  dt = -1;\n}\n");
  DiagnosticEngine diags(sm);
  diags.error(rangeOf(sm, f, 15, 17), "world.dt must be positive")
      .note(rangeOf(sm, f, 0, 5), "in this block");
  REQUIRE(diags.errorCount() == 1);
  CHECK(diags.render(diags.diagnostics()[0]) == "a.evo:2:8: error: world.dt must be positive\n"
                                                "    dt = -1;\n"
                                                "         ^~\n"
                                                "a.evo:1:1: note: in this block\n"
                                                "  world {\n"
                                                "  ^~~~~\n");
}

TEST_CASE("the caret lines up after UTF-8 text", "[diagnostics]") {
  SourceManager sm;
  std::string text = "let s = \"\xc3\xa9\xc3\xa9\"; bad\n";
  int f = sm.addBuffer("u.evo", text);
  DiagnosticEngine diags(sm);
  size_t at = text.find("bad");
  diags.error(rangeOf(sm, f, int(at), int(at + 3)), "x");
  CHECK(diags.render(diags.diagnostics()[0]) == "u.evo:1:17: error: x\n"
                                                "  let s = \"\xc3\xa9\xc3\xa9\"; bad\n"
                                                "                ^~~\n");
}

TEST_CASE("line/column mapping and lines", "[diagnostics]") {
  SourceManager sm;
  int f = sm.addBuffer("b.evo", "ab\r\ncd\n\nef");
  CHECK(sm.lineText(f, 1) == "ab");
  CHECK(sm.lineText(f, 2) == "cd");
  CHECK(sm.lineText(f, 3) == "");
  CHECK(sm.lineText(f, 4) == "ef");
  CHECK(sm.lineText(f, 5) == "");
  SourceLoc l = sm.locAt(f, 5);
  CHECK(l.line == 2);
  CHECK(l.col == 2);
  CHECK(sm.locAt(f, 1000).offset == 10);
}

TEST_CASE("warnings, -w, --Werror, error limit, errors without location", "[diagnostics]") {
  SourceManager sm;
  int f = sm.addBuffer("c.evo", "let x = 1;\n");
  DiagnosticEngine d1(sm);
  d1.warning(rangeOf(sm, f, 4, 5), "unused let 'x'");
  CHECK(d1.warningCount() == 1);
  CHECK(!d1.hasErrors());
  CHECK(d1.headline(d1.diagnostics()[0]) == "c.evo:1:5: warning: unused let 'x'");
  DiagnosticEngine d2(sm);
  d2.setWarningsEnabled(false);
  d2.warning(rangeOf(sm, f, 4, 5), "unused");
  CHECK(d2.diagnostics().empty());
  DiagnosticEngine d3(sm);
  d3.setWarningsAsErrors(true);
  d3.warning(rangeOf(sm, f, 4, 5), "unused");
  CHECK(d3.hasErrors());
  DiagnosticEngine d4(sm);
  d4.setErrorLimit(3);
  for (int i = 0; i < 10; ++i)
    d4.error(rangeOf(sm, f, 0, 1), "e");
  CHECK(d4.errorCount() == 10);
  CHECK(d4.diagnostics().size() == 4); // 3 errors and "too many errors"
  DiagnosticEngine d5(sm);
  d5.error("cannot read file 'x.evo'");
  std::ostringstream out;
  d5.flush(out);
  CHECK(out.str() == "evoc: error: cannot read file 'x.evo'\n");
}
