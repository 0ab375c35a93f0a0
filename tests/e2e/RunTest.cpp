// `evoc run` end to end, through the real binary: a small run improves its
// best fitness and writes a complete run directory; a run killed with
// SIGKILL mid-generation resumes to exactly the log of an uninterrupted run;
// grammar bodies (examples/grammar_walker.evo) evolve without body-caused
// invalid offspring or a body trained twice; 3D grammar bodies (a test
// tetrahedra grammar, examples/walker3d.evo) evolve, improve and are drawn.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include "EvocProcess.h"

namespace fs = std::filesystem;
using namespace evoc::test;

namespace {

const std::vector<std::string> kSmall = smallRunOptions(8, 3, 200, 6, 2);

std::vector<std::string> withSmall(std::vector<std::string> args) {
  args.insert(args.end(), kSmall.begin(), kSmall.end());
  return args;
}

std::string example() { return std::string(EVOC_SOURCE_DIR) + "/examples/eldir_small.evo"; }

} // namespace

TEST_CASE("evoc run: a small run improves and writes a complete run directory", "[run]") {
  fs::path dir = freshDir("small");
  REQUIRE(runEvoc(withSmall({"run", example(), "--out", dir.string()})) == 0);
  for (const char *f : {"log.jsonl", "best.json", "best.svg", "fitness.svg", "resolved.evo",
                        "state.json", "gen_0000/population.json", "gen_0002/population.json"})
    CHECK(fs::exists(dir / f));
  auto log = logOf(dir);
  REQUIRE(log.size() == 3);
  double first = log.front()["fitness_max"], last = log.back()["fitness_max"];
  CHECK(last > first);
  CHECK(double(log.back()["fitness_median"]) > double(log.front()["fitness_median"]));
  auto best = nlohmann::json::parse(std::ifstream(dir / "best.json"));
  CHECK(best.dump().find("springs") != std::string::npos);
  // 6 updates, then the final weights once more (docs/evolution.md): 7 losses, and
  // the fitness is the best -loss over all of them.
  REQUIRE(best["losses"].size() == 7);
  double bestNegLoss = -1e300;
  for (const auto &l : best["losses"])
    bestNegLoss = std::max(bestNegLoss, -l.get<double>());
  CHECK(best["fitness"].get<double>() == bestNegLoss);
  // Every trained robot is in the archive once; the log counts duplicates.
  auto state = nlohmann::json::parse(std::ifstream(dir / "state.json"));
  CHECK(state["archive"].size() == state["designs_evaluated"].get<size_t>());
  for (const auto &r : log) {
    CHECK(r["offspring_trained"].get<int>() + r["duplicates_reused"].get<int>() ==
          r["offspring"].get<int>());
    CHECK(r.contains("duplicates_avoided"));
    CHECK(r["fallbacks"].is_object());
  }
}

TEST_CASE("evoc run: SIGKILL mid-generation, then --resume, equals an uninterrupted run",
          "[run][resume]") {
  fs::path whole = freshDir("whole"), killed = freshDir("killed");
  REQUIRE(runEvoc(withSmall({"run", example(), "--out", whole.string()})) == 0);

  pid_t pid = spawnEvoc(withSmall({"run", example(), "--out", killed.string()}));
  // Kill it once generation 0 is logged, while generation 1 is being evaluated.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (lineCount(killed / "log.jsonl") < 1 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  kill(pid, SIGKILL);
  waitExit(pid);
  size_t before = lineCount(killed / "log.jsonl");
  INFO("generations logged before the kill: " << before);
  CHECK(before < 3);

  REQUIRE(runEvoc(withSmall({"run", example(), "--resume", killed.string()})) == 0);
  CHECK(logOf(killed) == logOf(whole));
  auto bestWhole = nlohmann::json::parse(std::ifstream(whole / "best.json"));
  auto bestKilled = nlohmann::json::parse(std::ifstream(killed / "best.json"));
  CHECK(bestWhole == bestKilled);
}

TEST_CASE("evoc run: an existing directory that is not a run is refused untouched", "[run]") {
  fs::path dir = freshDir("notarun");
  fs::create_directories(dir);
  std::ofstream(dir / "precious.txt") << "data";
  CHECK(runEvoc(withSmall({"run", example(), "--out", dir.string()})) == 1);
  CHECK(fs::exists(dir / "precious.txt"));
  CHECK_FALSE(fs::exists(dir / "log.jsonl"));
}

