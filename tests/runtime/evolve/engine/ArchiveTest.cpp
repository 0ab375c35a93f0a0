// The engine on the body-model interface: no robot is trained twice, the
// duplicate counts and fallbacks in the log, invalid phenotypes never reach
// the trainer, donors for crossover, and resume with the archive.
#include "TestSupport.h"

#include "evolve/bodies/LatticeModel.h"
#include "evolve/engine/CanonicalHash.h"
#include "evolve/engine/Evolution.h"
#include "evolve/record/RunDir.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

using namespace evoc::evolve;
using namespace evoc::evolve::test;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

// A tiny lattice (2 x 3 triangles) has few shapes: duplicates are common.
// Every spring actuated and never flipped: only the shape varies.
EvolutionConfig tinyConfig(int population, int generations) {
  EvolutionConfig c = smallConfig(population, generations, 13);
  LatticeSpec spec{2, 3};
  spec.sampleActuatorP = 1;
  LatticeMutation m = kReferenceLatticeMutation;
  m.actuatorRate = 0;
  c.body = std::make_shared<LatticeModel>(spec, m);
  return c;
}

// A lattice model that marks robots with 5 points invalid (never to be
// trained), reports every third variation as a fallback of "add", and
// checks that it gets the other population members as donors.
class ProbeModel : public LatticeModel {
public:
  ProbeModel(LatticeSpec spec, size_t population) : LatticeModel(spec), population_(population) {}
  Variation vary(const Genome &parent, const std::vector<const Genome *> &donors,
                 EvoRng &rng) const override {
    // The others of a population of at most P (it may start short).
    donorsOk_ = donorsOk_ && donors.size() < population_ &&
                std::find(donors.begin(), donors.end(), &parent) == donors.end();
    fullDonors_ += donors.size() + 1 == population_;
    Variation v = LatticeModel::vary(parent, donors, rng);
    if (++calls_ % 3 == 0) {
      v.fallback = true;
      v.fallbackOp = "add";
      v.genome = std::make_shared<LatticeGenomeBox>(genome(parent));
    }
    return v;
  }
  Phenotype express(const Genome &g) const override {
    Phenotype p = LatticeModel::express(g);
    if (p.robot.numPoints() == 5) {
      p.valid = false;
      p.reason = "five points are not allowed here";
    }
    return p;
  }
  mutable bool donorsOk_ = true;
  mutable int calls_ = 0, fullDonors_ = 0;
  size_t population_;
};

} // namespace

TEST_CASE("archive: no robot is trained twice; duplicates re-varied or reused", "[archive]") {
  auto dir = scratchDir("archive") / "run";
  std::set<std::string> trained;
  int trainedTwice = 0;
  size_t sent = 0;
  EvaluateFn fake = fakeEvaluate();
  EvaluateFn spy = [&](const EvalBatch &b) {
    for (const auto &r : b.robots)
      trainedTwice += !trained.insert(canonicalKey(r).hex()).second;
    sent += b.robots.size();
    return fake(b);
  };
  auto sum = runEvolution(tinyConfig(10, 8), spy, quiet(dir));
  CHECK(trainedTwice == 0);
  CHECK(sum.designsEvaluated == sent);
  auto log = RunDir::open(dir).readLog();
  REQUIRE(log.size() == 8);
  int avoided = 0, reused = 0, trainedLogged = 0;
  for (const auto &r : log) {
    avoided += r["duplicates_avoided"].get<int>();
    reused += r["duplicates_reused"].get<int>();
    trainedLogged += r["offspring_trained"].get<int>();
    CHECK(r["offspring_trained"].get<int>() + r["duplicates_reused"].get<int>() ==
          r["offspring"].get<int>());
    CHECK(r["ops"].contains(r["generation"] == 0 ? "sample" : "flip cell"));
    CHECK(r["fallbacks"].is_object());
  }
  CHECK(size_t(trainedLogged) == sent);
  INFO("a 2 x 3 lattice should make both kinds of duplicates");
  CHECK(avoided > 0);
  CHECK(reused > 0);
  // The archive holds every trained robot once; a reused child names the
  // design it reuses and carries that design's fitness.
  json state = readJson(dir / "state.json");
  CHECK(state["version"] == 2);
  CHECK(state["archive"].size() == sent);
  std::map<uint64_t, json> fitnessOf;
  for (const auto &e : state["archive"])
    fitnessOf[e[1].get<uint64_t>()] = e[2];
  int reusedSeen = 0;
  for (int g = 0; g < 8; ++g) {
    const json pop = readJson(dir / fmt::format("gen_{:04d}", g) / "population.json");
    for (const auto &k : pop["offspring"])
      if (k.contains("reused")) {
        ++reusedSeen;
        REQUIRE(fitnessOf.count(k["reused"].get<uint64_t>()));
        CHECK(k["fitness"] == fitnessOf[k["reused"].get<uint64_t>()]);
        CHECK(k["reused"].get<uint64_t>() < k["id"].get<uint64_t>());
      }
  }
  CHECK(reusedSeen == reused);
}

