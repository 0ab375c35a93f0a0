// The engine end to end with a fake trainer: run files, improvement, invalid
// robots, selection variants and the progress line.
#include "TestSupport.h"

#include "evolve/engine/Evolution.h"
#include "evolve/record/Progress.h"
#include "evolve/record/RunDir.h"
#include "support/Error.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <set>

using namespace evoc::evolve;
using namespace evoc::evolve::test;
using json = nlohmann::json;
namespace fs = std::filesystem;

TEST_CASE("evolution: a small run writes a complete run directory", "[evolution]") {
  auto dir = scratchDir("complete") / "run";
  RunOptions opt;
  opt.dir = dir;
  opt.resolvedSource = "// the experiment\n";
  opt.progress = nullptr;
  auto summary = runEvolution(smallConfig(8, 6), fakeEvaluate(), opt);
  CHECK(summary.lastGeneration == 5);
  CHECK(summary.designsEvaluated >= 48);

  CHECK(readTextFile(dir / "resolved.evo") == "// the experiment\n");
  CHECK(RunDir::isRun(dir));
  for (const char *f : {"log.jsonl", "best.json", "state.json", "fitness.svg", "best.svg"})
    CHECK(fs::is_regular_file(dir / f));
  auto log = RunDir::open(dir).readLog();
  REQUIRE(log.size() == 6);
  double prevBest = -INFINITY;
  for (size_t g = 0; g < log.size(); ++g) {
    const auto &r = log[g];
    CHECK(r["generation"] == g);
    for (const char *k : {"fitness_min", "fitness_median", "fitness_max", "best_id",
                          "designs_evaluated", "seconds", "robot_steps_per_second"})
      CHECK(r.contains(k));
    CHECK(r["fitness_min"].get<double>() <= r["fitness_median"].get<double>());
    CHECK(r["fitness_median"].get<double>() <= r["fitness_max"].get<double>());
    // mu + lambda is elitist: the population's best is the best so far.
    CHECK(r["fitness_max"] == r["best_fitness"]);
    CHECK(r["best_fitness"].get<double>() >= prevBest);
    prevBest = r["best_fitness"].get<double>();
    CHECK(fs::is_regular_file(dir / fmt::format("gen_{:04d}", g) / "population.json"));
    CHECK(fs::is_regular_file(dir / fmt::format("gen_{:04d}", g) / "best.svg"));
  }
  // The fake fitness (actuated springs / 100) improves under selection.
  CHECK(log.back()["best_fitness"].get<double>() > log.front()["best_fitness"].get<double>());

  // best.json: a robot in ROBOTS.json format, plus fitness and params.
  json best = readJson(dir / "best.json");
  CHECK(best["fitness"] == log.back()["best_fitness"]);
  CHECK(best["id"] == log.back()["best_id"]);
  CHECK(best["points"][0].size() == 2);
  CHECK(best["springs"][0].size() == 5);
  CHECK(best["params"]["w"][1] == best["springs"].size());
  int act = 0;
  for (const auto &s : best["springs"])
    act += s[4].get<double>() != 0;
  CHECK(best["fitness"].get<double>() == Approx(act / 100.0 * (1 - std::pow(0.5, 5))));

  // population.json: genotypes, phenotypes, fitness, the best's params.
  json pop = readJson(dir / "gen_0005" / "population.json");
  CHECK(pop["generation"] == 5);
  CHECK(pop["population"].size() == 8);
  CHECK(pop["offspring"].size() == 8);
  CHECK(pop["population"][0].contains("genome"));
  CHECK(pop["population"][0].contains("robot"));
  CHECK(pop["population"][0]["grad_norms"].size() == 5);
  CHECK(pop["population"][0]["metrics"]["learning_gain"].get<double>() >= 0);
  CHECK(log.back()["monotonicity_median"] == 1.0); // the fake curves always fall
  CHECK(pop["best"]["params"] == best["params"]);
}

