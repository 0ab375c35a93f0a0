// Every ```evo block of docs/language.md, docs/tutorial.md and README.md
// checks without errors; every ```evo-error block is rejected.
#include "SemaTestUtil.h"

#include <catch2/catch.hpp>

#include <sstream>

using namespace evoc;

namespace {

struct BlockCounts {
  int good = 0, bad = 0;
};

/// Checks every evo / evo-error block of one Markdown file.
BlockCounts checkDocBlocks(const std::string &relPath) {
  const std::string path = std::string(EVOC_SOURCE_DIR) + "/" + relPath;
  std::string doc = test::readFile(path);
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
      auto c = test::checkText(text, path);
      INFO(relPath << " block at line " << start << ":\n" << c->all());
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
  return {good, bad};
}

} // namespace

TEST_CASE("the examples of docs/language.md check", "[docs]") {
  BlockCounts n = checkDocBlocks("docs/language.md");
  CHECK(n.good >= 10);
  CHECK(n.bad >= 2);
}

TEST_CASE("the examples of docs/tutorial.md and README.md check", "[docs]") {
  CHECK(checkDocBlocks("docs/tutorial.md").good >= 2);
  CHECK(checkDocBlocks("README.md").good >= 1);
}
