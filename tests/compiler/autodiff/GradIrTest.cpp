// Golden excerpts of printed adjoint IR ("grad-ir") for small kernels.
#include <catch2/catch.hpp>

#include "autodiff/Differentiate.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

using namespace evoc;
using namespace evoc::ir;

namespace {
std::string gradIr(const std::string &kernel) {
  Module m = parse("module m precision=f64\n"
                   "set point body\n"
                   "set spring body\n"
                   "buffer x elem=f role=state sets=point\n"
                   "buffer a elem=i role=body sets=spring\n"
                   "buffer k elem=f role=body sets=spring\n"
                   "buffer w elem=f role=param sets=spring\n"
                   "buffer f elem=f role=temp sets=point\n"
                   "buffer xn elem=f role=next sets=point\n"
                   "buffer loss elem=f role=output\n" +
                   kernel);
  autodiff::differentiate(m);
  auto errs = verify(m);
  INFO((errs.empty() ? "" : errs[0]));
  CHECK(errs.empty());
  return toString(m);
}
} // namespace

TEST_CASE("grad-ir: gather becomes scatter-add, scatter-add becomes gather", "[autodiff][golden]") {
  std::string s = gradIr("kernel step kind=step {\n"
                         "  loop spring %1 {\n"
                         "    %2 = load a[%1]\n"
                         "    %3 = load x[%2]\n"
                         "    %4 = load w[%1]\n"
                         "    %5 = mul %3, %4\n"
                         "    accadd f[%2], %5\n"
                         "  }\n"
                         "  loop point %6 {\n"
                         "    %7 = load f[%6]\n"
                         "    store xn[%6], %7\n"
                         "  }\n"
                         "}\n");
  // Adjoint buffers: state, param and the active temp; not the index or the
  // non-differentiable body buffer.
  CHECK_THAT(s, Catch::Contains("buffer x.adj elem=f role=adjoint sets=point primal=x\n"));
  CHECK_THAT(s, Catch::Contains("buffer w.adj elem=f role=adjoint sets=spring primal=w\n"));
  CHECK_THAT(s, Catch::Contains("buffer f.adj elem=f role=adjoint sets=point primal=f\n"));
  CHECK_THAT(s, Catch::Contains("buffer xn.adj elem=f role=adjoint sets=point primal=xn\n"));
  CHECK_THAT(s, !Catch::Contains("buffer a.adj") && !Catch::Contains("buffer k.adj"));
  CHECK_THAT(s, Catch::Contains("kernel step.adj kind=stepadj primal=0 {\n"));
  // The replay writes the temp; the reverse of the point loop gathers xn.adj
  // and scatters into f.adj; the spring loop gathers f.adj, scatters x.adj.
  std::string adj = s.substr(s.find("kernel step.adj"));
  CHECK_THAT(adj, Catch::Contains("    accadd f[%2], %5\n  }\n  loop point %6 {\n"
                                  "    %7 = load f[%6]\n  }\n"));
  CHECK_THAT(s, Catch::Contains("= load xn.adj[%"));
  CHECK_THAT(s, Catch::Contains("    accadd f.adj[%"));
  CHECK_THAT(s, Catch::Contains("= load f.adj[%"));
  CHECK_THAT(s, Catch::Contains("    accadd x.adj[%"));
  CHECK_THAT(s, Catch::Contains("    accadd w.adj[%"));
  CHECK_THAT(adj, !Catch::Contains("store xn[")); // never writes the forward results
}

TEST_CASE("grad-ir: a max reduction routes its adjoint through a first-index pre-pass",
          "[autodiff][golden]") {
  std::string s = gradIr("kernel loss kind=loss {\n"
                         "  %1 = local -inf\n"
                         "  loop point %2 {\n"
                         "    %3 = load x[%2]\n"
                         "    local.max %1, %3\n"
                         "  }\n"
                         "  %4 = local.get %1\n"
                         "  %5 = consti 0\n"
                         "  store loss[%5], %4\n"
                         "}\n");
  CHECK_THAT(s, Catch::Contains("kernel loss.adj kind=lossadj primal=0 {\n"));
  CHECK_THAT(s, Catch::Contains("= local inf\n"));
  CHECK_THAT(s, Catch::Contains("    local.min %"));
  CHECK_THAT(s, Catch::Contains("= load loss.adj[%"));
}