TEST_CASE("evolution: invalid robots never enter the population", "[evolution]") {
  auto dir = scratchDir("invalid") / "run";
  RunOptions opt;
  opt.dir = dir;
  opt.progress = nullptr;
  runEvolution(smallConfig(12, 5, 3), fakeEvaluate(), opt);
  int invalidSeen = 0;
  for (int g = 0; g < 5; ++g) {
    json pop = readJson(dir / fmt::format("gen_{:04d}", g) / "population.json");
    for (const auto &p : pop["population"])
      CHECK(p["robot"]["points"].size() % 7 != 0);
    for (const auto &k : pop["offspring"])
      if (!k["valid"].get<bool>()) {
        ++invalidSeen;
        CHECK(k["fitness"].is_null());
        CHECK(k["reason"].get<std::string>().find("not finite") != std::string::npos);
      }
  }
  INFO("the fake trainer should have produced some invalid robots");
  CHECK(invalidSeen > 0);
}

TEST_CASE("evolution: an all-invalid start is an error, not a crash", "[evolution]") {
  auto dir = scratchDir("allinvalid") / "run";
  RunOptions opt;
  opt.dir = dir;
  opt.progress = nullptr;
  auto cfg = smallConfig(4, 3);
  cfg.maxInitialAttempts = 3;
  EvaluateFn bad = [](const EvalBatch &b) {
    std::vector<Evaluation> out(b.robots.size());
    for (auto &e : out)
      e.losses = {std::nan("")};
    return out;
  };
  CHECK_THROWS_WITH(runEvolution(cfg, bad, opt), Catch::Contains("invalid"));
  EvaluateFn wrongCount = [](const EvalBatch &) { return std::vector<Evaluation>(1); };
  auto dir2 = scratchDir("wrongcount") / "run";
  opt.dir = dir2;
  CHECK_THROWS_WITH(runEvolution(cfg, wrongCount, opt), Catch::Contains("returned 1 results"));
}

TEST_CASE("evolution: a short population refills, trainer rejections count", "[evolution]") {
  auto dir = scratchDir("refill") / "run";
  RunOptions opt;
  opt.dir = dir;
  opt.progress = nullptr;
  EvaluateFn fake = fakeEvaluate();
  // Generation 0: only designs 2 and 5 are valid; later, the trainer itself
  // rejects every design whose id is a multiple of 5.
  EvaluateFn picky = [&](const EvalBatch &b) {
    auto evals = fake(b);
    for (size_t i = 0; i < evals.size(); ++i) {
      evals[i].losses = {-0.01 * double(b.ids[i] % 7 + 1)};
      if (b.generation == 0 ? (b.ids[i] != 2 && b.ids[i] != 5) : b.ids[i] % 5 == 0) {
        evals[i].valid = false;
        evals[i].reason = "diverged in the trainer";
      }
    }
    return evals;
  };
  runEvolution(smallConfig(8, 3), picky, opt);
  auto log = RunDir::open(dir).readLog();
  REQUIRE(log.size() == 3);
  CHECK(log[0]["population"] == 2);
  CHECK(log[0]["offspring_valid"] == 2);
  CHECK(log[1]["population"] == 8); // 2 parents + 8 children, minus rejections
  json g1 = readJson(dir / "gen_0001" / "population.json");
  std::vector<int64_t> parents;
  for (const auto &k : g1["offspring"]) {
    parents.push_back(k["parent"].get<int64_t>());
    bool rejected = k["id"].get<uint64_t>() % 5 == 0;
    CHECK(k["valid"].get<bool>() == !rejected);
    if (rejected)
      CHECK(k["reason"] == "diverged in the trainer");
  }
  // Parents in rank order (5 has the better fitness), taking turns.
  CHECK(parents == std::vector<int64_t>{5, 2, 5, 2, 5, 2, 5, 2});
}

TEST_CASE("evolution: the evaluate batch carries ids, seeds and lattice robots", "[evolution]") {
  auto dir = scratchDir("batch") / "run";
  RunOptions opt;
  opt.dir = dir;
  opt.progress = nullptr;
  std::vector<uint64_t> ids;
  EvaluateFn fake = fakeEvaluate();
  EvaluateFn spy = [&](const EvalBatch &b) {
    CHECK(b.ids.size() == b.robots.size());
    CHECK(b.seeds.size() == b.robots.size());
    for (size_t i = 0; i < b.ids.size(); ++i) {
      CHECK(b.seeds[i] == designSeed(7, b.ids[i]));
      ids.push_back(b.ids[i]);
    }
    return fake(b);
  };
  auto sum = runEvolution(smallConfig(5, 3), spy, opt);
  // Children get ids 0..14 in order; those the archive served (duplicates)
  // never reach the trainer.
  CHECK(ids.size() == sum.designsEvaluated);
  std::set<uint64_t> missing;
  for (uint64_t id = 0; id < 15; ++id)
    missing.insert(id);
  for (size_t i = 0; i < ids.size(); ++i) {
    CHECK(missing.erase(ids[i]) == 1);
    if (i > 0)
      CHECK(ids[i] > ids[i - 1]);
  }
  for (int g = 0; g < 3; ++g) {
    const json pop = readJson(dir / fmt::format("gen_{:04d}", g) / "population.json");
    for (const auto &k : pop["offspring"])
      if (k.contains("reused"))
        CHECK(missing.erase(k["id"].get<uint64_t>()) == 1);
  }
  CHECK(missing.empty());
}

