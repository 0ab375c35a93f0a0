// `evoc opt FILE.ir [--passes=fold,cse,...]`: reads IR in its printed form,
// runs the named passes in order (by default the whole optimisation
// pipeline), each verified, and prints the result. The IR is an input as
// well as an output (MLIR Toy's toyc reads .mlir), so a pass is tested with
// a small text file and its expected output (tests/compiler/opt/text).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "app/Driver.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "opt/Passes.h"
#include "support/Error.h"
#include "support/OptionTable.h"

namespace evoc::app {
namespace {

/// The comma-separated names of --passes into `out`; "" or why not.
std::string splitPasses(const std::string &list, std::vector<std::string> &out) {
  std::stringstream ss(list);
  std::string name;
  while (std::getline(ss, name, ','))
    out.push_back(name);
  if (list.empty() || list.back() == ',')
    out.push_back("");
  for (const std::string &n : out)
    if (n.empty())
      return "--passes takes names separated by commas, got '" + list + "'";
  return "";
}

int runOpt(const std::vector<std::string> &args) {
  std::vector<std::string> files, passes;
  bool pipeline = true;
  OptionTable t("evoc opt");
  t.custom("--passes", [&](const std::string &list) {
     pipeline = false;
     return splitPasses(list, passes);
   }).positionals(files);
  if (!t.parse(args))
    return 2;
  if (files.size() > 1) {
    t.error("unexpected argument '" + files[1] + "'");
    return 2;
  }
  if (files.empty()) {
    t.error("no .ir file given");
    return 2;
  }
  const std::string &file = files[0];
  const std::vector<std::string> known = opt::passNames();
  for (const std::string &p : passes)
    if (std::find(known.begin(), known.end(), p) == known.end()) {
      std::string list;
      for (const std::string &k : known)
        list += (list.empty() ? "" : ", ") + k;
      std::fprintf(stderr, "evoc opt: error: unknown pass '%s' (passes: %s)\n", p.c_str(),
                   list.c_str());
      return 2;
    }
  std::string text = readText(file);
  if (text.empty()) {
    std::fprintf(stderr, "evoc opt: error: cannot read '%s' (or it is empty)\n", file.c_str());
    return 1;
  }
  try {
    ir::Module m = ir::parse(text);
    if (std::vector<std::string> errs = ir::verify(m); !errs.empty()) {
      for (const std::string &e : errs)
        std::fprintf(stderr, "%s: error: %s\n", file.c_str(), e.c_str());
      return 1;
    }
    if (pipeline)
      opt::runPasses(m);
    for (const std::string &p : passes)
      opt::runPass(m, p);
    ir::print(m, std::cout);
  } catch (const Error &e) {
    std::fprintf(stderr, "%s: error: %s\n", file.c_str(), e.what());
    return 1;
  }
  return 0;
}

bool registered = addSubcommand(
    {"opt", "run IR passes on a printed .ir file", runOpt,
     "opt FILE.ir [--passes=NAME,NAME,...]\n"
     "  --passes=LIST      the passes to run, in order (default: the whole optimisation\n"
     "                     pipeline); the result is printed",
     /*commonOptions=*/false});

} // namespace
} // namespace evoc::app
