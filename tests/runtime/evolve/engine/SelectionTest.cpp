// Fitness from learning curves, invalid rules, selection and the random stream.
#include "evolve/engine/Selection.h"
#include "evolve/engine/EvoRng.h"
#include "evolve/engine/Fitness.h"
#include "evolve/engine/Metrics.h"
#include "support/Error.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <set>

using namespace evoc::evolve;

TEST_CASE("fitness: best -loss over the curve by default", "[fitness]") {
  FitnessSpec spec;
  auto v = judge({-0.1, -0.3, -0.2}, spec);
  CHECK(v.valid);
  CHECK(v.fitness == 0.3);
  spec.kind = FitnessKind::LastNegLoss;
  CHECK(judge({-0.1, -0.3, -0.2}, spec).fitness == 0.2);
  spec.kind = FitnessKind::MeanNegLoss;
  CHECK(judge({-0.1, -0.3, -0.2}, spec).fitness == Approx(0.2));
}

TEST_CASE("fitness: invalid robots", "[fitness]") {
  FitnessSpec spec;
  spec.invalid = {{InvalidRule::Kind::LossAbove, 5.5}, {InvalidRule::Kind::LossJump, 0.5}};
  CHECK_FALSE(judge({}, spec).valid);
  CHECK_FALSE(judge({-0.1, std::nan(""), -0.2}, spec).valid);
  CHECK_FALSE(judge({-0.1, INFINITY}, spec).valid);
  CHECK_FALSE(judge({-0.1, -5.6}, spec).valid); // |loss| > 5.5 (and a jump)
  CHECK_FALSE(judge({5.6}, spec).valid);        // |loss| > 5.5
  CHECK(judge({5.5}, spec).valid);              // not above
  CHECK_FALSE(judge({-0.1, -0.6}, spec).valid); // jump of exactly 0.5
  CHECK(judge({-0.1, -0.5}, spec).valid);       // jump of 0.4
  auto v = judge({-0.1, -0.7}, spec);
  CHECK(v.reason.find("jumps") != std::string::npos);
  // Without rules only non-finite losses are invalid.
  CHECK(judge({-0.1, -100}, FitnessSpec{}).valid);
}

TEST_CASE("selection: truncation keeps the best, ties to the older id", "[select]") {
  std::vector<Scored> pool = {{5, 1.0}, {2, 3.0}, {9, 3.0}, {1, 0.5}, {7, 2.0}};
  EvoRng rng(1), untouched(1);
  auto keep = selectSurvivors(pool, 3, SelectionSpec{}, rng);
  REQUIRE(keep.size() == 3);
  CHECK(pool[keep[0]].id == 2);
  CHECK(pool[keep[1]].id == 9);
  CHECK(pool[keep[2]].id == 7);
  CHECK(rng == untouched); // truncation draws nothing
  CHECK(selectSurvivors(pool, 10, SelectionSpec{}, rng).size() == 5);
}

TEST_CASE("selection: tournament keeps the elite, no duplicates, reproducible", "[select]") {
  std::vector<Scored> pool;
  for (uint64_t i = 0; i < 40; ++i)
    pool.push_back({i, double((i * 37) % 23)});
  SelectionSpec spec;
  spec.kind = SelectionSpec::Kind::Tournament;
  spec.tournamentSize = 3;
  EvoRng a(11), b(11);
  auto ka = selectSurvivors(pool, 20, spec, a);
  auto kb = selectSurvivors(pool, 20, spec, b);
  CHECK(ka == kb);
  REQUIRE(ka.size() == 20);
  CHECK(std::set<size_t>(ka.begin(), ka.end()).size() == 20);
  CHECK(pool[ka[0]].fitness == 22); // the elite survives
  for (size_t i = 1; i < ka.size(); ++i)
    CHECK_FALSE(ranksBefore(pool[ka[i]], pool[ka[i - 1]]));
  // Selection pressure: the survivors are better than the pool on average.
  double mean = 0, meanAll = 0;
  for (size_t k : ka)
    mean += pool[k].fitness / 20;
  for (const auto &s : pool)
    meanAll += s.fitness / 40;
  CHECK(mean > meanAll);
}

TEST_CASE("selection: random ignores fitness, no duplicates, reproducible, pool-order free",
          "[select]") {
  std::vector<Scored> pool;
  for (uint64_t i = 0; i < 40; ++i)
    pool.push_back({i, double(i)}); // fitness = id: any pressure would show
  SelectionSpec spec;
  spec.kind = SelectionSpec::Kind::Random;
  EvoRng a(5), b(5);
  auto ka = selectSurvivors(pool, 20, spec, a);
  CHECK(ka == selectSurvivors(pool, 20, spec, b));
  REQUIRE(ka.size() == 20);
  CHECK(std::set<size_t>(ka.begin(), ka.end()).size() == 20);
  for (size_t i = 1; i < ka.size(); ++i) // reported in rank order
    CHECK_FALSE(ranksBefore(pool[ka[i]], pool[ka[i - 1]]));
  // The same survivors whatever the order of the pool.
  std::vector<Scored> reversed(pool.rbegin(), pool.rend());
  EvoRng c(5);
  auto kr = selectSurvivors(reversed, 20, spec, c);
  std::set<uint64_t> ida, idr;
  for (size_t k : ka)
    ida.insert(pool[k].id);
  for (size_t k : kr)
    idr.insert(reversed[k].id);
  CHECK(ida == idr);
  // No pressure: over many draws every member survives about half the time.
  std::vector<int> kept(40, 0);
  EvoRng r(9);
  const int draws = 4000;
  for (int d = 0; d < draws; ++d)
    for (size_t k : selectSurvivors(pool, 20, spec, r))
      ++kept[k];
  for (int n : kept)
    CHECK(std::abs(n - draws / 2) < 200); // binomial sd about 32
  // The best is not kept unconditionally.
  CHECK(kept[39] < draws);
}

TEST_CASE("rng: reproducible, checkpointable, in range", "[rng]") {
  uint64_t sm = 0;
  CHECK(splitmix64(sm) == 0xe220a8397b1dcdafull); // SplitMix64's published first output
  EvoRng a(123);
  for (int i = 0; i < 100; ++i)
    a.next();
  EvoRng b(0);
  b.restore(a.save());
  CHECK(a == b);
  for (int i = 0; i < 1000; ++i) {
    CHECK(a.next() == b.next());
    double u = a.uniform();
    CHECK(u >= 0);
    CHECK(u < 1);
    b.uniform();
    CHECK(a.below(7) < 7);
    b.below(7);
  }
  CHECK_THROWS_AS(b.restore("xyz"), evoc::Error);
  CHECK(designSeed(1, 2) != designSeed(1, 3));
  CHECK(designSeed(1, 2) != designSeed(2, 2));
  CHECK(designSeed(1, 2) == designSeed(1, 2));
}

TEST_CASE("metrics: differentiability measures from a learning curve", "[metrics]") {
  auto m = learningMetrics({0.5, 0.3, 0.35, 0.1}, {2, 2, 2, 2});
  CHECK(m.gain == Approx(0.4));
  CHECK(m.monotone == Approx(2.0 / 3));
  CHECK(m.gradNormCv == 0);
  m = learningMetrics({0.5}, {1, 3});
  CHECK(m.gain == 0);
  CHECK(std::isnan(m.monotone));
  CHECK(m.gradNormCv == Approx(0.5));
  auto j = metricsJson(learningMetrics({}, {}));
  CHECK(j["learning_gain"].is_null());
  CHECK(j["grad_norm_cv"].is_null());
}
