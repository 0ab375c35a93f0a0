// `evoc fmt FILE...`: rewrite .evo files in the canonical layout
// (frontend/Format.h); --check lists the files that are not, for CI.
#include "app/Driver.h"
#include "frontend/Format.h"
#include "support/OptionTable.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace evoc::app {

static int runFmt(const std::vector<std::string> &args) {
  bool check = false, toStdout = false;
  std::vector<std::string> files;
  OptionTable t("evoc fmt");
  t.flag("--check", check).flag("--stdout", toStdout).positionals(files);
  if (!t.parse(args))
    return 2;
  if (files.empty()) {
    t.error("no .evo file given");
    return 2;
  }
  int rc = 0;
  for (const std::string &f : files) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(f, ec)) {
      std::fprintf(stderr, "evoc fmt: error: %s: no such file\n", f.c_str());
      rc = std::max(rc, 2);
      continue;
    }
    const std::string text = readText(f);
    frontend::FormatResult r = frontend::formatSource(text, f);
    if (!r.ok) { // located and rendered as `evoc check` prints it; the file is left as it is
      std::string msg = r.rendered;
      while (!msg.empty() && msg.back() == '\n')
        msg.pop_back();
      std::fprintf(stderr, "%s\n", msg.c_str());
      rc = std::max(rc, 2);
      continue;
    }
    if (toStdout) {
      std::cout << r.text;
    } else if (r.text != text) {
      if (check) {
        std::printf("%s: not formatted (evoc fmt %s)\n", f.c_str(), f.c_str());
        rc = std::max(rc, 1);
        continue;
      }
      // Written beside it and renamed over it: never half a file.
      const std::string tmp = f + ".evoc-fmt.tmp";
      {
        std::ofstream out(tmp, std::ios::binary);
        out << r.text;
        if (!out) {
          std::fprintf(stderr, "evoc fmt: error: cannot write %s\n", tmp.c_str());
          std::filesystem::remove(tmp, ec);
          rc = std::max(rc, 2);
          continue;
        }
      }
      std::filesystem::rename(tmp, f, ec);
      if (ec) {
        std::fprintf(stderr, "evoc fmt: error: cannot replace %s: %s\n", f.c_str(),
                     ec.message().c_str());
        std::filesystem::remove(tmp, ec);
        rc = std::max(rc, 2);
      }
    }
  }
  return rc;
}

static bool registered = addSubcommand(
    {"fmt", "rewrite .evo files in the canonical layout (--check: list those that are not)", runFmt,
     "fmt FILE.evo... [--check] [--stdout]\n"
     "  Rewrites each file in place in evoc's layout: the author's line breaks\n"
     "  and comments, evoc's indentation and spacing. The program is unchanged\n"
     "  (checked). --check: change nothing, list the files not formatted, exit\n"
     "  1 if any. --stdout: print the formatted text instead of writing.",
     false});

} // namespace evoc::app
