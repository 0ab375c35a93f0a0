// evoc fmt (frontend/Format.h, docs/language.md "Layout"): the layout's
// rules, idempotence on every .evo file the repository ships that parses,
// and the same IR from every example before and after formatting.
#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>

#include "EvocProcess.h"
#include "app/Driver.h"
#include "app/Pipeline.h"
#include "frontend/Format.h"
#include "ir/Printer.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

using namespace evoc;
namespace fs = std::filesystem;

namespace {

std::string fmt(const std::string &text) {
  frontend::FormatResult r = frontend::formatSource(text, "t.evo");
  INFO(r.error);
  REQUIRE(r.ok);
  return r.text;
}

std::vector<fs::path> evoFiles(const std::vector<std::string> &dirs) {
  std::vector<fs::path> out;
  for (const std::string &d : dirs)
    for (const auto &e : fs::recursive_directory_iterator(fs::path(EVOC_SOURCE_DIR) / d))
      if (e.path().extension() == ".evo")
        out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// The optimised IR of a file's text (imports resolved beside `path`).
std::string irOf(const fs::path &path, const std::string &text) {
  app::CommonOptions o;
  o.file = path.string();
  o.text = text;
  SourceManager sm;
  DiagnosticEngine diags(sm);
  auto prog = app::loadChecked(o, sm, diags);
  REQUIRE(prog);
  auto m = app::buildModule(*prog, sm, diags);
  REQUIRE(m);
  return ir::toString(*m);
}

} // namespace

TEST_CASE("evoc fmt: indentation and spacing are evoc's, line breaks and comments the author's",
          "[fmt]") {
  CHECK(fmt("world{dim=2;  dt =0.004;// the step\n\n\n  steps=-4+x*(2-1);}\n") ==
        "world { dim = 2; dt = 0.004; // the step\n\n  steps = -4 + x * (2 - 1); }\n");
  CHECK(fmt("fn f(a:vec2,b :scalar)->scalar{\nlet c=-a.x;\n        return c*b;\n}\n") ==
        "fn f(a: vec2, b: scalar) -> scalar {\n  let c = -a.x;\n  return c * b;\n}\n");
  // Indexing, member access, windows, unary minus after operators.
  CHECK(fmt("loss l = -mean(t in 200..T: mean(point.x[t].y))-0.1*point.x[T - 1].x;\n") ==
        "loss l = -mean(t in 200 .. T: mean(point.x[t].y)) - 0.1 * point.x[T - 1].x;\n");
  // Productions: attach specs, optional symbols, weights, `|` under `->`.
  CHECK(fmt("grammar g { start = A;\nA -> seg < top , angle = -30..30 > ( b : A ? ) @ 2\n| "
            "blk(left: _);\n}\n") ==
        "grammar g { start = A;\n  A -> seg<top, angle = -30 .. 30>(b: A?) @ 2\n     | "
        "blk(left: _);\n}\n");
  // Continuations: after an open bracket, aligned; after one that ends its
  // line, indented; after `key =`, aligned with the first value.
  CHECK(fmt("part p {\npoints = [(0, 0),\n(1, 0)];\nports = a(0), b(1),\nc(2);\n}\n") ==
        "part p {\n  points = [(0, 0),\n            (1, 0)];\n  ports = a(0), b(1),\n"
        "          c(2);\n}\n");
  CHECK(fmt("loss l {\n  return sum(\n  x);\n}\n") == "loss l {\n  return sum(\n      x);\n}\n");
  // Comments: line and block, trailing gaps kept, the first lines kept.
  CHECK(fmt("// head\n/* a\n   b */ world { dim = 2;    // two\n}\n") ==
        "// head\n/* a\n   b */ world { dim = 2;    // two\n}\n");
  CHECK(fmt("physics p { set touch(a: point) {} }\n") == "physics p { set touch(a: point) {} }\n");
}

TEST_CASE("evoc fmt: a file that does not parse is refused with the error's place", "[fmt]") {
  frontend::FormatResult r = frontend::formatSource("world { dim = ; }\n", "bad.evo");
  CHECK(!r.ok);
  CHECK(r.error.find("bad.evo:1:") != std::string::npos);
  // evoc fmt prints it as evoc check does: "error:" once, the line and a caret.
  CHECK(r.rendered.rfind("bad.evo:1:", 0) == 0);
  CHECK(r.rendered.find("error:") == r.rendered.rfind("error:"));
  CHECK(r.rendered.find("world { dim = ; }") != std::string::npos);
  CHECK(r.rendered.find('^') != std::string::npos);
}

TEST_CASE("evoc fmt: idempotent on every shipped .evo file that parses; the stdlib and the "
          "examples are formatted",
          "[fmt]") {
  int formatted = 0;
  for (const fs::path &p : evoFiles({"stdlib", "examples", "tests", "bench"})) {
    INFO(p.string());
    const std::string text = test::readText(p);
    frontend::FormatResult once = frontend::formatSource(text, p.string());
    if (!once.ok) {
      // Only the golden error files may fail to parse; never the formatter.
      CHECK(once.error.find("formatting would change the program") == std::string::npos);
      CHECK(p.string().find("/tests/") != std::string::npos);
      continue;
    }
    frontend::FormatResult twice = frontend::formatSource(once.text, p.string());
    REQUIRE(twice.ok);
    CHECK(twice.text == once.text);
    const std::string rel = fs::relative(p, EVOC_SOURCE_DIR).string();
    if (rel.rfind("stdlib/", 0) == 0 || rel.rfind("examples/", 0) == 0)
      CHECK(once.text == text); // `evoc fmt` them after editing
    ++formatted;
  }
  CHECK(formatted > 150);
}

TEST_CASE("evoc fmt: every example compiles to the same IR before and after formatting", "[fmt]") {
  for (const fs::path &p : evoFiles({"examples"})) {
    if (p.string().find("/python/") != std::string::npos)
      continue;
    INFO(p.string());
    const std::string text = test::readText(p);
    // An uglier layout of the same program: every line's indentation gone.
    std::string flat;
    std::istringstream lines(text);
    for (std::string l; std::getline(lines, l);)
      flat += l.substr(std::min(l.find_first_not_of(' '), l.size())) + "\n";
    const std::string formatted = fmt(flat);
    CHECK(irOf(p, formatted) == irOf(p, text));
  }
}
