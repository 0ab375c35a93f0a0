// Hidden benchmark (run by hand: evoc_runtime_tests "[.bench]"): the ELDiR
// workload through simulate() on the CPU back end, checkpointed vs full
// tape, and the share of time spent inside kernels.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>

#include "EldirFixture.h"
#include "autodiff/Differentiate.h"
#include "core/JsonIO.h"
#include "core/Train.h"

using namespace evoc;
using namespace evoc::runtime;

namespace {

// Forwards to a back end and adds up the time spent in kernels.
class TimedExe final : public codegen::Executable {
public:
  explicit TimedExe(const codegen::Executable &e) : e_(e) {}
  void run(int k, void *const *b, const int64_t *s, int64_t t) const override {
    auto t0 = std::chrono::steady_clock::now();
    e_.run(k, b, s, t);
    ns_ +=
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
            .count();
  }
  double seconds() const { return double(ns_.load()) * 1e-9; }
  void reset() { ns_ = 0; }

private:
  const codegen::Executable &e_;
  mutable std::atomic<int64_t> ns_{0};
};

} // namespace

TEST_CASE("bench: ELDiR rollouts through simulate()", "[.bench]") {
  test::EldirOptions eo;
  eo.hidden = 32;
  ir::Module m = test::eldirModule(eo);
  test::setIrgenFields(m);
  autodiff::differentiate(m);
  auto exe = codegen::compile(m, codegen::BackendKind::Cpu);
  auto two = readRobotsFile(std::string(EVOC_SHARED_DIR) + "/testdata/eldir-vectors/robots.json");
  std::vector<Robot> robots;
  for (int i = 0; i < 32; ++i)
    robots.insert(robots.end(), two.begin(), two.end());
  for (int threads : {1, 2}) {
    for (bool full : {false, true}) {
      TimedExe timed(*exe);
      SimOptions o;
      o.steps = 1000;
      o.groundHeight = 0.1;
      o.threads = threads;
      o.fullTape = full;
      SimResult r = simulate(m, timed, robots, std::nullopt, o);
      std::printf("threads %d %-10s: %.3f s, %.0f robot-steps/s (fwd+bwd), kernels %.0f%% of "
                  "thread time, state memory %lld of %lld bytes\n",
                  threads, full ? "full tape" : "checkpoint", r.seconds, r.robotStepsPerSecond,
                  100.0 * timed.seconds() / (r.seconds * threads),
                  (long long)r.results[0].memory.stateStoreBytes,
                  (long long)r.results[0].memory.fullTapeBytes);
    }
  }
}