TEST_CASE("evoc sim / run: bad input is an error with exit code 1, never a crash", "[run]") {
  fs::path dir = freshDir("badinput");
  fs::create_directories(dir);
  std::ofstream(dir / "bad.json") << R"({"robots": [{"points": [[0, 0], [0.05, 0]],
                                        "springs": [[0, 7, 0.05, 3e4, 0.1]]}]})";
  CHECK(runEvoc({"sim", example(), "--robots", (dir / "bad.json").string(), "--out",
                 (dir / "o.json").string()}) == 1);
  CHECK_FALSE(fs::exists(dir / "o.json"));
  CHECK(runEvoc({"sim", example(), "--robots", (dir / "missing.json").string(), "--out",
                 (dir / "o.json").string()}) == 1);
  CHECK(runEvoc({"run", (dir / "missing.evo").string()}) == 1);
  CHECK(runEvoc({"run", example(), "--set", "evolve.population=0"}) == 1);
}

namespace {

/// Outlines best.svg must draw for a walker genome (stdlib/grammars/walker.evo):
/// one per cell, a trunk has 5, a segment or a foot 1 (its hull); the legs in
/// a trunk's tied slot (children[1]) are placed twice.
int walkerCells(const nlohmann::json &n, int mult) {
  if (n.is_null())
    return 0;
  const std::string sym = n["symbol"];
  int cells = mult * (sym == "Body" || sym == "Trunk" ? 5 : 1);
  for (size_t c = 0; c < n["children"].size(); ++c)
    cells += walkerCells(n["children"][c],
                         (sym == "Body" || sym == "Trunk") && c == 1 ? 2 * mult : mult);
  return cells;
}

} // namespace

TEST_CASE("evoc run: grammar walkers evolve; no body-caused invalid offspring, none trained twice",
          "[run][grammar]") {
  const std::string walker = std::string(EVOC_SOURCE_DIR) + "/examples/grammar_walker.evo";
  const std::vector<std::string> small = {"--set",     "evolve.population=6",
                                          "--set",     "evolve.generations=3",
                                          "--set",     "world.steps=100",
                                          "--set",     "evolve.learn.iterations=3",
                                          "--threads", "2"};
  auto args = [&](std::vector<std::string> a) {
    a.insert(a.end(), small.begin(), small.end());
    return a;
  };
  fs::path dir = freshDir("grammar");
  REQUIRE(runEvoc(args({"run", walker, "--out", dir.string()})) == 0);
  auto log = logOf(dir);
  REQUIRE(log.size() == 3);
  long trained = 0;
  for (size_t g = 0; g < log.size(); ++g) {
    const auto &r = log[g];
    INFO("generation " << g << ": " << r.dump());
    CHECK(r["generation"].get<size_t>() == g);
    // A child whose body is invalid is neither trained nor reused (EvaluateStep.cpp):
    // trained + reused == offspring means no body-caused invalid offspring.
    CHECK(r["offspring_trained"].get<int>() + r["duplicates_reused"].get<int>() ==
          r["offspring"].get<int>());
    trained += r["offspring_trained"].get<long>();
  }
  CHECK(log.back()["ops"].is_object());
  // Every trained robot is in the archive once, under distinct keys and ids.
  auto state = nlohmann::json::parse(std::ifstream(dir / "state.json"));
  CHECK(state["designs_evaluated"].get<long>() == trained);
  CHECK(state["archive"].size() == size_t(trained));
  std::set<std::string> keys;
  std::set<long> ids;
  for (const auto &e : state["archive"]) {
    keys.insert(e[0].get<std::string>());
    ids.insert(e[1].get<long>());
  }
  CHECK(keys.size() == state["archive"].size());
  CHECK(ids.size() == state["archive"].size());
  // best.svg outlines each cell of each part of the best body, at each time.
  auto best = nlohmann::json::parse(std::ifstream(dir / "best.json"));
  const std::string svg = readText(dir / "best.svg");
  int cells = walkerCells(best["genome"]["root"], 1);
  CHECK(cells >= 5);
  // The gait is drawn at four times (RunCommand.cpp: steps 0, 1/3, 2/3, last).
  CHECK(countOf(svg, "<polygon class=\"part\"") == size_t(4 * cells));
  CHECK(countOf(svg, "<title>trunk</title>") % 5 == 0);
  // Each part kind in its own colour, named in a legend, in best.svg and in
  // report.html's players alike.
  CHECK(countOf(svg, "class=\"part-key\"") >= 2);
  CHECK(svg.find(">trunk</text>") != std::string::npos);
  const std::string report = readText(dir / "report.html");
  CHECK(report.find("\"parts\":{\"cells\":[[") != std::string::npos);
  CHECK(report.find("\"colours\":[\"#") != std::string::npos);
  // Resuming the finished run changes nothing.
  auto readAll = [](const fs::path &f) { return readText(f); };
  std::string stateBefore = readAll(dir / "state.json"), logBefore = readAll(dir / "log.jsonl"),
              bestBefore = readAll(dir / "best.json");
  REQUIRE(runEvoc(args({"run", walker, "--resume", dir.string()})) == 0);
  CHECK(readAll(dir / "state.json") == stateBefore);
  CHECK(readAll(dir / "log.jsonl") == logBefore);
  CHECK(readAll(dir / "best.json") == bestBefore);
}

