// Resume: an interrupted run (stopped, or killed with SIGKILL mid-generation;
// lattice and grammar bodies) continues to exactly the results of an
// uninterrupted one; directories that are not resumable runs are refused and
// left untouched.
#include "GrammarFixtures.h"
#include "TestSupport.h"

#include "evolve/bodies/GrammarBody.h"
#include "evolve/engine/Evolution.h"
#include "evolve/record/RunDir.h"
#include "support/Error.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <functional>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace evoc::evolve;
using namespace evoc::evolve::test;
using json = nlohmann::json;
namespace fs = std::filesystem;

// state.json without its timing field.
static json stateOf(const fs::path &dir) {
  json s = json::parse(readTextFile(dir / "state.json"));
  s.erase("elapsed_seconds");
  return s;
}

static void checkSameRun(const fs::path &a, const fs::path &b, int generations) {
  auto la = logWithoutTiming(a), lb = logWithoutTiming(b);
  REQUIRE(int(la.size()) == generations);
  CHECK(la == lb);
  CHECK(stateOf(a) == stateOf(b));
  // The archive is part of the state: every trained robot, once.
  CHECK(stateOf(a)["archive"].size() == stateOf(a)["designs_evaluated"].get<size_t>());
  CHECK(stateOf(a)["archive"] == stateOf(b)["archive"]);
  CHECK(readTextFile(a / "best.json") == readTextFile(b / "best.json"));
  for (int g = 0; g < generations; ++g) {
    auto p = fmt::format("gen_{:04d}/population.json", g);
    CHECK(readTextFile(a / p) == readTextFile(b / p));
  }
}

TEST_CASE("resume: 2 generations + 2 more equals 4 in one go", "[resume]") {
  auto root = scratchDir("resume");
  runEvolution(smallConfig(8, 4), fakeEvaluate(), quiet(root / "whole"));
  auto s = runEvolution(smallConfig(8, 2), fakeEvaluate(), quiet(root / "split"));
  CHECK(s.lastGeneration == 1);
  s = runEvolution(smallConfig(8, 4), fakeEvaluate(), quiet(root / "split", true));
  CHECK(s.lastGeneration == 3);
  checkSameRun(root / "whole", root / "split", 4);
  // Resuming a finished run does nothing and changes nothing.
  runEvolution(smallConfig(8, 4), fakeEvaluate(), quiet(root / "split", true));
  checkSameRun(root / "whole", root / "split", 4);
}

// Runs `config` whole, then killed with SIGKILL at several points and
// resumed, and checks every resumed directory equals the whole run.
static void checkKilledRunsResume(const fs::path &root,
                                  const std::function<EvolutionConfig()> &config) {
  const int gens = config().generations;
  runEvolution(config(), fakeEvaluate(), quiet(root / "whole"));
  // (log lines to wait for, trainer delay): killed during generation 0's
  // training, during a later generation's training, and (no delay) most
  // likely in the middle of writing files.
  const std::pair<int, int> cases[] = {{0, 60}, {3, 60}, {2, 0}};
  for (auto [killAfterLines, sleepMs] : cases) {
    fs::path dir = root / fmt::format("killed{}-{}", killAfterLines, sleepMs);
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) { // child: a run killed before it can finish
      try {
        runEvolution(config(), fakeEvaluate(sleepMs), quiet(dir));
      } catch (...) {
        ::_exit(2);
      }
      ::_exit(0);
    }
    // Wait until the log holds `killAfterLines` lines, then kill.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      if (RunDir::isRun(dir) && int(RunDir::open(dir).readLog().size()) >= killAfterLines)
        break;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (sleepMs > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    // Without a trainer delay the child may have finished first; resume
    // must then change nothing.
    if (sleepMs > 0)
      REQUIRE(WIFSIGNALED(status));
    else
      REQUIRE((WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 0)));
    REQUIRE(RunDir::isRun(dir));
    int done = int(RunDir::open(dir).readLog().size());
    INFO("generations completed before the kill: " << done);
    if (sleepMs > 0)
      CHECK(done < gens);
    runEvolution(config(), fakeEvaluate(), quiet(dir, true));
    checkSameRun(root / "whole", dir, gens);
    // Temporaries of writes the kill interrupted are gone after the resume.
    for (const auto &e : fs::recursive_directory_iterator(dir))
      CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);
  }
}

TEST_CASE("resume: after SIGKILL mid-generation", "[resume]") {
  checkKilledRunsResume(scratchDir("kill"), [] { return smallConfig(6, 10, 21); });
}

TEST_CASE("resume: grammar bodies after SIGKILL mid-generation", "[resume][grammar]") {
  // The walker fixture (tied mirrored legs, evolvable lengths, foot angles)
  // under every operator: genomes, ids and the RNG must all round-trip
  // through state.json for the resumed run to breed the same children.
  auto config = [] {
    EvolutionConfig c = smallConfig(6, 10, 23);
    c.body =
        std::make_shared<GrammarBody>(evoc::test::walkerGrammar(), evoc::test::mixedMutation());
    return c;
  };
  auto root = scratchDir("kill-grammar");
  checkKilledRunsResume(root, config);
  // The run bred grammar bodies with more than one structure: not a run
  // stuck on copies of one robot, which would resume trivially.
  auto state = json::parse(readTextFile(root / "whole" / "state.json"));
  CHECK(state["config"]["body"].contains("grammar"));
  CHECK(state["archive"].size() > 20);
}

