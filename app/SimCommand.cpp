// `evoc sim FILE [--robots R.json] [--params P.json] [--steps T] [--iterations K]
// [--backend B] [--threads N] --out O.json`: the interface independent
// implementations check evoc against (issue 5). Without --robots the file's
// fixed body (`body cells`) is simulated. --robots also takes a run's
// best.json (with its trained weights) or a generation's population.json.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "app/BodyModels.h"
#include "app/Driver.h"
#include "app/Pipeline.h"
#include "app/Session.h"
#include "core/Device.h"
#include "core/JsonIO.h"
#include "core/Train.h"
#include "evolve/engine/EvoRng.h"
#include "support/Diagnostics.h"
#include "support/Error.h"
#include "support/OptionTable.h"
#include "support/SourceManager.h"

namespace evoc::app {

runtime::SimResult simulateRobots(const Session &s, const std::vector<runtime::Robot> &robots,
                                  const std::optional<std::vector<runtime::ParamSet>> &params,
                                  const runtime::SimOptions &so) {
  // The states the rollouts keep (checkpoints + one window, or every state
  // with --full-tape), refused before allocation when beyond the limit.
  {
    const double steps = double(std::max<int64_t>(so.steps - 1, 1));
    double k = so.checkpointK > 0 ? double(so.checkpointK) : std::round(std::sqrt(steps));
    k = so.fullTape ? steps : std::clamp(k, 1.0, steps);
    const double kept = std::ceil(steps / k) + k;
    double bytes = 0;
    for (const auto &rb : robots)
      bytes += double(rb.points.size()) * 2 * 8 * kept;
    constexpr double kLimit = 32.0 * (1ull << 30);
    if (bytes > kLimit)
      throw Error(fmt::format("these {} robots would need about {:.1f} GiB for their rollout "
                              "states ({:.0f} states kept each), above the limit of 32 GiB; "
                              "lower --steps, {} or simulate fewer robots",
                              robots.size(), bytes / double(1ull << 30), kept,
                              so.fullTape ? "drop --full-tape" : "raise world.checkpoint"));
  }
  runtime::ModuleInfo info(s.module());
  std::shared_ptr<runtime::TrainDevice> device = s.trainDevice(info, so.threads);
  device->check(so);
  return runtime::simulate(info, *device, robots, params, so);
}

namespace {

struct SimArgs {
  std::string robots, params, out, backend = "cpu";
  int64_t steps = 0;
  int64_t iterations = 0;
  int threads = 0;
  bool fullTape = false;
};

bool parseSimArgs(const std::vector<std::string> &rest, SimArgs &a) {
  OptionTable t("evoc sim");
  t.text("--robots", a.robots)
      .alias("--robot", "--robots")
      .text("--params", a.params)
      .text("--out", a.out)
      .text("--backend", a.backend)
      .flag("--full-tape", a.fullTape)
      .integer("--steps", 2, 100000000, a.steps)
      .integer("--iterations", 0, 1000000, a.iterations)
      .integer("--threads", 0, 4096, a.threads, " (0: one per core)");
  if (!t.parse(rest))
    return false;
  if (a.out.empty())
    return t.error("--out OUT.json is required");
  return true;
}

int runSim(const std::vector<std::string> &args) {
  CommonOptions opts;
  if (!parseCommonOptions(args, opts))
    return 2;
  SimArgs a;
  if (!parseSimArgs(opts.rest, a))
    return 2;
  try {
    Session s(opts, a.backend);
    if (!s.ok())
      return 1;
    const sema::CheckedProgram &p = s.program();
    runtime::SimOptions so = s.trainOptions();
    so.iterations = int(a.iterations);
    if (a.steps)
      so.steps = a.steps;
    so.threads = a.threads;
    so.fullTape = a.fullTape;
    // Without --robots, the file's fixed body (`body cells`) is the robot.
    std::vector<runtime::Robot> robots;
    std::optional<std::vector<runtime::ParamSet>> params;
    if (!a.robots.empty()) {
      // ROBOTS.json, a run's best.json or a generation's population.json
      // (whose members beyond the best 50 are genomes: expressed by the
      // experiment's body, which must be the run's).
      std::shared_ptr<const evolve::BodyModel> body; // made when first needed
      std::function<runtime::Robot(const nlohmann::json &)> express;
      if (p.hasBody)
        express = [&](const nlohmann::json &g) {
          if (!body)
            body = bodyModel(p);
          return body->express(*body->fromJson(g)).robot;
        };
      runtime::RobotsInput in = runtime::readRobotsInput(a.robots, p.world.dim, express);
      robots = std::move(in.robots);
      if (in.kind == "population")
        std::fprintf(stderr, "evoc sim: %s: the population's %zu members, in rank order\n",
                     a.robots.c_str(), robots.size());
      if (in.params && a.params.empty()) {
        params = std::move(in.params);
        std::fprintf(stderr,
                     "evoc sim: %s: using the trained weights it holds (\"params\"; "
                     "--params P.json gives others)\n",
                     a.robots.c_str());
      }
    } else if (p.cellBody) {
      auto body = bodyModel(p);
      evolve::EvoRng rng(p.evolve.seed);
      robots.push_back(body->express(*body->sample(rng)).robot);
    } else {
      throw Error("--robots ROBOTS.json is required unless the program's body is a fixed "
                  "one (`body cells NAME { ... }`; with several bodies, choose it with "
                  "evolve { body = NAME; })");
    }
    if (!a.params.empty())
      params = runtime::readParamsFile(a.params);
    runtime::SimResult r;
    try {
      r = simulateRobots(s, robots, params, so);
    } catch (const Error &e) {
      // A parameter set that does not fit its robot: name the file it came from.
      std::string m = e.what();
      if (params && (m.find("the parameters") != std::string::npos ||
                     m.find(", field '") != std::string::npos))
        throw Error((a.params.empty() ? a.robots : a.params) + ": " + m);
      throw;
    }
    runtime::writeJsonFile(a.out, runtime::simResultToJson(r));
    int invalid = 0;
    for (size_t i = 0; i < r.results.size(); ++i)
      if (!r.results[i].valid) {
        // The runtime's reason names the robot already ("robot 3: ...").
        const std::string &why = r.results[i].error;
        if (why.rfind("robot ", 0) == 0)
          std::fprintf(stderr, "evoc sim: warning: %s\n", why.c_str());
        else
          std::fprintf(stderr, "evoc sim: warning: robot %zu: %s\n", i, why.c_str());
        ++invalid;
      }
    std::fprintf(stderr, "evoc sim: %zu robots, %lld steps, %.3f s, %.0f robot-steps/s -> %s\n",
                 robots.size(), (long long)so.steps, r.seconds, r.robotStepsPerSecond,
                 a.out.c_str());
    return invalid ? 1 : 0;
  } catch (const Error &e) {
    std::fprintf(stderr, "evoc sim: error: %s\n", e.what());
    return 1;
  }
}

[[maybe_unused]] bool registered = addSubcommand(
    {"sim", "run robots from JSON through the experiment's rollout; write loss and gradients",
     runSim,
     "sim FILE.evo [--robots R.json] [--params P.json] [--steps T] [--iterations K]\n"
     "                [--backend B] [--threads N] [--full-tape] --out OUT.json [options]\n"
     "  --robots R.json    the robots: ROBOTS.json ({\"robots\": [...]}), one robot (a run's\n"
     "                     best.json, evoc train's robot.json) or a generation's\n"
     "                     population.json (its population in rank order); without it,\n"
     "                     the file's fixed body\n"
     "  --params P.json    the controllers' weights (PARAMS.json); without it, best.json's\n"
     "                     own \"params\", else weights drawn from the seed\n"
     "  --steps T          states per rollout (default: world.steps)\n"
     "  --iterations K     train K iterations and write the learning curve (default 0: one\n"
     "                     forward and backward pass)\n"
     "  --backend B        cpu (default), interp or cuda\n"
     "  --threads N        worker threads (0: one per core)\n"
     "  --full-tape        keep every state instead of checkpoints\n"
     "  --out OUT.json     where the losses and gradients go (required)"});

} // namespace
} // namespace evoc::app
