// Scratch directories and the fake trainer for the evolution tests.
#include "TestSupport.h"

#include "evolve/record/RunDir.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>
#include <unistd.h>

namespace evoc::evolve::test {

namespace {
// Removes this process's scratch directories at exit (a forked child leaves
// with _exit and removes nothing); EVOC_KEEP_TEST_DIRS=1 keeps them.
struct ScratchCleanup {
  std::vector<std::filesystem::path> dirs;
  ~ScratchCleanup() {
    if (std::getenv("EVOC_KEEP_TEST_DIRS"))
      return;
    std::error_code ec;
    for (const auto &d : dirs)
      std::filesystem::remove_all(d, ec);
  }
};
ScratchCleanup cleanup;
} // namespace

std::filesystem::path scratchDir(const std::string &name) {
  auto p = std::filesystem::temp_directory_path() /
           fmt::format("evoc-evolve-test-{}-{}", ::getpid(), name);
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  cleanup.dirs.push_back(p);
  return p;
}

EvaluateFn fakeEvaluate(int sleepMs) {
  return [sleepMs](const EvalBatch &batch) {
    if (sleepMs > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(sleepMs));
    std::vector<Evaluation> out;
    for (size_t i = 0; i < batch.robots.size(); ++i) {
      const auto &r = batch.robots[i];
      int act = 0;
      for (const auto &s : r.springs)
        act += s.actuation != 0;
      Evaluation e;
      for (int k = 1; k <= 5; ++k)
        e.losses.push_back(-act / 100.0 * (1 - std::pow(0.5, k)));
      for (int k = 1; k <= 5; ++k)
        e.gradNorms.push_back(1.0 + 0.1 * k * (act % 3));
      if (r.numPoints() % 7 == 0)
        e.losses[2] = std::nan("");
      e.params = {{"w", {double(batch.seeds[i] % 1000), double(r.numSprings())}}};
      out.push_back(std::move(e));
    }
    return out;
  };
}

EvolutionConfig smallConfig(int population, int generations, uint64_t seed) {
  EvolutionConfig c;
  c.population = population;
  c.generations = generations;
  c.seed = seed;
  c.body = std::make_shared<LatticeModel>(LatticeSpec{6, 10});
  c.fitness.invalid = {{InvalidRule::Kind::LossAbove, 5.5}, {InvalidRule::Kind::LossJump, 0.5}};
  c.robotStepsPerDesign = 35 * 1000;
  return c;
}

EvolutionConfig mapElitesConfig(int population, int generations, uint64_t seed, double widthHi) {
  EvolutionConfig c = smallConfig(population, generations, seed);
  c.selection.kind = SelectionSpec::Kind::MapElites;
  c.selection.descriptors = {{Descriptor::Kind::Actuators, "", 0, 30, 6},
                             {Descriptor::Kind::Width, "", 0, widthHi, 4}};
  return c;
}

RunOptions quiet(const std::filesystem::path &dir, bool resume) {
  RunOptions o;
  o.dir = dir;
  o.resume = resume;
  o.progress = nullptr;
  o.resolvedSource = kTestSource;
  return o;
}

std::vector<std::string> logWithoutTiming(const std::filesystem::path &dir) {
  std::vector<std::string> out;
  for (auto rec : RunDir::open(dir).readLog()) {
    for (const auto &f : kTimingFields)
      rec.erase(f);
    out.push_back(rec.dump());
  }
  return out;
}

nlohmann::json readJson(const std::filesystem::path &p) {
  return nlohmann::json::parse(readTextFile(p));
}

} // namespace evoc::evolve::test
