// Golden diagnostics: every tests/golden/NAME.evo is checked and its
// diagnostics (headlines and notes) must equal NAME.expected line by line.
// EVOC_UPDATE_GOLDEN=1 rewrites the .expected files (review the diff!).
#include "SemaTestUtil.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

using namespace evoc;
namespace fs = std::filesystem;

static std::string replaceAll(std::string s, const std::string &from, const std::string &to) {
  for (size_t i = s.find(from); i != std::string::npos; i = s.find(from, i + to.size()))
    s.replace(i, from.size(), to);
  return s;
}

TEST_CASE("golden diagnostics", "[golden]") {
  fs::path dir = fs::path(EVOC_SOURCE_DIR) / "tests" / "golden";
  std::vector<fs::path> cases;
  for (const auto &e : fs::directory_iterator(dir))
    if (e.path().extension() == ".evo")
      cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  CHECK(cases.size() >= 40);
  bool update = std::getenv("EVOC_UPDATE_GOLDEN") != nullptr;
  for (const auto &path : cases) {
    auto c = test::checkPath(path.string());
    std::string got;
    for (const auto &l : c->lines()) {
      std::string line = replaceAll(l, dir.string() + "/", "");
      got += replaceAll(line, std::string(EVOC_SOURCE_DIR) + "/", "<src>/") + "\n";
    }
    fs::path expectedPath = path;
    expectedPath.replace_extension(".expected");
    if (update) {
      std::ofstream(expectedPath) << got;
      continue;
    }
    INFO("golden case " << path.filename().string());
    REQUIRE(fs::exists(expectedPath));
    CHECK(!got.empty()); // every golden program is diagnosed
    CHECK(got == test::readFile(expectedPath.string()));
  }
}