TEST_CASE("resume: directories that are not runs are refused", "[resume]") {
  auto root = scratchDir("refuse");
  // A non-empty directory that is not a run: never touched.
  fs::create_directories(root / "mine");
  writeFileAtomic(root / "mine" / "notes.txt", "precious");
  CHECK_THROWS_WITH(runEvolution(smallConfig(4, 2), fakeEvaluate(), quiet(root / "mine")),
                    Catch::Contains("not empty"));
  CHECK_THROWS_WITH(runEvolution(smallConfig(4, 2), fakeEvaluate(), quiet(root / "mine", true)),
                    Catch::Contains("not an evoc run"));
  CHECK(readTextFile(root / "mine" / "notes.txt") == "precious");
  CHECK(std::distance(fs::directory_iterator(root / "mine"), fs::directory_iterator()) == 1);
  CHECK_THROWS_WITH(runEvolution(smallConfig(4, 2), fakeEvaluate(), quiet(root / "none", true)),
                    Catch::Contains("no such directory"));
  // A file where the directory should be.
  writeFileAtomic(root / "afile", "x");
  CHECK_THROWS_WITH(runEvolution(smallConfig(4, 2), fakeEvaluate(), quiet(root / "afile")),
                    Catch::Contains("not a directory"));

  // An existing run: a new run there is refused, a resume is not.
  runEvolution(smallConfig(4, 2), fakeEvaluate(), quiet(root / "run"));
  std::string before = readTextFile(root / "run" / "state.json");
  CHECK_THROWS_WITH(runEvolution(smallConfig(4, 2), fakeEvaluate(), quiet(root / "run")),
                    Catch::Contains("--resume"));
  // Resuming with different settings is refused with the setting named.
  CHECK_THROWS_WITH(runEvolution(smallConfig(5, 3), fakeEvaluate(), quiet(root / "run", true)),
                    Catch::Contains("population was 4, now 5"));
  auto other = smallConfig(4, 3);
  other.body = std::make_shared<LatticeModel>(LatticeSpec{6, 12});
  CHECK_THROWS_WITH(runEvolution(other, fakeEvaluate(), quiet(root / "run", true)),
                    Catch::Contains("body.cols"));
  CHECK(readTextFile(root / "run" / "state.json") == before);
  // A damaged or foreign state is refused with a sentence, not a crash.
  auto state = json::parse(before);
  state["version"] = 99;
  writeFileAtomic(root / "run" / "state.json", state.dump());
  CHECK_THROWS_WITH(runEvolution(smallConfig(4, 3), fakeEvaluate(), quiet(root / "run", true)),
                    Catch::Contains("not an evoc run state"));
  // A state of the engine before body models and the archive: named.
  state["version"] = 1;
  writeFileAtomic(root / "run" / "state.json", state.dump());
  CHECK_THROWS_WITH(runEvolution(smallConfig(4, 3), fakeEvaluate(), quiet(root / "run", true)),
                    Catch::Contains("version 1") && Catch::Contains("start a new run"));
  state["version"] = 2;
  state["population"][0].erase("genome");
  writeFileAtomic(root / "run" / "state.json", state.dump());
  CHECK_THROWS_WITH(runEvolution(smallConfig(4, 3), fakeEvaluate(), quiet(root / "run", true)),
                    Catch::Contains("state.json is damaged"));
  writeFileAtomic(root / "run" / "state.json", "{not json");
  CHECK_THROWS_WITH(runEvolution(smallConfig(4, 3), fakeEvaluate(), quiet(root / "run", true)),
                    Catch::Contains("not valid JSON"));
  // An empty directory is adopted by a new run.
  fs::create_directories(root / "empty");
  CHECK(runEvolution(smallConfig(4, 2), fakeEvaluate(), quiet(root / "empty")).lastGeneration == 1);
}

TEST_CASE("resume: a run in use by another process is refused", "[resume]") {
  auto root = scratchDir("locked");
  runEvolution(smallConfig(4, 2), fakeEvaluate(), quiet(root / "run"));
  std::string before = readTextFile(root / "run" / "state.json");
  {
    RunDir holder = RunDir::open(root / "run");
    holder.lock(); // as a running evoc would
    CHECK_THROWS_WITH(runEvolution(smallConfig(4, 3), fakeEvaluate(), quiet(root / "run", true)),
                      Catch::Contains("in use by another evoc process"));
    CHECK(readTextFile(root / "run" / "state.json") == before);
  }
  // Released with its holder: the resume goes ahead.
  CHECK(runEvolution(smallConfig(4, 3), fakeEvaluate(), quiet(root / "run", true)).lastGeneration ==
        2);
}