TEST_CASE("evoc run: a 3D grammar body with its own physics evolves, lifted on the last axis",
          "[run][grammar]") {
  fs::path dir = freshDir("grammar3d");
  std::string file = std::string(EVOC_SOURCE_DIR) + "/tests/data/grammar3d/tetrahedra.evo";
  REQUIRE(runEvoc({"run", file, "--out", dir.string(), "--threads", "2"}) == 0);
  CHECK(lineCount(dir / "log.jsonl") == 3);
  CHECK(fs::exists(dir / "fitness.svg"));
  CHECK(fs::exists(dir / "best.svg")); // an oblique 3D view
  std::ifstream in(dir / "best.json");
  nlohmann::json best = nlohmann::json::parse(in);
  double minZ = 1e300, minX = 1e300;
  for (const auto &p : best.at("points")) {
    REQUIRE(p.size() == 3);
    minZ = std::min(minZ, p[2].get<double>());
    minX = std::min(minX, p[0].get<double>());
  }
  CHECK(minZ == Approx(0.1)); // resting on the ground (height 0.1) along z
  CHECK(minX == Approx(0).margin(1e-12));
  for (const auto &r : logOf(dir))
    CHECK(r.at("offspring_valid").get<int>() == r.at("offspring").get<int>());
}

TEST_CASE("evoc run: examples/walker3d.evo, a short run on a fixed seed, improves and draws "
          "its best walker in 3D",
          "[run][grammar][3d]") {
  fs::path dir = freshDir("walker3d");
  std::string file = std::string(EVOC_SOURCE_DIR) + "/examples/walker3d.evo";
  REQUIRE(runEvoc(withSmall({"run", file, "--out", dir.string(), "--set", "evolve.seed=1"})) == 0);
  auto log = logOf(dir);
  REQUIRE(log.size() == 3);
  CHECK(double(log.back()["fitness_max"]) > double(log.front()["fitness_max"]));
  CHECK(double(log.back()["fitness_median"]) > double(log.front()["fitness_median"]));
  for (const auto &r : log) // no body-caused invalid offspring
    CHECK(r.at("offspring_valid").get<int>() == r.at("offspring").get<int>());
  std::ifstream svg(dir / "best.svg");
  REQUIRE(svg.good());
  std::string text((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>());
  CHECK(text.find("class=\"ground\"") != std::string::npos); // the ground plane, per frame
  CHECK(text.find("3D, seen from") != std::string::npos);
  auto best = nlohmann::json::parse(std::ifstream(dir / "best.json"));
  for (const auto &p : best.at("points"))
    CHECK(p.size() == 3);
}

namespace {

const char *kOneRobot = R"({"robots": [{"points": [[0, 0.1], [0.05, 0.1], [0.025, 0.14]],
  "springs": [[0, 1, 0.05, 3e4, 0.1], [1, 2, 0.05, 3e4, 0.1], [0, 2, 0.05, 3e4, 0]]}]})";

} // namespace

