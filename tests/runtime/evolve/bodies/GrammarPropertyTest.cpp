// Grammar body properties over random genomes and random mutations of every
// fixture: grammatical (checked independently), connected, within limits,
// overlap-free (polygon clipping), finite, rest lengths equal distances,
// lifted; sampling follows the weights; same seed, same bytes; tied legs stay
// mirror images. Prints fallback rates per operator and timings.
#include "GrammarChecks.h"
#include "GrammarFixtures.h"

#include "evolve/bodies/GrammarBody.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <iostream>
#include <map>

using namespace evoc;
using namespace evoc::evolve;

TEST_CASE("grammar property: random genomes x random mutations keep every invariant",
          "[grammar][property]") {
  test::PropertyTotals totals;
  for (auto &[name, spec] : test::allGrammars()) {
    // Mixed rates (evolving) plus one model per operator alone on a fixed
    // pool, for the fallback rates.
    std::vector<std::pair<std::string, body::GrammarMutationSpec>> models = {
        {"mixed", test::mixedMutation()}};
    for (const auto &op : test::kGrammarOps)
      models.push_back({op, test::onlyMutation(op)});
    for (auto &[label, mut] : models) {
      bool evolving = label == "mixed";
      std::string e =
          test::mutateAndCheck("grammar " + name + " / " + label, GrammarBody(spec, mut), evolving,
                               evolving ? 16 : 48, evolving ? 5000 : 1200, 1234, totals);
      REQUIRE(e == "");
    }
  }
  std::cout << "grammar property: " << totals.mutations << " mutations\n";
  // With the stdlib suite's 100,000 (GrammarStdlibPropertyTest.cpp) 150,000
  // a run; this half is kept to 50,000 so both suites fit ~60 s on a core.
  CHECK(totals.mutations >= 50000);
  for (const auto &op : test::kGrammarOps) {
    INFO(op);
    CHECK(totals.applied[op] > 0);
  }
}

TEST_CASE("grammar property: sampling follows the weights (chi-square)", "[grammar][property]") {
  GrammarBody b(test::voxelGrammar(), test::mixedMutation());
  EvoRng rng(99);
  std::vector<int> counts(4, 0);
  const int n = 8000;
  for (int i = 0; i < n; ++i)
    ++counts[b.sampleGenome(rng).root.alt];
  double chi = 0;
  for (int k = 0; k < 4; ++k) {
    double expect = n * (k + 1) / 10.0;
    chi += (counts[k] - expect) * (counts[k] - expect) / expect;
  }
  INFO(counts[0] << " " << counts[1] << " " << counts[2] << " " << counts[3]);
  CHECK(chi < 16.27); // 3 degrees of freedom, p = 0.001
}

TEST_CASE("grammar property: the same seed gives the same bytes", "[grammar][property]") {
  for (auto &[name, spec] : test::allGrammars()) {
    // Two bodies of one spec: nothing but the seed decides.
    GrammarBody b1(spec, test::mixedMutation()), b2(spec, test::mixedMutation());
    INFO(name);
    CHECK(test::variationBytes(b1, 42, false) == test::variationBytes(b2, 42, false));
  }
}

TEST_CASE("grammar property: express and vary timings for a ~60-point body",
          "[grammar][property]") {
  GrammarBody b(test::voxelGrammar(), test::mixedMutation());
  EvoRng rng(5);
  GrammarGenome best;
  int bestPts = 0;
  for (int i = 0; i < 400; ++i) {
    GrammarGenome g = b.sampleGenome(rng);
    int np = b.express(g).robot.numPoints();
    if (std::abs(np - 60) < std::abs(bestPts - 60))
      best = g, bestPts = np;
  }
  using clk = std::chrono::steady_clock;
  const int reps = 300;
  auto t0 = clk::now();
  int sink = 0;
  for (int i = 0; i < reps; ++i)
    sink += b.express(best).robot.numSprings();
  auto t1 = clk::now();
  for (int i = 0; i < reps; ++i)
    sink += int(b.vary(best, {&best}, rng).attempts);
  auto t2 = clk::now();
  double ex = std::chrono::duration<double, std::micro>(t1 - t0).count() / reps;
  double va = std::chrono::duration<double, std::micro>(t2 - t1).count() / reps;
  std::cout << "grammar timing: body of " << bestPts << " points: express " << ex
            << " us/call, vary " << va << " us/call\n";
  CHECK(sink > 0);
}
