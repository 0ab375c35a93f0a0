// What a run tells its user, with the fake trainer: the progress line counts
// generations 1/G .. G/G; designs the trainer did not train are recorded and
// counted; the loss's named terms are kept per design, through a resume; a
// grammar mutation rate outside [0, 1] is reported once on stderr and in
// every log line it occurs (issue 29).
#include "GrammarFixtures.h"
#include "TestSupport.h"

#include "evolve/bodies/GrammarBody.h"
#include "evolve/engine/Evolution.h"
#include "evolve/record/Progress.h"
#include "evolve/record/RunDir.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <string>

using namespace evoc::evolve;
using namespace evoc::evolve::test;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

/// Runs with progress into a temporary file (plain lines) and returns it.
std::string runWithProgress(const EvolutionConfig &cfg, const EvaluateFn &fn, RunOptions opt) {
  std::FILE *f = std::tmpfile();
  opt.progress = f;
  opt.forceTty = 0;
  runEvolution(cfg, fn, opt);
  std::rewind(f);
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;)
    out.append(buf, n);
  std::fclose(f);
  return out;
}

size_t count(const std::string &s, const std::string &what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1))
    ++n;
  return n;
}

/// The fake trainer, but bodies with an even number of springs were "not
/// trained" (one loss), and every curve has two named terms summing to it.
EvaluateFn termsAndSkips() {
  EvaluateFn base = fakeEvaluate();
  return [base](const EvalBatch &batch) {
    std::vector<Evaluation> evals = base(batch);
    for (size_t i = 0; i < evals.size(); ++i) {
      Evaluation &e = evals[i];
      if (batch.robots[i].numSprings() % 2 == 0) {
        e.losses.resize(1);
        e.gradNorms.resize(1);
        e.notTrained = "nothing to learn";
      }
      std::vector<double> a, b;
      for (double l : e.losses) {
        a.push_back(0.25 * l);
        b.push_back(0.75 * l);
      }
      e.terms = {{"a", a}, {"b", b}};
    }
    return evals;
  };
}

} // namespace

TEST_CASE("progress: a run of G generations counts 1/G .. G/G and names each folder",
          "[progress]") {
  auto dir = scratchDir("progress-count") / "run";
  std::string out = runWithProgress(smallConfig(4, 3), fakeEvaluate(), quiet(dir));
  CHECK(out.find("generation 1/3 (gen_0000)") != std::string::npos);
  CHECK(out.find("generation 2/3 (gen_0001)") != std::string::npos);
  CHECK(out.find("generation 3/3 (gen_0002)") != std::string::npos);
  CHECK(out.find("generation 0/") == std::string::npos);
  CHECK(out.find("not trained") == std::string::npos); // nothing skipped: nothing said
  // A resumed run goes on counting where it stopped.
  EvolutionConfig more = smallConfig(4, 5);
  std::string resumed = runWithProgress(more, fakeEvaluate(), quiet(dir, true));
  CHECK(resumed.find("generation 4/5 (gen_0003)") != std::string::npos);
  CHECK(resumed.find("generation 5/5 (gen_0004)") != std::string::npos);
}

TEST_CASE("evolution: designs not trained are recorded and counted; terms are kept per design",
          "[evolution][terms]") {
  auto dir = scratchDir("not-trained") / "run";
  std::string out = runWithProgress(smallConfig(6, 3), termsAndSkips(), quiet(dir));
  auto log = RunDir::open(dir).readLog();
  REQUIRE(log.size() == 3);
  int skipped = 0;
  for (int g = 0; g < 3; ++g) {
    json pop = readJson(dir / fmt::format("gen_{:04d}", g) / "population.json");
    int n = 0;
    for (const auto &c : pop["offspring"])
      if (c.contains("not_trained")) {
        CHECK(c["not_trained"] == "nothing to learn");
        ++n;
      }
    CHECK(log[size_t(g)]["offspring_not_trained"] == n);
    skipped += n;
    if (n > 0)
      CHECK(out.find(fmt::format("generation {}/3 (gen_{:04d})", g + 1, g)) != std::string::npos);
    // Every member's terms are curves as long as its losses.
    for (const auto &m : pop["population"]) {
      REQUIRE(m.contains("terms"));
      CHECK(m["terms"]["a"].size() == m["losses"].size());
      CHECK(m["terms"]["b"][0].get<double>() == 3 * m["terms"]["a"][0].get<double>());
    }
  }
  CHECK(skipped > 0);
  CHECK(out.find("not trained (nothing to learn)") != std::string::npos);
  json best = readJson(dir / "best.json");
  CHECK(best["terms"]["a"].size() == best["losses"].size());

  // Terms travel through state.json: 2 generations + 1 more equal 3 at once.
  auto split = scratchDir("not-trained-split") / "run";
  runEvolution(smallConfig(6, 2), termsAndSkips(), quiet(split));
  runEvolution(smallConfig(6, 3), termsAndSkips(), quiet(split, true));
  CHECK(logWithoutTiming(split) == logWithoutTiming(dir));
  CHECK(readJson(split / "gen_0002" / "population.json") ==
        readJson(dir / "gen_0002" / "population.json"));
  CHECK(readJson(split / "best.json") == best);
}

TEST_CASE("grammar rates outside [0, 1] are clamped, reported and logged", "[grammar][rates]") {
  using evoc::body::Scalar;
  evoc::body::GrammarMutationSpec m = evoc::test::mixedMutation();
  // add p = 30 / parts: above 1 for any parent the fixture grows (at most
  // 16 parts).
  m.add.code = {{Scalar::Op::Const, 30, -1},
                {Scalar::Op::Param, 0, evoc::body::kParts},
                {Scalar::Op::Div, 0, -1}};
  // remove p = -0.5: never a probability.
  m.remove = Scalar::constant(-0.5);
  auto model = std::make_shared<GrammarBody>(evoc::test::walkerGrammar(), m);

  EvoRng rng(3);
  GenomePtr parent = model->sample(rng);
  Variation v = model->vary(*parent, {}, rng);
  REQUIRE(v.clampedRates.count("add"));
  CHECK(v.clampedRates.at("add") > 1);
  CHECK(v.clampedRates.at("remove") == -0.5);
  CHECK(!v.clampedRates.count("swap")); // 0.1: a probability

  EvolutionConfig cfg = smallConfig(6, 4);
  cfg.body = model;
  auto dir = scratchDir("rates") / "run";
  std::string out = runWithProgress(cfg, fakeEvaluate(), quiet(dir));
  // Once per operator on stderr, whatever the number of generations.
  CHECK(count(out, "warning: the mutation rate of 'add' came to") == 1);
  CHECK(count(out, "warning: the mutation rate of 'remove' came to -0.5") == 1);
  CHECK(out.find("clamped to 0") != std::string::npos);
  auto log = RunDir::open(dir).readLog();
  REQUIRE(log.size() == 4);
  CHECK(!log[0].contains("rates_clamped")); // generation 0 samples, it does not vary
  for (size_t g = 1; g < log.size(); ++g) {
    REQUIRE(log[g].contains("rates_clamped"));
    CHECK(log[g]["rates_clamped"]["remove"] == -0.5);
  }
}