TEST_CASE("evoc sim / run: counts on the command line are parsed strictly", "[run][cli]") {
  fs::path dir = freshDir("strictints");
  fs::create_directories(dir);
  std::ofstream(dir / "r.json") << kOneRobot;
  const std::string r = (dir / "r.json").string(), o = (dir / "o.json").string();
  std::string err;
  for (const char *steps :
       {"9223372036854775807", "99999999999999999999999", "1e30", "12abc", "-5", "1", ""}) {
    INFO("--steps '" << steps << "'");
    CHECK(runEvocErr({"sim", example(), "--robots", r, "--out", o, "--steps", steps}, err) == 2);
    CHECK(err.find("--steps expects an integer from 2 to 100000000") != std::string::npos);
  }
  CHECK(runEvocErr({"sim", example(), "--robots", r, "--out", o, "--threads", "x"}, err) == 2);
  CHECK(err.find("--threads expects an integer") != std::string::npos);
  for (const char *threads : {"abc", "-1", "1e3", "99999"}) {
    INFO("--threads '" << threads << "'");
    CHECK(runEvocErr({"run", example(), "--threads", threads}, err) == 2);
    CHECK(err.find("--threads expects an integer from 0 to 4096") != std::string::npos);
  }
  CHECK_FALSE(fs::exists(dir / "o.json"));
  // In range, the same options run.
  CHECK(runEvocErr({"sim", example(), "--robots", r, "--out", o, "--steps", "20", "--threads", "1"},
                   err) == 0);
  CHECK(fs::exists(dir / "o.json"));
}

TEST_CASE("evoc sim: messages name the directory, the point, the params file, the robot once",
          "[run][cli]") {
  fs::path dir = freshDir("messages");
  fs::create_directories(dir);
  const std::string o = (dir / "o.json").string();
  std::string err;
  CHECK(runEvocErr({"sim", example(), "--robots", dir.string(), "--out", o}, err) == 1);
  CHECK(err.find("it is a directory") != std::string::npos);
  CHECK(err.find("not valid JSON") == std::string::npos);

  std::ofstream(dir / "big.json") << R"({"robots": [{"points": [[0, 0.1], [0.05, 1e400]],
    "springs": [[0, 1, 0.05, 3e4, 0.1]]}]})";
  CHECK(runEvocErr({"sim", example(), "--robots", (dir / "big.json").string(), "--out", o}, err) ==
        1);
  CHECK(err.find("robot 0, point 1, coordinate y is too large for a double") != std::string::npos);

  std::ofstream(dir / "r.json") << kOneRobot;
  std::ofstream(dir / "p.json") << R"({"params": [{"w1": [1, 2]}]})";
  const std::string p = (dir / "p.json").string();
  CHECK(runEvocErr(
            {"sim", example(), "--robots", (dir / "r.json").string(), "--params", p, "--out", o},
            err) == 1);
  CHECK(err.find(p + ": robot 0, field 'w1'") != std::string::npos);

  // A robot whose actuation explodes: its warning names it once.
  std::ofstream(dir / "ex.json") << R"({"robots": [{"points": [[0, 0.1], [0.05, 0.1],
    [0.025, 0.14]], "springs": [[0, 1, 0.05, 3e4, 1e300], [1, 2, 0.05, 3e4, 0.1],
    [0, 2, 0.05, 3e4, 0]]}]})";
  CHECK(runEvocErr({"sim", example(), "--robots", (dir / "ex.json").string(), "--out", o}, err) ==
        1);
  CHECK(err.find("warning: robot 0: ") != std::string::npos);
  CHECK(err.find("robot 0: robot 0:") == std::string::npos);
}

TEST_CASE("evoc sim: rollouts too large for memory are refused before allocation", "[run][cli]") {
  fs::path dir = freshDir("simmemory");
  fs::create_directories(dir);
  nlohmann::json one = nlohmann::json::parse(kOneRobot)["robots"][0];
  std::ofstream(dir / "four.json") << nlohmann::json{{"robots", {one, one, one, one}}}.dump();
  const std::string r = (dir / "four.json").string(), o = (dir / "o.json").string();
  std::string err;
  // 4 robots x 6 doubles x 2 (x, v) x 8 bytes x 10^8 states = 35.8 GiB.
  CHECK(runEvocErr(
            {"sim", example(), "--robots", r, "--out", o, "--steps", "100000000", "--full-tape"},
            err) == 1);
  CHECK(err.find("would need about 35.8 GiB") != std::string::npos);
  CHECK(err.find("drop --full-tape") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "o.json"));
}

TEST_CASE("evoc run: a population too large for the memory there is is refused, located, "
          "before anything is written; one that fits runs",
          "[run][cli]") {
  fs::path dir = freshDir("runmemory");
  const std::string errFile = (fs::temp_directory_path() / "evoc-e2e-runmemory.err").string();
  // Under a 4 GiB address-space limit (the bad_alloc of the issue: 100,000
  // designs died at 1.3 GiB with exit 134).
  auto limited = [&](const std::string &population, const std::string &out) {
    const std::string cmd = "ulimit -v 4194304 && exec " + std::string(EVOC_BINARY) + " run " +
                            example() + " --set evolve.population=" + population +
                            " --set evolve.generations=2 --set world.steps=2"
                            " --set evolve.learn.iterations=1 --out " +
                            out;
    return waitExit(spawnProgram({"/bin/bash", "-c", cmd}, errFile.c_str()));
  };
  CHECK(limited("100000", (dir / "big").string()) == 1);
  const std::string err = readText(errFile);
  INFO(err);
  CHECK(err.find("<--set evolve.population>:1:") != std::string::npos);
  CHECK(err.find("evolve.population = 100000 needs about") != std::string::npos);
  CHECK(err.find("lower evolve.population (to at most about") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "big"));
  CHECK(limited("2000", (dir / "fits").string()) == 0);
  CHECK(lineCount(dir / "fits" / "log.jsonl") == 2);
}

