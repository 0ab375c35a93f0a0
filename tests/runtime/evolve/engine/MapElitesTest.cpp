// MAP-Elites (docs/evolution.md, "MAP-Elites") with the fake trainer: cells
// and clipping, the archive's invariants over a run (an elite is replaced
// only by a better design in its cell; coverage and QD-score never fall),
// elites.json, parents drawn from the archive, and a stop-and-resume. The
// kill-at-every-write test is in RunDirFaultTest.cpp.
#include "TestSupport.h"

#include "evolve/engine/MapElites.h"
#include "evolve/record/RunDir.h"
#include "support/Error.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <map>
#include <set>

using namespace evoc::evolve;
using namespace evoc::evolve::test;
using json = nlohmann::json;
namespace fs = std::filesystem;

TEST_CASE("map-elites: bins clip out-of-range values to the edge cells", "[map_elites]") {
  Descriptor d{Descriptor::Kind::Width, "", 0.5, 1.5, 4};
  CHECK(descriptorBin(d, 0.5) == 0);
  CHECK(descriptorBin(d, 0.74) == 0);
  CHECK(descriptorBin(d, 0.75) == 1);
  CHECK(descriptorBin(d, 1.49) == 3);
  CHECK(descriptorBin(d, 1.5) == 3); // hi itself is in the last cell
  CHECK(descriptorBin(d, -100) == 0);
  CHECK(descriptorBin(d, 1e300) == 3);
  CHECK(descriptorBin(d, std::numeric_limits<double>::infinity()) == 3);
  CHECK(descriptorBin(d, -std::numeric_limits<double>::infinity()) == 0);
  CHECK(descriptorBin(d, std::nan("")) == 0);
  std::vector<Descriptor> axes = {{Descriptor::Kind::Actuators, "", 0, 10, 5}, d};
  CHECK(cellCount(axes) == 20);
  CHECK(cellIndex(axes, {3, 1.0}) == 1 * 4 + 2); // row-major, the first axis slowest
  CHECK(cellIndex(axes, {99, 99}) == 19);
  CHECK(cellIndex(axes, {-1, -1}) == 0);
}

TEST_CASE("map-elites: descriptors of a robot and of its training", "[map_elites]") {
  evoc::runtime::Robot r;
  r.points = {0, 0, 0.3, 0, 0.1, 0.2};
  r.springs = {{0, 1, 0.3, 1, 0.1}, {1, 2, 0.3, 1, 0}, {0, 2, 0.2, 1, 0.2}};
  std::vector<double> losses = {1.0, 0.5, 0.7, 0.2, 0.4};
  std::vector<double> grads;
  std::vector<std::pair<std::string, std::vector<double>>> terms = {
      {"forward", {1, 2, 3, 4, 5}}, {"height", {0.1, 0.2, 0.3, 0.4, 0.5}}};
  Described x{&r, &losses, &grads, &terms};
  auto value = [&](Descriptor::Kind k, std::string term = "") {
    return descriptorValue(Descriptor{k, std::move(term), 0, 1, 2}, x);
  };
  CHECK(value(Descriptor::Kind::Actuators) == 2);
  CHECK(value(Descriptor::Kind::Width) == Approx(0.3));
  CHECK(value(Descriptor::Kind::Height) == Approx(0.2));
  CHECK(std::isnan(value(Descriptor::Kind::Depth)));     // a 2D robot
  CHECK(value(Descriptor::Kind::Term, "height") == 0.4); // at the lowest loss (index 3)
  CHECK(std::isnan(value(Descriptor::Kind::Term, "speed")));
  CHECK(value(Descriptor::Kind::LearningGain) == Approx(0.8));
  CHECK(value(Descriptor::Kind::Monotonicity) == Approx(0.5));
}

TEST_CASE("map-elites: an elite is replaced only by a better design in its cell", "[map_elites]") {
  // Members first (their cells), then candidates in order.
  std::vector<Scored> pool = {{1, 0.5}, {2, 0.9}, {5, 0.7}, {6, 0.5}, {7, 0.2}, {8, 0.95}};
  std::vector<int64_t> cells = {0, 1, 0, 1, 2, -1};
  auto keep = eliteSurvivors(pool, cells);
  // Cell 0: 0.7 beats 0.5; cell 1: 0.5 does not beat 0.9; cell 2 was empty;
  // a non-candidate (-1) never enters. Rank order.
  REQUIRE(keep.size() == 3);
  CHECK(keep == std::vector<size_t>{1, 2, 4});
  // An equal fitness keeps the older (lower id) elite.
  auto tie = eliteSurvivors({{3, 0.5}, {9, 0.5}}, {4, 4});
  CHECK(tie == std::vector<size_t>{0});
}

