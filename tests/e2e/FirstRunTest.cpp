// What a newcomer's first runs show, through the real binary (issue 29):
// every subcommand answers --help; best.svg's figures are the loss's; the
// progress line counts 1/G .. G/G; `evoc sim` takes a run's best.json and a
// generation's population.json; bodies with nothing to learn are not
// trained, and say so; the loss's named terms are recorded per design; a
// mutation rate above 1 is clamped with a warning.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "EvocProcess.h"
#include "JsonFiles.h"

namespace fs = std::filesystem;
using namespace evoc::test;
using nlohmann::json;

namespace {

std::string source(const std::string &rel) { return std::string(EVOC_SOURCE_DIR) + "/" + rel; }

/// `evoc run tests/data/newcomer/NAME.evo` into a fresh directory (2
/// threads), which it returns; REQUIREs success; its stderr into `err`.
fs::path runNewcomer(const std::string &name, std::string &err) {
  fs::path dir = freshDir(name);
  std::string out;
  REQUIRE(runEvocOut({"run", source("tests/data/newcomer/" + name + ".evo"), "--out", dir.string(),
                      "--threads", "2"},
                     out, err) == 0);
  return dir;
}

// The figures under best.svg's frames ("moved +0.0123"), left to right.
std::vector<double> movedFigures(const std::string &svg) {
  std::vector<double> out;
  static const std::regex re(">moved ([-+][0-9.]+)</text>");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator();
       ++it)
    out.push_back(std::stod((*it)[1].str()));
  return out;
}

} // namespace

TEST_CASE("every subcommand answers --help with its usage, exit 0", "[cli][help]") {
  for (const char *cmd : {"check", "compile", "opt", "run", "sim", "train", "render"}) {
    for (const char *flag : {"--help", "-h"}) {
      INFO(cmd << " " << flag);
      std::string out, err;
      CHECK(runEvocOut({cmd, flag}, out, err) == 0);
      CHECK(out.rfind(std::string("usage: evoc ") + cmd, 0) == 0);
      CHECK(err.empty());
    }
  }
  // After a file and other options too, and naming what the command takes.
  std::string out, err;
  CHECK(runEvocOut({"sim", source("examples/eldir_small.evo"), "--out", "x.json", "--help"}, out,
                   err) == 0);
  CHECK(out.find("--robots R.json") != std::string::npos);
  CHECK(out.find("best.json") != std::string::npos);
  CHECK(out.find("--set KEY=VALUE") != std::string::npos); // the common options
  // An unknown option is still an error.
  CHECK(runEvocOut({"sim", source("examples/eldir_small.evo"), "--frobnicate"}, out, err) == 2);
  CHECK(err.find("unknown option '--frobnicate'") != std::string::npos);
}