TEST_CASE("evoc run: a MAP-Elites archive too large for memory is refused before the run starts",
          "[run][memory][map_elites]") {
  // Two designs kept, but an archive of a million cells to fill: the
  // estimate counts the archive (one design a cell), not the population.
  fs::path dir = freshDir("runmemory-map-elites");
  const std::string errFile = (fs::temp_directory_path() / "evoc-e2e-me-memory.err").string();
  const std::string cmd =
      "ulimit -v 4194304 && exec " + std::string(EVOC_BINARY) + " run " +
      std::string(EVOC_SOURCE_DIR) + "/examples/map_elites_walkers.evo" +
      " --set 'evolve.select=map_elites(actuators(range = (0, 60), bins = 1000), "
      "width(range = (0.1, 0.3), bins = 1000))' --set evolve.population=2"
      " --set evolve.offspring=2 --set evolve.generations=1 --set world.steps=2"
      " --set evolve.learn.iterations=1 --out " +
      (dir / "big").string();
  CHECK(waitExit(spawnProgram({"/bin/bash", "-c", cmd}, errFile.c_str())) == 1);
  const std::string err = readText(errFile);
  INFO(err);
  CHECK(err.find("select = map_elites keeps up to one design in each of its 1000000 cells") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(dir / "big"));
}

TEST_CASE("evoc sim: a fixed body under mass_spring_fang, without --robots, lands where the "
          "authors' code puts it; evoc run refuses it",
          "[run][cells]") {
  const std::string file = std::string(EVOC_SOURCE_DIR) + "/tests/data/fang/alpaca_passive.evo";
  fs::path dir = freshDir("cells");
  fs::create_directories(dir);
  const std::string o = (dir / "o.json").string();
  std::string err;
  // Passive Alpaca at t = 998 in the authors' code
  // (docs/multitask.md, "What a reproduction shows", 6 decimals).
  for (auto [loss, ref] : {std::pair<const char *, double>{"com_x", 0.588517},
                           {"com_y", 0.179142},
                           {"top", 0.295688}}) {
    INFO("loss " << loss << "\n" << err);
    REQUIRE(runEvocErr({"sim", file, "--out", o, "--set", std::string("evolve.learn.loss=") + loss},
                       err) == 0);
    CHECK(err.find("evoc sim: 1 robots, 999 steps") != std::string::npos);
    auto out = nlohmann::json::parse(std::ifstream(o));
    REQUIRE(out["results"].size() == 1);
    CHECK(out["results"][0]["valid"] == true);
    CHECK(out["results"][0]["loss"].get<double>() == Approx(ref).margin(1e-6));
  }
  // A file without a fixed body still needs --robots.
  CHECK(runEvocErr({"sim", example(), "--out", o}, err) == 1);
  CHECK(err.find("--robots ROBOTS.json is required") != std::string::npos);
  // A fixed body does not evolve: run refuses it where it is declared.
  CHECK(runEvocErr({"run", file, "--out", (dir / "run").string()}, err) == 1);
  CHECK(err.find("alpaca.evo:8:12: error: body 'Alpaca' is a fixed body: it does not evolve") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(dir / "run"));
}

