// A bounded fuzz run of the run-directory reader: mutated copies of a real
// run's state.json, log.jsonl and run.json (byte edits, and edits of the JSON
// tree: values of every type and size put anywhere, members dropped,
// duplicated or swapped, log lines reordered) are given to every reader
// entry point (RunDir::isRun, open, readState, readLog, and a resume through
// runEvolution, which then runs the generations left from what it accepted).
// Each must succeed or throw evoc::Error: any other exception fails the
// test, a crash or abort kills it. EVOC_FUZZ_SECONDS (default 3) bounds the
// time, EVOC_FUZZ_SEED (default 1) picks the inputs.
#include "Fuzz.h"
#include "TestSupport.h"

#include "RunDirMutator.h"
#include "evolve/engine/Evolution.h"
#include "evolve/record/RunDir.h"
#include "support/Error.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <random>

using namespace evoc::evolve;
using namespace evoc::evolve::test;
namespace fs = std::filesystem;

TEST_CASE("fuzz: mutated run directories are read or refused with evoc::Error, never crash",
          "[fuzz][resume]") {
  const auto [seconds, seed] = evoc::test::fuzzBudget(3);
  std::mt19937_64 rng(seed);

  auto root = scratchDir("rundir-fuzz");
  const fs::path good = root / "good", work = root / "work";
  const EvolutionConfig config = smallConfig(4, 3);
  runEvolution(config, fakeEvaluate(), quiet(good));
  RunFiles files = RunFiles::read(good);
  fs::copy(good, work, fs::copy_options::recursive);

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  long tried = 0, accepted = 0, resumed = 0;
  while (std::chrono::duration<double>(Clock::now() - start).count() < seconds) {
    RunFiles input = mutateRunFiles(files, rng);
    input.write(work);
    ++tried;
    INFO("input " << tried << ":\n" << input.describe());
    // Reads only.
    (void)RunDir::isRun(work);
    try {
      RunDir dir = RunDir::open(work);
      if (dir.hasState())
        (void)dir.readState();
      (void)dir.readLog();
      ++accepted;
    } catch (const evoc::Error &) {
    } catch (const std::exception &e) {
      FAIL("a reader threw " << typeid(e).name() << ": " << e.what());
    }
    // The resume: its checks, then whatever generations are left.
    try {
      runEvolution(config, fakeEvaluate(), quiet(work, /*resume=*/true));
      ++resumed;
    } catch (const evoc::Error &) {
    } catch (const std::exception &e) {
      FAIL("the resume threw " << typeid(e).name() << ": " << e.what());
    }
  }
  WARN("run-directory fuzz: " << tried << " inputs in " << seconds << " s (" << accepted
                              << " read, " << resumed << " resumed)");
  CHECK(tried > 0);
  // The unmutated run is still read and resumed.
  files.write(work);
  CHECK_NOTHROW(runEvolution(config, fakeEvaluate(), quiet(work, true)));
}
