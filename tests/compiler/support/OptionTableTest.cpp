// The commands' option table (support/OptionTable.h): both spellings of a
// value, range-checked integers, aliases, positionals, and the refusals.
#include <catch2/catch.hpp>

#include "support/OptionTable.h"

using evoc::OptionTable;

TEST_CASE("option table: values, flags, integers, aliases and positionals", "[cli]") {
  std::string out;
  bool tape = false;
  int64_t steps = 0;
  int threads = -1;
  std::vector<std::string> files;
  OptionTable t("evoc test");
  t.text("--out", out)
      .alias("-o", "--out")
      .flag("--full-tape", tape)
      .integer("--steps", 2, 100, steps)
      .integer("--threads", 0, 4096, threads, " (0: one per core)")
      .positionals(files);
  REQUIRE(t.parse({"a.evo", "--out=r.json", "--full-tape", "--steps", "100", "--threads=0", "b"}));
  CHECK(out == "r.json");
  CHECK(tape);
  CHECK(steps == 100);
  CHECK(threads == 0);
  CHECK(files == std::vector<std::string>{"a.evo", "b"});
  REQUIRE(t.parse({"-o", "s.json"}));
  CHECK(out == "s.json");

  CHECK_FALSE(t.parse({"--steps", "101"}));                  // out of range
  CHECK_FALSE(t.parse({"--steps", "1"}));                    // below it
  CHECK_FALSE(t.parse({"--steps", "1e2"}));                  // not digits
  CHECK_FALSE(t.parse({"--steps", "99999999999999999999"})); // no overflow
  CHECK(steps == 100);                                       // untouched by the refusals
  CHECK_FALSE(t.parse({"--threads", "-1"}));
  CHECK_FALSE(t.parse({"--out"}));           // needs a value
  CHECK_FALSE(t.parse({"--full-tape=yes"})); // takes none
  CHECK_FALSE(t.parse({"--frobnicate"}));    // unknown
}

TEST_CASE("option table: without positionals an argument is an error; custom values", "[cli]") {
  std::vector<std::string> dirs;
  OptionTable t("evoc test");
  t.custom("--stdlib", [&](const std::string &d) {
    if (d.empty())
      return std::string("--stdlib needs a folder");
    dirs.push_back(d);
    return std::string();
  });
  CHECK(t.parse({"--stdlib", "a", "--stdlib=b"}));
  CHECK(dirs == std::vector<std::string>{"a", "b"});
  CHECK_FALSE(t.parse({"--stdlib="}));
  CHECK_FALSE(t.parse({"stray"}));
  CHECK_FALSE(t.error("a message"));
}