TEST_CASE("evoc run: a body whose simulation blows up but stays finite is invalid, not the "
          "winner",
          "[run][invalid]") {
  // jump.evo's rules (`invalid = nonfinite();`) with springs too stiff for
  // its dt: most bodies blow up, one of generation 0 to a finite loss of
  // -3.8e108 in its first iteration, before learning calms it.
  const std::string file = std::string(EVOC_SOURCE_DIR) + "/tests/data/blowup/jump_stiff.evo";
  auto offspring = [](const fs::path &dir) {
    std::vector<nlohmann::json> all;
    for (int g = 0; g < 2; ++g) {
      auto pop = nlohmann::json::parse(
          std::ifstream(dir / (g == 0 ? "gen_0000" : "gen_0001") / "population.json"));
      for (const auto &o : pop["offspring"])
        all.push_back(o);
    }
    return all;
  };
  // Without the bound (as before world.state_limit) the blown-up body wins.
  fs::path unbounded = freshDir("blowup-unbounded");
  REQUIRE(runEvoc({"run", file, "--out", unbounded.string(), "--threads", "2", "--set",
                   "world.state_limit=1e300"}) == 0);
  auto best = nlohmann::json::parse(std::ifstream(unbounded / "best.json"));
  CHECK(best["fitness"].get<double>() > 1e100);
  // With the default bound every blown-up body is invalid with the reason,
  // and the winner is a body that moved like a robot.
  fs::path dir = freshDir("blowup");
  REQUIRE(runEvoc({"run", file, "--out", dir.string(), "--threads", "2"}) == 0);
  best = nlohmann::json::parse(std::ifstream(dir / "best.json"));
  CHECK(best["fitness"].get<double>() < 1.0);
  int blewUp = 0;
  for (const auto &o : offspring(dir)) {
    if (o["valid"].get<bool>()) {
      CHECK(o["fitness"].get<double>() < 1.0);
      continue;
    }
    INFO(o.dump());
    const std::string why = o["reason"].get<std::string>();
    CHECK(why.find("the simulation blew up") != std::string::npos);
    CHECK(why.find("beyond world.state_limit = 1e+06") != std::string::npos);
    ++blewUp;
  }
  CHECK(blewUp > 0);
}

TEST_CASE("evoc run: evolve.offspring sets the children of each generation", "[run][offspring]") {
  fs::path dir = freshDir("offspring");
  REQUIRE(runEvoc(withSmall(
              {"run", example(), "--out", dir.string(), "--set", "evolve.offspring=3"})) == 0);
  auto log = logOf(dir);
  REQUIRE(log.size() == 3);
  CHECK(log[0]["offspring"] == 8); // generation 0: the population, drawn at random
  CHECK(log[1]["offspring"] == 3);
  CHECK(log[2]["offspring"] == 3);
  for (const auto &r : log)
    CHECK(r["population"] == 8);
  // A resume with another count is refused by name.
  std::string err;
  CHECK(runEvocErr(
            withSmall({"run", example(), "--resume", dir.string(), "--set", "evolve.offspring=4"}),
            err) == 1);
  CHECK(err.find("offspring was 3, now 4") != std::string::npos);
}

TEST_CASE("evoc run --resume: the experiment is compared as a program, not as text",
          "[run][resume]") {
  // The same experiment re-laid out, commented and moved resumes; a changed
  // number does not (the fingerprint: RunCommand.cpp's experimentText).
  fs::path dir = freshDir("resume-layout");
  fs::create_directories(dir);
  const std::string text = readText(std::string(EVOC_SOURCE_DIR) + "/examples/eldir_small.evo");
  const fs::path first = dir / "a.evo", moved = dir / "moved" / "b.evo";
  { std::ofstream(first) << text; }
  const std::vector<std::string> small = {
      "--set", "evolve.population=2",       "--set",     "world.steps=60",
      "--set", "evolve.learn.iterations=1", "--threads", "1"};
  auto run = [&](const std::vector<std::string> &head, int generations, std::string &err) {
    std::vector<std::string> args = head;
    args.insert(args.end(), small.begin(), small.end());
    args.insert(args.end(), {"--set", "evolve.generations=" + std::to_string(generations)});
    return runEvocErr(args, err);
  };
  std::string err;
  REQUIRE(run({"run", first.string(), "--out", (dir / "R").string()}, 1, err) == 0);
  std::string other = "// the same experiment, reformatted\n" + text;
  for (size_t at = 0; (at = other.find("\n  ", at)) != std::string::npos; at += 5)
    other.replace(at, 3, "\n    ");
  fs::create_directories(moved.parent_path());
  { std::ofstream(moved) << other; }
  CHECK(run({"run", moved.string(), "--resume", (dir / "R").string()}, 2, err) == 0);
  CHECK(logOf(dir / "R").size() == 2);
  std::string changed = text;
  changed.replace(changed.find("damping = 15;"), 13, "damping = 16;");
  { std::ofstream(moved) << changed; }
  CHECK(run({"run", moved.string(), "--resume", (dir / "R").string()}, 3, err) != 0);
  CHECK(err.find("settings differ") != std::string::npos);
}
