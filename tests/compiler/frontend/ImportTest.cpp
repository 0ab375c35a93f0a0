// Import resolution: the importer's folder, --stdlib, EVOC_STDLIB_PATH, the
// built-in stdlib; missing files and cycles.
#include "frontend/Imports.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "TempDir.h"

using namespace evoc;
namespace fs = std::filesystem;

namespace {

using test::TempDir;

std::vector<std::string> lines(const DiagnosticEngine &d) {
  std::vector<std::string> out;
  for (const auto &x : d.diagnostics())
    out.push_back(d.headline(x));
  return out;
}

} // namespace

TEST_CASE("imports resolve against the file's folder, then the search path", "[imports]") {
  TempDir t("evoc-import-test");
  std::string main = t.write("proj/main.evo", "import \"local.evo\";\nimport \"lib/thing.evo\";\n");
  t.write("proj/local.evo", "fn a(x: scalar) -> scalar { return x; }\n");
  t.write("mylib/lib/thing.evo",
          "import \"../other.evo\";\nfn b(x: scalar) -> scalar { return x; }\n");
  t.write("mylib/other.evo", "fn c(x: scalar) -> scalar { return x; }\n");
  SourceManager sm;
  DiagnosticEngine diags(sm);
  frontend::ImportOptions opts;
  opts.useEnv = false;
  opts.stdlibDirs = {(t.path / "mylib").string()};
  auto prog = frontend::loadProgram(main, opts, sm, diags);
  INFO((lines(diags).empty() ? "" : lines(diags)[0]));
  REQUIRE(prog);
  REQUIRE(prog->modules.size() == 4);
  // Dependencies first, main last.
  CHECK(fs::path(prog->modules[0]->path).filename() == "local.evo");
  CHECK(fs::path(prog->modules[1]->path).filename() == "other.evo");
  CHECK(fs::path(prog->modules[2]->path).filename() == "thing.evo");
  CHECK(prog->main()->path == main);
}

TEST_CASE("EVOC_STDLIB_PATH is searched, colon-separated", "[imports]") {
  TempDir t("evoc-import-test");
  std::string main = t.write("main.evo", "import \"x.evo\";\n");
  t.write("b/x.evo", "fn x(v: scalar) -> scalar { return v; }\n");
  std::string env = (t.path / "a").string() + ":" + (t.path / "b").string();
  setenv("EVOC_STDLIB_PATH", env.c_str(), 1);
  SourceManager sm;
  DiagnosticEngine diags(sm);
  frontend::ImportOptions opts;
  opts.useBuiltin = false;
  auto prog = frontend::loadProgram(main, opts, sm, diags);
  unsetenv("EVOC_STDLIB_PATH");
  REQUIRE(prog);
  CHECK(prog->modules.size() == 2);
  auto dirs = frontend::importSearchPath(opts);
  CHECK(dirs.empty());
}

TEST_CASE("the built-in stdlib is found", "[imports]") {
  TempDir t("evoc-import-test");
  std::string main = t.write("main.evo", "import \"physics/mass_spring.evo\";\n");
  SourceManager sm;
  DiagnosticEngine diags(sm);
  frontend::ImportOptions opts;
  opts.useEnv = false;
  auto prog = frontend::loadProgram(main, opts, sm, diags);
  REQUIRE(prog);
  CHECK(prog->modules.size() == 2);
}

TEST_CASE("missing imports and cycles are errors at the import", "[imports]") {
  TempDir t("evoc-import-test");
  std::string main = t.write("m.evo", "// a comment\nimport \"gone.evo\";\nimport \"c1.evo\";\n");
  t.write("c1.evo", "import \"c2.evo\";\n");
  t.write("c2.evo", "import \"c1.evo\";\n");
  SourceManager sm;
  DiagnosticEngine diags(sm);
  frontend::ImportOptions opts;
  opts.useEnv = false;
  opts.useBuiltin = false;
  auto prog = frontend::loadProgram(main, opts, sm, diags);
  CHECK(!prog);
  auto l = lines(diags);
  REQUIRE(l.size() == 2);
  CHECK(l[0].rfind(main + ":2:8: error: cannot find imported file 'gone.evo'", 0) == 0);
  CHECK(l[1] ==
        (t.path / "c2.evo").string() + ":1:8: error: import cycle: c1.evo -> c2.evo -> c1.evo");
  SourceManager sm2;
  DiagnosticEngine d2(sm2);
  CHECK(!frontend::loadProgram((t.path / "nope.evo").string(), opts, sm2, d2));
  CHECK(lines(d2)[0] == "evoc: error: cannot read file '" + (t.path / "nope.evo").string() + "'");
}

TEST_CASE("a chain of 500 imports resolves with linear work", "[imports]") {
  TempDir t("evoc-import-test");
  const int n = 500;
  for (int i = 0; i < n; ++i)
    t.write("m" + std::to_string(i) + ".evo",
            (i + 1 < n ? "import \"m" + std::to_string(i + 1) + ".evo\";\n" : std::string()) +
                "fn g" + std::to_string(i) + "(x: scalar) -> scalar { return x; }\n");
  SourceManager sm;
  DiagnosticEngine diags(sm);
  frontend::ImportOptions opts;
  opts.useEnv = false;
  opts.useBuiltin = false;
  auto prog = frontend::loadProgram((t.path / "m0.evo").string(), opts, sm, diags);
  INFO((lines(diags).empty() ? "" : lines(diags)[0]));
  REQUIRE(prog);
  CHECK(prog->modules.size() == size_t(n));
  CHECK(sm.numFiles() == n);
  // Each path is normalised when it is looked up and once more as a loaded
  // file: 2 per file, where comparing with every file loaded was n^2 / 2.
  CHECK(sm.pathNormalisations() <= 2 * n);
  // A file imported again (another spelling of its path) is the same file.
  CHECK(sm.loadFile((t.path / "." / "m7.evo").string()) == 7);
}
