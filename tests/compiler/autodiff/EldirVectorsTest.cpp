// The interpreter on the hand-built ELDiR kernels reproduces the reference
// losses and gradients of ../shared/testdata/eldir-vectors (T = 100).
#include "Close.h"
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "EldirFixture.h"
#include "Rollout.h"
#include "autodiff/Differentiate.h"

using namespace evoc;
using namespace evoc::ir;

namespace {
nlohmann::json readJson(const std::string &name) {
  std::ifstream f(std::string(EVOC_SHARED_DIR) + "/testdata/eldir-vectors/" + name);
  REQUIRE(f.good());
  return nlohmann::json::parse(f);
}
} // namespace

namespace {
void checkVectors(int steps) {
  auto robots = readJson("robots.json")["robots"];
  auto params = readJson("params.json")["params"];
  for (auto contact : {test::Contact::Friction, test::Contact::NoSlip}) {
    std::string cname = contact == test::Contact::Friction ? "friction" : "noslip";
    auto expected =
        readJson("expected_" + cname + "_T" + std::to_string(steps) + ".json")["results"];
    test::EldirOptions o;
    o.contact = contact;
    o.hidden = 32;
    Module m = test::eldirModule(o);
    autodiff::differentiate(m);
    for (size_t r = 0; r < robots.size(); ++r) {
      INFO(cname << " robot " << r);
      auto &rb = robots[r];
      int n = static_cast<int>(rb["points"].size()), ns = static_cast<int>(rb["springs"].size());
      test::Data d(m, {{"point", n}, {"spring", ns}});
      for (int i = 0; i < n; ++i) {
        d.F("point.x")[2 * i] = rb["points"][i][0];
        d.F("point.x")[2 * i + 1] = rb["points"][i][1];
      }
      for (int s = 0; s < ns; ++s) {
        d.I("spring.a")[s] = rb["springs"][s][0];
        d.I("spring.b")[s] = rb["springs"][s][1];
        d.F("spring.rest")[s] = rb["springs"][s][2];
        d.F("spring.stiffness")[s] = rb["springs"][s][3];
        d.F("spring.actuation")[s] = rb["springs"][s][4];
      }
      auto &p = params[r];
      auto flat = [](const nlohmann::json &j) {
        std::vector<double> out;
        for (auto &row : j) {
          if (row.is_array())
            for (auto &v : row)
              out.push_back(v);
          else
            out.push_back(row);
        }
        return out;
      };
      for (const char *k : {"w1", "b1", "w2", "b2"})
        d.F(std::string("mlp.") + k) = flat(p[k]);
      double L = test::rolloutGradient(m, d, steps);
      double Lref = expected[r]["loss"];
      CHECK(test::close(L, Lref, 1e-8, 1e-14));
      for (const char *k : {"w1", "b1", "w2", "b2"}) {
        INFO(k);
        std::vector<double> ref = flat(expected[r]["grad"][k]);
        const auto &g = d.F(std::string("mlp.") + k + ".adj");
        REQUIRE(g.size() == ref.size());
        double largest = 0, worst = 0;
        for (double v : ref)
          largest = std::max(largest, std::fabs(v));
        for (size_t i = 0; i < ref.size(); ++i)
          worst = std::max(worst, std::fabs(g[i] - ref[i]));
        CHECK(worst <= 1e-6 * largest);
      }
    }
  }
}
} // namespace

TEST_CASE("ELDiR reference vectors: loss and gradients, T = 100", "[autodiff][eldir]") {
  checkVectors(100);
}

// About 3 s: run with `evoc_autodiff_tests "[slow]"`.
TEST_CASE("ELDiR reference vectors: loss and gradients, T = 1000", "[.][slow][eldir]") {
  checkVectors(1000);
}