TEST_CASE("resume: a run killed before generation 0 completed starts over", "[resume]") {
  auto root = scratchDir("fresh");
  RunDir::create(root / "early", kTestSource); // marker, no state
  runEvolution(smallConfig(5, 3), fakeEvaluate(), quiet(root / "early", true));
  runEvolution(smallConfig(5, 3), fakeEvaluate(), quiet(root / "whole"));
  checkSameRun(root / "whole", root / "early", 3);
}

TEST_CASE("run files: atomic write replaces whole files", "[resume]") {
  auto root = scratchDir("atomic");
  writeFileAtomic(root / "f.json", "one");
  writeFileAtomic(root / "f.json", "two, longer");
  CHECK(readTextFile(root / "f.json") == "two, longer");
  CHECK(std::distance(fs::directory_iterator(root), fs::directory_iterator()) == 1);
  CHECK_THROWS_AS(writeFileAtomic(root / "missing" / "f.json", "x"), evoc::Error);
  CHECK_THROWS_AS(readTextFile(root / "missing.json"), evoc::Error);
}

TEST_CASE("offspring: lambda != mu children per generation, deterministic and resumable",
          "[resume][offspring]") {
  for (int lambda : {3, 14}) {
    INFO("lambda " << lambda);
    auto config = [lambda](int generations) {
      EvolutionConfig c = smallConfig(6, generations, 31);
      c.offspring = lambda;
      return c;
    };
    auto root = scratchDir(fmt::format("offspring{}", lambda));
    std::vector<size_t> batches; // robots sent to the trainer per generation
    EvaluateFn fake = fakeEvaluate();
    EvaluateFn spy = [&](const EvalBatch &b) {
      batches.push_back(b.robots.size());
      return fake(b);
    };
    runEvolution(config(5), spy, quiet(root / "whole"));
    auto log = logWithoutTiming(root / "whole");
    REQUIRE(log.size() == 5);
    for (int g = 0; g < 5; ++g) {
      const json line = json::parse(log[size_t(g)]);
      const json pop =
          json::parse(readTextFile(root / "whole" / fmt::format("gen_{:04d}/population.json", g)));
      const size_t want = g == 0 ? 6 : size_t(lambda);
      CHECK(line["offspring"].get<size_t>() == want);
      CHECK(pop["offspring"].size() == want);
      CHECK(line["population"].get<size_t>() == 6); // mu survivors of parents + children
      CHECK(pop["population"].size() == 6);
      CHECK(line["offspring_trained"].get<size_t>() + line["duplicates_reused"].get<size_t>() ==
            want);
      if (g == 0)
        continue;
      // Child i is parent i mod mu's, parents in rank order.
      const json prev = json::parse(
          readTextFile(root / "whole" / fmt::format("gen_{:04d}/population.json", g - 1)));
      const json &parents = prev["population"];
      for (size_t i = 0; i < pop["offspring"].size(); ++i)
        CHECK(pop["offspring"][i]["parent"] == parents[i % parents.size()]["id"]);
    }
    size_t trained = 0;
    for (size_t b : batches)
      trained += b;
    CHECK(trained == json::parse(readTextFile(root / "whole" / "state.json"))["designs_evaluated"]
                         .get<size_t>());
    // Deterministic: a second run writes the same files.
    runEvolution(config(5), fake, quiet(root / "again"));
    checkSameRun(root / "whole", root / "again", 5);
    // Resumable: 2 generations, then 3 more.
    runEvolution(config(2), fake, quiet(root / "split"));
    runEvolution(config(5), fake, quiet(root / "split", true));
    checkSameRun(root / "whole", root / "split", 5);
    // Another lambda, or back to one child per parent, is refused by name.
    EvolutionConfig other = config(6);
    other.offspring = lambda + 1;
    CHECK_THROWS_WITH(runEvolution(other, fake, quiet(root / "split", true)),
                      Catch::Contains("offspring was") && Catch::Contains("only "
                                                                          "evolve.generations"));
    other.offspring = 0;
    CHECK_THROWS_WITH(runEvolution(other, fake, quiet(root / "split", true)),
                      Catch::Contains(fmt::format("offspring was {}, now one per parent", lambda)));
  }
  // Killed mid-generation and resumed, with lambda > mu.
  checkKilledRunsResume(scratchDir("offspring-kill"), [] {
    EvolutionConfig c = smallConfig(4, 8, 33);
    c.offspring = 9;
    return c;
  });
  // The default writes no "offspring" (a run's state.json reads as before),
  // and offspring = population is the default.
  CHECK_FALSE(configFingerprint(smallConfig(6, 2)).contains("offspring"));
  EvolutionConfig same = smallConfig(6, 2);
  same.offspring = 6;
  CHECK(configFingerprint(same) == configFingerprint(smallConfig(6, 2)));
  EvolutionConfig bad = smallConfig(6, 2);
  bad.offspring = -1;
  CHECK_THROWS_WITH(runEvolution(bad, fakeEvaluate(), quiet(scratchDir("offspring-bad") / "r")),
                    Catch::Contains("evolve.offspring must be at least 1"));
}