TEST_CASE("evolution: tournament selection and lazy params", "[evolution]") {
  auto cfg = smallConfig(10, 5, 11);
  cfg.selection.kind = SelectionSpec::Kind::Tournament;
  cfg.selection.tournamentSize = 3;
  int paramsCalls = 0;
  EvaluateFn fake = fakeEvaluate();
  EvaluateFn lazy = [&](const EvalBatch &b) {
    auto evals = fake(b);
    for (auto &e : evals) {
      json p = e.params;
      e.params = nullptr;
      e.paramsFn = [p, &paramsCalls] {
        ++paramsCalls;
        return p;
      };
    }
    return evals;
  };
  std::vector<std::vector<std::string>> logs;
  for (int rep = 0; rep < 2; ++rep) {
    RunOptions opt;
    opt.dir = scratchDir(fmt::format("tournament{}", rep)) / "run";
    opt.progress = nullptr;
    runEvolution(cfg, lazy, opt);
    logs.push_back(logWithoutTiming(opt.dir));
    CHECK(readJson(opt.dir / "best.json")["params"].contains("w"));
  }
  CHECK(logs[0] == logs[1]);
  CHECK(paramsCalls <= 10); // at most once per generation per run
}

TEST_CASE("progress: plain lines off a terminal, \\r on one", "[progress]") {
  ProgressInfo info{3, 10, 0.25, 12.5, 75};
  CHECK(Progress::line(info) ==
        "generation 4/10 (gen_0003)  best fitness 0.25  12.5 designs/s  1m15s left");
  info.notTrained = 2;
  CHECK(Progress::line(info) == "generation 4/10 (gen_0003)  best fitness 0.25  12.5 designs/s  "
                                "2 not trained (nothing to learn)  1m15s left");
  info.notTrained = 0;
  CHECK(formatDuration(3725) == "1h02m");
  CHECK(formatDuration(9) == "9s");
  for (int tty = 0; tty <= 1; ++tty) {
    std::FILE *f = std::tmpfile();
    {
      Progress p(f, tty);
      p.update(info);
      info.generation = 4;
      p.update(info);
    }
    std::rewind(f);
    char buf[512] = {};
    size_t n = std::fread(buf, 1, sizeof buf - 1, f);
    std::fclose(f);
    std::string out(buf, n);
    if (tty) {
      CHECK(out.find('\r') != std::string::npos);
      CHECK(std::count(out.begin(), out.end(), '\n') == 1);
    } else {
      CHECK(out.find('\r') == std::string::npos);
      CHECK(std::count(out.begin(), out.end(), '\n') == 2);
    }
  }
}

// Engine overhead at the paper's scale (13 x 22, P = 1000) with a free
// trainer: run by hand with `evoc_evolve_tests "[.bench]"`.
TEST_CASE("evolution: engine overhead at the paper's scale", "[.bench]") {
  auto cfg = smallConfig(1000, 3);
  cfg.body = std::make_shared<LatticeModel>(LatticeSpec{13, 22});
  RunOptions opt;
  opt.dir = scratchDir("bench") / "run";
  opt.progress = stderr;
  opt.forceTty = 0;
  auto s = runEvolution(cfg, fakeEvaluate(), opt);
  WARN(fmt::format("{} designs in {:.2f} s: {:.0f} designs/s of engine overhead",
                   s.designsEvaluated, s.seconds, s.designsEvaluated / s.seconds));
  for (const char *f : {"state.json", "gen_0002/population.json", "best.json"})
    WARN(fmt::format("{}: {} KB", f, fs::file_size(opt.dir / f) / 1024));
}
