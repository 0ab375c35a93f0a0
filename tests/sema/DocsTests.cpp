// Every ```evo block of docs/language.md checks without errors; every
// ```evo-error block is rejected.
#include "SemaTestUtil.h"

#include <catch2/catch.hpp>

#include <sstream>

using namespace evoc;

TEST_CASE("the examples of docs/language.md check", "[docs]") {
  std::string doc = test::readFile(std::string(EVOC_SOURCE_DIR) + "/docs/language.md");
  REQUIRE(!doc.empty());
  std::istringstream in(doc);
  std::string line, block, kind;
  int lineNo = 0, start = 0, good = 0, bad = 0;
  bool inBlock = false;
  while (std::getline(in, line)) {
    ++lineNo;
    if (!inBlock && (line == "```evo" || line == "```evo-error")) {
      inBlock = true;
      kind = line.substr(3);
      block.clear();
      start = lineNo;
      continue;
    }
    if (inBlock && line == "```") {
      inBlock = false;
      // Pad with newlines so diagnostics point at the line in the doc.
      std::string text = std::string(size_t(start), '\n') + block;
      auto c = test::checkText(text, std::string(EVOC_SOURCE_DIR) + "/docs/language.md");
      INFO("docs/language.md block at line " << start << ":\n" << c->all());
      if (kind == "evo") {
        CHECK(c->program);
        ++good;
      } else {
        CHECK(!c->program);
        CHECK(c->diags.hasErrors());
        size_t at = block.find("// expect: ");
        REQUIRE(at != std::string::npos);
        std::string want = block.substr(at + 11, block.find('\n', at) - at - 11);
        CHECK(c->all().find(want) != std::string::npos);
        ++bad;
      }
      continue;
    }
    if (inBlock)
      block += line + "\n";
  }
  CHECK(!inBlock);
  CHECK(good >= 10);
  CHECK(bad >= 2);
}