TEST_CASE("evoc run: best.svg's figures are the loss's; the progress line counts 1/G..G/G; "
          "evoc sim takes best.json and population.json",
          "[run][svg][sim]") {
  fs::path dir = freshDir("first-run");
  std::string out, err;
  REQUIRE(runEvocOut({"run", source("examples/eldir_small.evo"), "--out", dir.string(), "--set",
                      "evolve.generations=2", "--set", "evolve.population=4", "--set",
                      "world.steps=150", "--set", "evolve.learn.iterations=4", "--threads", "2"},
                     out, err) == 0);
  // 2 generations: 1/2 then 2/2, each naming its folder.
  CHECK(err.find("generation 1/2 (gen_0000)") != std::string::npos);
  CHECK(err.find("generation 2/2 (gen_0001)") != std::string::npos);
  CHECK(err.find("generation 0/") == std::string::npos);

  // The last frame is the last state the loss reads, drawn with the best
  // weights: its "moved" is -loss there, which is the fitness (max(-loss)
  // of losses/displacement.evo, printed to 4 decimals).
  const json best = readJson((dir / "best.json").string());
  const std::string svg = readText(dir / "best.svg");
  const std::vector<double> moved = movedFigures(svg);
  REQUIRE(moved.size() == 4);
  CHECK(moved[0] == 0);
  CHECK(std::fabs(moved[3] - best["fitness"].get<double>()) <= 0.6e-4);
  CHECK(svg.find("= max(-loss)") != std::string::npos);
  CHECK(svg.find("dx =") == std::string::npos);

  // best.json as the robot, with its own weights: the loss of those weights.
  fs::path simOut = dir / "sim_best.json";
  REQUIRE(runEvocOut({"sim", source("examples/eldir_small.evo"), "--robots",
                      (dir / "best.json").string(), "--steps", "150", "--out", simOut.string()},
                     out, err) == 0);
  CHECK(err.find("using the trained weights it holds") != std::string::npos);
  const json sim = readJson(simOut.string());
  REQUIRE(sim["results"].size() == 1);
  CHECK(-sim["results"][0]["loss"].get<double>() ==
        Approx(best["fitness"].get<double>()).margin(1e-12));

  // A generation's population.json: every member, in rank order.
  simOut = dir / "sim_pop.json";
  REQUIRE(runEvocOut({"sim", source("examples/eldir_small.evo"), "--robots",
                      (dir / "gen_0001" / "population.json").string(), "--steps", "150", "--out",
                      simOut.string()},
                     out, err) == 0);
  CHECK(readJson(simOut.string())["results"].size() == 4);
  CHECK(err.find("the population's 4 members") != std::string::npos);
}

TEST_CASE("evoc run: bodies without an actuated spring are not trained, and say so",
          "[run][passive]") {
  std::string err;
  const fs::path dir = runNewcomer("passive", err);
  const auto log = logOf(dir);
  REQUIRE(log.size() == 2);
  for (const auto &r : log) {
    CHECK(r["offspring_trained"].get<int>() > 0);
    CHECK(r["offspring_not_trained"] == r["offspring_trained"]);
  }
  CHECK(err.find("not trained (nothing to learn)") != std::string::npos);
  const json pop = readJson((dir / "gen_0001" / "population.json").string());
  for (const auto &m : pop["population"])
    CHECK(m["losses"].size() == 1); // one evaluation, not 5 updates + 1
  for (const auto &c : pop["offspring"])
    if (!c.contains("reused"))
      CHECK(c["not_trained"].get<std::string>().find("nothing to learn") != std::string::npos);
}

TEST_CASE("evoc run: the loss's named terms are recorded per design", "[run][terms]") {
  std::string err;
  const fs::path dir = runNewcomer("terms", err);
  const json best = readJson((dir / "best.json").string());
  REQUIRE(best.contains("terms"));
  const auto &losses = best["losses"];
  REQUIRE(best["terms"].contains("forward"));
  REQUIRE(best["terms"].contains("low"));
  REQUIRE(best["terms"]["forward"].size() == losses.size());
  // The terms add up to the loss, iteration by iteration.
  for (size_t i = 0; i < losses.size(); ++i)
    CHECK(best["terms"]["forward"][i].get<double>() + best["terms"]["low"][i].get<double>() ==
          Approx(losses[i].get<double>()).margin(1e-12));
  const json pop = readJson((dir / "gen_0001" / "population.json").string());
  for (const auto &m : pop["population"])
    CHECK(m["terms"]["low"].size() == m["losses"].size());
}

TEST_CASE("evoc run: a mutation rate above 1 is clamped with one warning and logged",
          "[run][rates]") {
  std::string err;
  const fs::path dir = runNewcomer("rates", err);
  CHECK(countOf(err, "warning: the mutation rate of 'add' came to") == 1);
  CHECK(err.find("clamped to 1") != std::string::npos);
  const auto log = logOf(dir);
  REQUIRE(log.size() == 3);
  bool logged = false;
  for (const auto &r : log)
    if (r.contains("rates_clamped")) {
      CHECK(r["rates_clamped"]["add"].get<double>() > 1);
      logged = true;
    }
  CHECK(logged);
  CHECK(!log[0].contains("rates_clamped")); // generation 0 samples; it does not mutate
}
