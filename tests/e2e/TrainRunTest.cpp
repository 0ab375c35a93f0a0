// `evoc train` end to end, through the real binary, on the multi-task
// example (docs/multitask.md): a complete run directory (log, validation per term,
// weights, the gait under each validation case), and a run stopped at any of
// its file commits resumes to exactly the uninterrupted run, continued
// episodes' states included.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "EvocProcess.h"

namespace fs = std::filesystem;
using namespace evoc::test;

namespace {

std::vector<std::string> trainArgs(const std::string &flag, const fs::path &dir) {
  return {"train",     std::string(EVOC_SOURCE_DIR) + "/examples/multitask_alpaca.evo",
          flag,        dir.string(),
          "--threads", "2",
          "--set",     "train.learn.iterations=4",
          "--set",     "train.learn.batch=2",
          "--set",     "train.validate_every=2",
          "--set",     "train.learn.episodes=continued(after = 1, reset_every = 2)"};
}

} // namespace

TEST_CASE("evoc train: a complete run directory; killed at any commit, --resume equals it",
          "[run][train][resume]") {
  fs::path whole = freshDir("train-whole");
  REQUIRE(runEvoc(trainArgs("--out", whole)) == 0);
  auto log = logOf(whole);
  REQUIRE(log.size() == 4);
  auto validation = logOf(whole, "validation.jsonl");
  REQUIRE(validation.size() == 3); // iterations 0, 2 and 4
  for (const auto &v : validation)
    for (const char *term : {"velocity", "height", "crawl"})
      CHECK(v["terms"].contains(term));
  std::string plot = readText(whole / "validation.svg");
  for (const char *series : {">total<", ">velocity<", ">height<", ">crawl<"})
    CHECK(plot.find(series) != std::string::npos);
  size_t gaits = 0;
  for (const auto &f : fs::directory_iterator(whole / "gaits"))
    gaits += f.path().extension() == ".svg";
  CHECK(gaits == 54); // one per validation case
  CHECK(fs::exists(whole / "gaits" / "case_53_v0.08_h0.2_c1.svg"));
  auto state = nlohmann::json::parse(readText(whole / "state.json"));
  CHECK(state["carry"].size() == 2); // both episodes' final states

  // Stop the run at its Nth file commit, then resume it.
  for (int n : {1, 2, 4, 6, 9, 12, 20}) {
    INFO("stopped at write " << n);
    fs::path dir = freshDir("train-killed");
    ::setenv("EVOC_FAULT_AFTER_WRITES", std::to_string(n).c_str(), 1);
    int rc = runEvoc(trainArgs("--out", dir));
    ::unsetenv("EVOC_FAULT_AFTER_WRITES");
    CHECK(rc != 0);
    REQUIRE(runEvoc(trainArgs("--resume", dir)) == 0);
    CHECK(logOf(dir) == log);
    CHECK(logOf(dir, "validation.jsonl") == validation);
    CHECK(readText(dir / "weights.json") == readText(whole / "weights.json"));
    CHECK(readText(dir / "gaits" / "case_07_v-0.06_h0.1_c1.svg") ==
          readText(whole / "gaits" / "case_07_v-0.06_h0.1_c1.svg"));
    for (const auto &f : fs::recursive_directory_iterator(dir))
      CHECK(f.path().string().find(".tmp.") == std::string::npos);
  }
}

TEST_CASE("evoc run: bodies evolve under a multi-task loss, the same for any thread count",
          "[run][train]") {
  auto args = [](const fs::path &dir, const char *threads) {
    return withSets({"run", std::string(EVOC_SOURCE_DIR) + "/examples/multitask_evolve.evo",
                     "--out", dir.string(), "--threads", threads},
                    {"evolve.population=4", "evolve.generations=2", "evolve.learn.iterations=3",
                     "evolve.learn.batch=2"});
  };
  fs::path one = freshDir("mt-evolve-1"), two = freshDir("mt-evolve-2");
  REQUIRE(runEvoc(args(one, "1")) == 0);
  REQUIRE(runEvoc(args(two, "2")) == 0);
  CHECK(finishedLog(one, 2) == logOf(two));
  auto best = nlohmann::json::parse(readText(one / "best.json"));
  CHECK(best["losses"].size() == 4); // 3 updates, then the final weights
  // The gait is drawn under commands (the picture is not the rest pose).
  std::string svg = readText(one / "best.svg");
  CHECK(svg.find("t = ") != std::string::npos);
  CHECK(svg.find("rest pose") == std::string::npos);
}

TEST_CASE("evoc train in 3D: Quad3D learns to walk and turn on command (the 3D multi-task example)",
          "[run][train][3d]") {
  fs::path dir = freshDir("train-quad3d");
  REQUIRE(runEvoc({"train", std::string(EVOC_SOURCE_DIR) + "/examples/multitask_quad3d.evo",
                   "--out", dir.string(), "--threads", "2", "--set", "train.learn.iterations=4",
                   "--set", "train.learn.batch=2", "--set", "train.validate_every=4"}) == 0);
  auto v = logOf(dir, "validation.jsonl");
  REQUIRE(v.size() == 2);
  for (const auto &j : v) {
    REQUIRE(j["terms"].contains("rotation"));
    CHECK(j["terms"]["rotation"].get<double>() > 0);
  }
  // Four Adam steps already lower the validation loss of the 15 cases.
  CHECK(v[1]["total"].get<double>() < v[0]["total"].get<double>());
  // One 3D picture per validation case: turn commands in the file names.
  size_t gaits = 0;
  for (const auto &e : fs::directory_iterator(dir / "gaits"))
    gaits += e.path().extension() == ".svg";
  CHECK(gaits == 15);
  CHECK(fs::exists(dir / "gaits" / "case_02_d0,0_r1.svg"));
  CHECK(readText(dir / "gaits" / "case_02_d0,0_r1.svg").find("3D, seen from") != std::string::npos);
}

TEST_CASE("evoc train --lanes: the batch in lanes trains as one episode per call does",
          "[run][train][lanes]") {
  // 20 episodes: a group of 16 in lanes and 4 alone, against 20 alone.
  auto args = [](const fs::path &dir, const char *lanes) {
    return withSets({"train", std::string(EVOC_SOURCE_DIR) + "/examples/multitask_alpaca.evo",
                     "--out", dir.string(), "--threads", "2", "--lanes", lanes},
                    {"train.learn.iterations=2", "train.learn.batch=20", "train.validate_every=2"});
  };
  fs::path wide = freshDir("train-lanes-16"), one = freshDir("train-lanes-1");
  REQUIRE(runEvoc(args(wide, "16")) == 0);
  REQUIRE(runEvoc(args(one, "1")) == 0);
  auto a = logOf(wide), b = logOf(one);
  REQUIRE(a.size() == 2);
  REQUIRE(b.size() == 2);
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("iteration " << i);
    const double x = a[i]["loss"], y = b[i]["loss"];
    CHECK(std::fabs(x - y) <= 1e-9 * std::fabs(y));
    const double gx = a[i]["grad_norm"], gy = b[i]["grad_norm"];
    CHECK(std::fabs(gx - gy) <= 1e-9 * std::fabs(gy));
  }
  CHECK(runEvoc({"train", std::string(EVOC_SOURCE_DIR) + "/examples/multitask_alpaca.evo", "--out",
                 freshDir("train-lanes-bad").string(), "--lanes", "0"}) == 2);
}
