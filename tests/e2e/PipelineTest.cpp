// The pipeline script (app/Pipeline.cpp): every step printed by
// --dump-after in the order pipelineSteps() gives, the same module as the
// library's autodiff::differentiate + opt::runPasses, and --dump-after
// names checked on the command line.
#include <catch2/catch.hpp>

#include <sstream>

#include "EvocProcess.h"
#include "app/Pipeline.h"
#include "autodiff/Differentiate.h"
#include "ir/Printer.h"
#include "opt/Passes.h"

using namespace evoc;

namespace {

const std::string kExample = std::string(EVOC_SOURCE_DIR) + "/examples/eldir_small.evo";

std::string printed(const ir::Module &m) {
  std::ostringstream o;
  ir::print(m, o);
  return o.str();
}

} // namespace

TEST_CASE("pipeline: --dump-after=all prints every step, in the script's order", "[pipeline]") {
  std::ostringstream dump;
  app::PipelineOptions o;
  o.dumpAfter = "all";
  o.dumpTo = &dump;
  app::compileFile(kExample, {}, o);
  const std::string text = dump.str();
  size_t at = 0;
  for (const std::string &step : app::pipelineSteps()) {
    INFO("step " << step);
    const size_t next = text.find("// ----- IR after " + step + " -----\n", at);
    REQUIRE(next != std::string::npos);
    at = next + 1;
  }
  CHECK(test::countOf(text, "// ----- IR after autodiff -----") == 0); // loss-adjoints has it
  CHECK(test::countOf(text, "// ----- IR after cse -----") == 2);      // again after fuse
}

TEST_CASE("pipeline: its autodiff steps make the module autodiff::differentiate makes",
          "[pipeline]") {
  for (auto tape : {autodiff::Tape::Replay, autodiff::Tape::Keep, autodiff::Tape::Products}) {
    INFO("tape " << int(tape));
    app::PipelineOptions o;
    o.tape = tape;
    const std::string script = printed(app::compileFile(kExample, {}, o).module);
    app::PipelineOptions ir;
    ir.stage = app::Stage::IR;
    ir::Module m = app::compileFile(kExample, {}, ir).module;
    autodiff::differentiate(m, tape);
    opt::runPasses(m, {});
    CHECK(printed(m) == script);
  }
}

TEST_CASE("pipeline: --dump-after names a step of the stage printed", "[pipeline][cli]") {
  std::string out, err;
  CHECK(test::runEvocOut({"compile", kExample, "--emit", "opt-ir", "--dump-after=products"}, out,
                         err) == 0);
  CHECK(test::countOf(out, "// ----- IR after products -----") == 1);
  CHECK(test::runEvocOut({"compile", kExample, "--emit", "grad-ir", "--dump-after=autodiff"}, out,
                         err) == 0);
  CHECK(test::countOf(out, "// ----- IR after ") == 1);
  CHECK(test::countOf(out, "// ----- IR after autodiff -----") == 1);
  CHECK(test::runEvocOut({"compile", kExample, "--emit", "ir", "--dump-after=cse"}, out, err) == 1);
  CHECK(err.find("--dump-after=cse runs after the stage printed; use --emit opt-ir") !=
        std::string::npos);
  CHECK(test::runEvocOut({"compile", kExample, "--emit", "grad-ir", "--dump-after=folds"}, out,
                         err) == 1);
  CHECK(err.find("no pipeline step 'folds'") != std::string::npos);
  CHECK(err.find("irgen, tape, step-adjoint, products, loss-adjoints, fold") != std::string::npos);
}
