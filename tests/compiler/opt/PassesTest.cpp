// Golden excerpts of printed IR after each pass; the pipeline preserves the
// interpreter's results on the ELDiR kernels and their adjoints.
#include <catch2/catch.hpp>

#include <sstream>

#include "EldirFixture.h"
#include "Rollout.h"
#include "autodiff/Differentiate.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "opt/Passes.h"

using namespace evoc;
using namespace evoc::ir;

namespace {
const char *kHeader = "module m precision=f64\n"
                      "set point body\n"
                      "set spring body\n"
                      "buffer x elem=f role=state sets=point\n"
                      "buffer a elem=i role=body sets=spring\n"
                      "buffer t elem=f role=temp sets=point\n"
                      "buffer xn elem=f role=next sets=point\n"
                      "buffer x2 elem=f role=state sets=point comps=2\n"
                      "buffer y2 elem=f role=next sets=point comps=2\n";

std::string after(void (*pass)(Module &), const std::string &body) {
  Module m = parse(std::string(kHeader) + "kernel step kind=step {\n" + body + "}\n");
  REQUIRE(verify(m).empty());
  pass(m);
  auto errs = verify(m);
  INFO((errs.empty() ? "" : errs[0]));
  CHECK(errs.empty());
  std::ostringstream os;
  printKernel(m, m.kernels[0], os);
  return os.str();
}
} // namespace

TEST_CASE("fold: constants and identities", "[opt][fold]") {
  std::string s = after(opt::constantFold, "  %1 = constf 2\n"
                                           "  %2 = constf 3\n"
                                           "  %3 = mul %1, %2\n"
                                           "  %4 = consti 0\n"
                                           "  %5 = load x[%4]\n"
                                           "  %6 = constf 0\n"
                                           "  %7 = add %5, %6\n"
                                           "  %8 = lt %1, %2\n"
                                           "  %9 = select %8, %7, %3\n"
                                           "  %10 = sqrt %3\n"
                                           "  %11 = mul %9, %10\n"
                                           "  store xn[%4], %11\n");
  CHECK_THAT(s, Catch::Contains("  %3 = constf 6\n"));
  CHECK_THAT(s, Catch::Contains("  %8 = constb true\n"));
  CHECK_THAT(s, Catch::Contains("  %10 = constf 2.4494897427831779\n") ||
                    Catch::Contains("  %10 = constf 2.449489742783178\n"));
  CHECK_THAT(s, Catch::Contains("  %11 = mul %5, %10\n")); // x + 0 and select folded
}

TEST_CASE("cse: shared values, scoped by loops, loads of written buffers kept", "[opt][cse]") {
  std::string s = after(opt::cse, "  %1 = consti 2\n"
                                  "  %2 = consti 2\n"
                                  "  loop point %3 {\n"
                                  "    %4 = imul %3, %1\n"
                                  "    %5 = imul %2, %3\n"
                                  "    %6 = load x2[%4]\n"
                                  "    %7 = load x2[%5]\n"
                                  "    %8 = mul %6, %7\n"
                                  "    %9 = mul %7, %6\n"
                                  "    %10 = add %8, %9\n"
                                  "    store t[%3], %10\n"
                                  "    %11 = load t[%3]\n"
                                  "    %12 = load t[%3]\n"
                                  "    %13 = add %11, %12\n"
                                  "    store xn[%3], %13\n"
                                  "  }\n"
                                  "  loop point %14 {\n"
                                  "    %15 = imul %14, %1\n"
                                  "    %16 = load x2[%15]\n"
                                  "    store y2[%15], %16\n"
                                  "  }\n");
  CHECK_THAT(s, Catch::Contains("    %7 = load x2[%4]\n"));
  CHECK_THAT(s, Catch::Contains("    %10 = add %8, %8\n"));
  CHECK_THAT(s, Catch::Contains("    %13 = add %11, %12\n")); // t is written: not shared
  CHECK_THAT(s, Catch::Contains("    %15 = imul %14, %1\n"));
}