TEST_CASE("map-elites: a run's archive only improves", "[map_elites]") {
  auto dir = scratchDir("map-elites") / "run";
  auto config = mapElitesConfig(8, 8, 3);
  config.offspring = 6;
  auto summary = runEvolution(config, fakeEvaluate(), quiet(dir));
  CHECK(summary.lastGeneration == 7);
  auto log = RunDir::open(dir).readLog();
  REQUIRE(log.size() == 8);
  const auto &axes = config.selection.descriptors;
  std::map<int64_t, std::pair<uint64_t, double>> prev; // cell -> (id, fitness)
  double prevCoverage = 0, prevQd = 0;
  for (int g = 0; g < 8; ++g) {
    INFO("generation " << g);
    json pop = readJson(dir / fmt::format("gen_{:04d}", g) / "population.json");
    std::map<int64_t, std::pair<uint64_t, double>> now;
    double qd = 0;
    for (const auto &m : pop["population"]) {
      REQUIRE(m["descriptors"].size() == 2);
      auto cell = cellIndex(axes, m["descriptors"].get<std::vector<double>>());
      CHECK(now.emplace(cell, std::make_pair(m["id"].get<uint64_t>(), m["fitness"].get<double>()))
                .second); // one elite per cell
      qd += std::max(0.0, m["fitness"].get<double>());
    }
    // Every cell filled before stays filled, by the same elite or a better one.
    for (const auto &[cell, elite] : prev) {
      REQUIRE(now.count(cell));
      if (now[cell].first != elite.first)
        CHECK(now[cell].second > elite.second);
    }
    // A new elite in an old cell is a child of this generation.
    const auto &r = log[size_t(g)];
    CHECK(r["cells_filled"] == now.size());
    CHECK(r["coverage"].get<double>() == Approx(double(now.size()) / 24));
    CHECK(r["qd_score"].get<double>() == Approx(qd));
    CHECK(r["coverage"].get<double>() >= prevCoverage);
    CHECK(r["qd_score"].get<double>() >= prevQd);
    prevCoverage = r["coverage"].get<double>();
    prevQd = r["qd_score"].get<double>();
    // Parents come from the archive of the generation before.
    if (g > 0)
      for (const auto &k : pop["offspring"]) {
        uint64_t parent = k["parent"].get<uint64_t>();
        bool found = false;
        for (const auto &[cell, elite] : prev)
          found |= elite.first == parent;
        CHECK(found);
      }
    prev = now;
  }
  CHECK(prevCoverage > 2.0 / 24);
  // elites.json: the last generation's archive, readable as JSON.
  json map = readJson(dir / "elites.json");
  CHECK(map["format"] == "evoc-map-elites");
  CHECK(map["generation"] == 7);
  CHECK(map["axes"].size() == 2);
  CHECK(map["axes"][0]["descriptor"] == "actuators");
  CHECK(map["cells"] == 24);
  CHECK(map["elites"].size() == prev.size());
  CHECK(map["qd_score"] == log.back()["qd_score"]);
  for (const auto &e : map["elites"]) {
    auto cell = e["index"].get<int64_t>();
    REQUIRE(prev.count(cell));
    CHECK(prev[cell].first == e["id"].get<uint64_t>());
    CHECK(e["cell"][0].get<int64_t>() * 4 + e["cell"][1].get<int64_t>() == cell);
  }
  // The best so far is an elite (it can only be replaced by a better one).
  CHECK(log.back()["best_fitness"] == log.back()["fitness_max"]);
}

TEST_CASE("map-elites: out-of-range descriptors fill the edge cells", "[map_elites]") {
  // Every 6 x 10 lattice body is wider than 0.01: all in the last width bin.
  auto dir = scratchDir("map-elites-clip") / "run";
  runEvolution(mapElitesConfig(8, 3, 5, 0.01), fakeEvaluate(), quiet(dir));
  json map = readJson(dir / "elites.json");
  REQUIRE(!map["elites"].empty());
  for (const auto &e : map["elites"]) {
    CHECK(e["descriptors"][1].get<double>() > 0.01);
    CHECK(e["cell"][1] == 3);
  }
  CHECK(map["elites"].size() <= 6); // one row of the grid
}

TEST_CASE("map-elites: 2 generations + 2 more equals 4 in one go", "[map_elites][resume]") {
  auto root = scratchDir("map-elites-resume");
  runEvolution(mapElitesConfig(6, 4), fakeEvaluate(), quiet(root / "whole"));
  runEvolution(mapElitesConfig(6, 2), fakeEvaluate(), quiet(root / "split"));
  runEvolution(mapElitesConfig(6, 4), fakeEvaluate(), quiet(root / "split", true));
  for (const char *f : {"elites.json", "best.json", "gen_0003/population.json"})
    CHECK(readTextFile(root / "whole" / f) == readTextFile(root / "split" / f));
  CHECK(logWithoutTiming(root / "whole") == logWithoutTiming(root / "split"));
  // Another grid is another experiment.
  auto other = mapElitesConfig(6, 5);
  other.selection.descriptors[1].bins = 5;
  CHECK_THROWS_WITH(runEvolution(other, fakeEvaluate(), quiet(root / "split", true)),
                    Catch::Contains("selection.descriptors"));
}