TEST_CASE("archive: invalid phenotypes are never trained; fallbacks are logged", "[archive]") {
  auto dir = scratchDir("probe") / "run";
  auto cfg = tinyConfig(8, 6);
  // No re-variation: a fallback (a copy of its parent) reuses the parent's
  // evaluation at once, so the fallbacks stay in the offspring.
  cfg.maxDuplicateRetries = 0;
  LatticeSpec spec{2, 3};
  spec.sampleActuatorP = 1;
  auto model = std::make_shared<ProbeModel>(spec, 8);
  cfg.body = model;
  int fivePointRobots = 0;
  EvaluateFn fake = fakeEvaluate();
  EvaluateFn spy = [&](const EvalBatch &b) {
    for (const auto &r : b.robots)
      fivePointRobots += r.numPoints() == 5;
    return fake(b);
  };
  runEvolution(cfg, spy, quiet(dir));
  CHECK(fivePointRobots == 0);
  CHECK(model->donorsOk_);
  CHECK(model->fullDonors_ > 0);
  auto log = RunDir::open(dir).readLog();
  int fallbacksLogged = 0, fallbacksSeen = 0, rejected = 0;
  for (const auto &r : log)
    if (r["fallbacks"].contains("add"))
      fallbacksLogged += r["fallbacks"]["add"].get<int>();
  for (int g = 0; g < 6; ++g) {
    const json pop = readJson(dir / fmt::format("gen_{:04d}", g) / "population.json");
    for (const auto &k : pop["offspring"]) {
      fallbacksSeen += k.value("fallback", std::string()) == "add";
      if (k.value("reason", std::string()) == "five points are not allowed here") {
        ++rejected;
        CHECK_FALSE(k["valid"].get<bool>());
      }
    }
  }
  CHECK(fallbacksLogged > 0);
  CHECK(fallbacksLogged == fallbacksSeen);
  INFO("a 2 x 3 lattice has robots of five points");
  CHECK(rejected > 0);
}

TEST_CASE("archive: a duplicate-heavy run resumes to the same archive", "[archive][resume]") {
  auto root = scratchDir("archiveresume");
  runEvolution(tinyConfig(10, 6), fakeEvaluate(), quiet(root / "whole"));
  runEvolution(tinyConfig(10, 3), fakeEvaluate(), quiet(root / "split"));
  runEvolution(tinyConfig(10, 6), fakeEvaluate(), quiet(root / "split", true));
  CHECK(logWithoutTiming(root / "whole") == logWithoutTiming(root / "split"));
  json a = readJson(root / "whole" / "state.json"), b = readJson(root / "split" / "state.json");
  CHECK(a["archive"] == b["archive"]);
  CHECK(a["archive"].size() == a["designs_evaluated"].get<size_t>());
  a.erase("elapsed_seconds");
  b.erase("elapsed_seconds");
  CHECK(a == b);
}