TEST_CASE("dce: unused values, unread locals, empty loops", "[opt][dce]") {
  std::string s = after(opt::dce, "  %1 = constf 2\n"
                                  "  %2 = local 0\n"
                                  "  loop point %3 {\n"
                                  "    %4 = load x[%3]\n"
                                  "    %5 = sin %4\n"
                                  "    local.add %2, %5\n"
                                  "  }\n"
                                  "  loop point %6 {\n"
                                  "    %7 = load x[%6]\n"
                                  "    %8 = mul %7, %1\n"
                                  "    %9 = cos %7\n"
                                  "    store xn[%6], %8\n"
                                  "  }\n");
  CHECK(s == "kernel step kind=step {\n"
             "  %1 = constf 2\n"
             "  loop point %6 {\n"
             "    %7 = load x[%6]\n"
             "    %8 = mul %7, %1\n"
             "    store xn[%6], %8\n"
             "  }\n"
             "}\n");
}

TEST_CASE("fuse: same set and own elements fuse; gathers and shared locals do not", "[opt][fuse]") {
  std::string s = after(opt::fuseLoops, "  %1 = consti 2\n"
                                        "  %2 = consti 1\n"
                                        "  loop point %3 {\n"
                                        "    %4 = load x[%3]\n"
                                        "    store t[%3], %4\n"
                                        "  }\n"
                                        "  loop point %5 {\n"
                                        "    %6 = load t[%5]\n"
                                        "    %7 = imul %5, %1\n"
                                        "    %8 = iadd %7, %2\n"
                                        "    store y2[%8], %6\n"
                                        "    store xn[%5], %6\n"
                                        "  }\n");
  CHECK_THAT(s, Catch::Contains("  loop point %3 {\n"
                                "    %4 = load x[%3]\n"
                                "    store t[%3], %4\n"
                                "    %6 = load t[%3]\n"
                                "    %7 = imul %3, %1\n"));
  CHECK_THAT(s, Catch::Contains("    store xn[%3], %6\n  }\n}\n"));
  // Reading t at another element (through an index buffer) blocks fusion.
  std::string g = after(opt::fuseLoops, "  loop point %1 {\n"
                                        "    %2 = load x[%1]\n"
                                        "    store t[%1], %2\n"
                                        "  }\n"
                                        "  %3 = consti 0\n"
                                        "  loop point %4 {\n"
                                        "    %5 = load t[%3]\n"
                                        "    store xn[%4], %5\n"
                                        "  }\n");
  CHECK_THAT(g, Catch::Contains("  loop point %4 {\n"));
  std::string l = after(opt::fuseLoops, "  %1 = local 0\n"
                                        "  loop point %2 {\n"
                                        "    %3 = load x[%2]\n"
                                        "    local.add %1, %3\n"
                                        "  }\n"
                                        "  loop point %4 {\n"
                                        "    %5 = load x[%4]\n"
                                        "    local.add %1, %5\n"
                                        "  }\n"
                                        "  %6 = local.get %1\n");
  CHECK_THAT(l, Catch::Contains("  loop point %4 {\n"));
}

TEST_CASE("pipeline: dump hook, and ELDiR results unchanged by optimisation", "[opt][pipeline]") {
  for (auto contact : {test::Contact::NoSlip, test::Contact::Friction}) {
    test::EldirOptions o;
    o.contact = contact;
    Module m = test::eldirModule(o);
    autodiff::differentiate(m);
    Module opt = parse(toString(m));
    std::vector<std::string> dumped;
    size_t before = toString(opt).size();
    opt::PassOptions po;
    po.afterPass = [&](const Module &mm, const std::string &pass) {
      dumped.push_back(pass);
      CHECK(verify(mm).empty());
    };
    opt::runPasses(opt, po);
    CHECK(dumped == std::vector<std::string>{"fold", "cse", "dce", "fuse", "fold", "cse", "dce"});
    CHECK(toString(opt).size() < before * 3 / 4);
    std::mt19937 rng(3), rng2(3);
    test::Data d1 = test::eldirRobot(m, 6, 0.11, rng);
    test::Data d2 = test::eldirRobot(opt, 6, 0.11, rng2);
    double g1 = test::rolloutGradient(m, d1, 30);
    double g2 = test::rolloutGradient(opt, d2, 30);
    CHECK(g1 == g2);
    for (const char *b : {"mlp.w1.adj", "mlp.b2.adj", "point.x.adj", "point.v.adj"}) {
      INFO(b);
      const auto &a1 = d1.F(b), &a2 = d2.F(b);
      double worst = 0;
      for (size_t i = 0; i < a1.size(); ++i)
        worst = std::max(worst, std::fabs(a1[i] - a2[i]) / (std::fabs(a1[i]) + 1e-300));
      CHECK(worst < 1e-12);
    }
  }
}
