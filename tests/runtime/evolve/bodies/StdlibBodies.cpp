// The stdlib grammar bodies read by the checker (see StdlibBodies.h).
#include "StdlibBodies.h"

#include "sema/Program.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

namespace evoc::test {

namespace {
const std::string kSrc = EVOC_SOURCE_DIR;

// examples/grammar_walker.evo's mutation block: every stdlib grammar is
// varied as the example varies its walkers.
const char *kMutation = R"(
mutation {
  add p = 0.3;
  remove p = 0.2;
  swap p = 0.2;
  rearrange p = 0.1;
  combine p = 0.1;
  perturb p = 0.3;
  flip actuator p = 1 / actuators until changed;
}
)";
const char *kWorld = "world { dim = 2; ground = flat(height = 0.1, friction = 1.0); }\n";
} // namespace

CheckedBody checkGrammarBody(const std::string &text, const std::string &path) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  sema::CheckOptions opts;
  opts.ignoreEnv = true;
  int f = sources.addBuffer(kSrc + "/" + path, text);
  auto p = sema::checkBuffer(f, opts, sources, diags);
  INFO(text);
  for (const auto &l : diags.headlines())
    UNSCOPED_INFO(l);
  REQUIRE(p);
  REQUIRE(p->grammarBody);
  return {*p->grammarBody, p->grammarMutation};
}

std::string sourceFile(const std::string &relative) {
  std::ifstream in(kSrc + "/" + relative);
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::pair<std::string, CheckedBody>> stdlibBodies() {
  auto small = [](const std::string &import, const std::string &body) {
    return checkGrammarBody("import \"" + import + "\";\n" + kWorld + body + kMutation);
  };
  // Limits of the example's size (max_parts = 12 there): bodies big enough
  // for every operator to act, small enough that 25,000 mutations of each
  // grammar fit the suite's time.
  return {
      {"walker",
       checkGrammarBody(sourceFile("examples/grammar_walker.evo"), "examples/grammar_walker.evo")},
      {"lattice", small("grammars/eldir_lattice.evo",
                        "body grammar G { grammar = EldirLattice; scale = 0.05; stiffness = 3e4; "
                        "actuation = 0.1; max_parts = 16; max_depth = 8; }\n")},
      {"voxels", small("grammars/voxels.evo",
                       "body grammar G { grammar = Voxels; scale = 0.05; actuation = 0.1; "
                       "max_parts = 12; max_points = 80; max_springs = 200; }\n")},
      {"limb", small("grammars/sims_limb.evo",
                     "body grammar G { grammar = SimsLimb; scale = 0.05; actuation = 0.1; "
                     "max_parts = 12; max_depth = 6; }\n")},
  };
}

} // namespace evoc::test
