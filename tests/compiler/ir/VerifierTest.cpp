// Verifier tests: each rule of IR.h is caught on a small broken module.
#include <catch2/catch.hpp>

#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

using namespace evoc::ir;

namespace {
std::string errorsOf(const std::string &body, const std::string &kind = "step") {
  std::string s = "module m\nset point body\nset spring body\n"
                  "buffer x elem=f role=state sets=point\n"
                  "buffer a elem=i role=body sets=spring\n"
                  "buffer f elem=f role=temp sets=point\n"
                  "buffer xn elem=f role=next sets=point\n"
                  "kernel k kind=" +
                  kind + " {\n" + body + "}\n";
  std::string all;
  for (auto &e : verify(parse(s)))
    all += e + "\n";
  return all;
}
} // namespace

TEST_CASE("verifier accepts a well-formed kernel", "[ir][verifier]") {
  CHECK(errorsOf("  loop point %1 {\n    %2 = load x[%1]\n    store xn[%1], %2\n  }\n") == "");
}

TEST_CASE("verifier catches broken rules", "[ir][verifier]") {
  CHECK_THAT(errorsOf("  %1 = consti 0\n  %2 = add %1, %1\n"),
             Catch::Contains("operand 1 must be f, is i"));
  CHECK_THAT(errorsOf("  loop point %1 {\n    %2 = load x[%1]\n  }\n  %3 = neg %2\n"),
             Catch::Contains("not in scope"));
  CHECK_THAT(errorsOf("  %1 = consti 0\n  %2 = constf 1\n  store x[%1], %2\n"),
             Catch::Contains("may not write a state buffer"));
  CHECK_THAT(errorsOf("  %1 = consti 0\n  %2 = constf 1\n  store xn[%1], %2\n"
                      "  accadd xn[%1], %2\n"),
             Catch::Contains("both stored and accumulated"));
  CHECK_THAT(errorsOf("  %1 = consti 0\n  %2 = load xn[%1]\n"),
             Catch::Contains("may not read a next buffer"));
  CHECK_THAT(errorsOf("  %1 = consti 0\n  %2 = load f[%1]\n"),
             Catch::Contains("temporary read before it is written"));
  CHECK_THAT(errorsOf("  %1 = consti 0\n  %2 = load a[%1]\n  %3 = itof %2\n  %4 = lt %2, %3\n"),
             Catch::Contains("operand 2 must be i, is f"));
  CHECK_THAT(errorsOf("  %1 = local 0\n  loop point %2 {\n    %3 = local.get %1\n  }\n"),
             Catch::Contains("read only in the block that declares it"));
  CHECK_THAT(errorsOf("  %1 = local 0\n  %2 = local.get %1\n  %3 = constf 1\n"
                      "  local.add %1, %3\n"),
             Catch::Contains("local updated after it was read"));
  CHECK_THAT(errorsOf("  %1 = constf 0\n  local.add %1, %1\n"),
             Catch::Contains("first operand is not a local"));
  CHECK_THAT(errorsOf("  %1 = constb true\n  %2 = constf 1\n  %3 = consti 1\n"
                      "  %4 = select %1, %2, %3\n"),
             Catch::Contains("operand 3 must be f"));
}

TEST_CASE("verifier checks that a set's layout adds up to its size", "[ir][verifier]") {
  auto errs = [](const std::string &set) {
    std::string all;
    for (auto &e : verify(parse("module m\nset point body\n" + set + "\n")))
      all += e + "\n";
    return all;
  };
  CHECK(errs("set input base=12 terms=point*4 layout=-*10,point*4,-*2") == "");
  CHECK(errs("set input base=12 terms=point*4 layout=-*10,point*1,-*2,point*3") == "");
  CHECK_THAT(errs("set input base=12 terms=point*4 layout=-*10,point*4"),
             Catch::Contains("set input: the layout does not add up"));
  CHECK_THAT(errs("set input base=12 terms=point*4 layout=-*12,point*3"),
             Catch::Contains("set input: the layout does not add up"));
  CHECK_THAT(errs("set input base=12 terms=point*4 layout=-*12,point*0,point*4"),
             Catch::Contains("set input: bad layout segment"));
}

TEST_CASE("verifier: a kept temporary (tape) is a float temp that step.adj may read first",
          "[ir][verifier]") {
  auto errs = [](const std::string &buffer, const std::string &kind) {
    // A step kernel first (the adjoint's primal), then the kernel under test.
    const bool adj = kind == "stepadj";
    std::string s = "module m precision=f64\nset point body\n" + buffer +
                    "\nbuffer xn elem=f role=next sets=point\n"
                    "buffer w elem=f role=param sets=point\n"
                    "buffer w.adj elem=f role=adjoint sets=point primal=w\n"
                    "kernel s kind=step {\n}\n"
                    "kernel k kind=" +
                    kind + (adj ? " primal=0" : "") +
                    " {\n  loop point %1 {\n    %2 = load h[%1]\n    " +
                    (adj ? "accadd w.adj[%1], %2" : "store xn[%1], %2") + "\n  }\n}\n";
    Module m = parse(s);
    CHECK(toString(m) == s); // `tape` survives the round trip
    std::string all;
    for (auto &e : verify(m))
      all += e + "\n";
    return all;
  };
  // step.adj reads what the forward step kept; any other kernel must write it first.
  CHECK(errs("buffer h elem=f role=temp sets=point tape", "stepadj") == "");
  CHECK_THAT(errs("buffer h elem=f role=temp sets=point tape", "step"),
             Catch::Contains("temporary read before it is written"));
  CHECK_THAT(errs("buffer h elem=f role=temp sets=point", "stepadj"),
             Catch::Contains("temporary read before it is written"));
  CHECK_THAT(errs("buffer h elem=f role=body sets=point tape", "step"),
             Catch::Contains("only a float temp buffer is kept per step"));
}
