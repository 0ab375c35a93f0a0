#include "FixedBody.h"

#include <filesystem>
#include <fstream>

#include "app/BodyModels.h"
#include "core/Rollout.h"
#include "evolve/engine/EvoRng.h"

namespace evoc::test {

using namespace runtime;

namespace {

/// The file's fixed body (seed 1), its parameters drawn and initialised,
/// then set to `params` where given; `use` runs on it.
template <class F>
auto withBody(const app::CompiledFile &c, const codegen::Executable &exe, const ParamSet &params,
              F use) {
  ModuleInfo info(c.module);
  evolve::EvoRng rng(1);
  auto model = app::bodyModel(c.program);
  Population pop(info, {model->express(*model->sample(rng)).robot});
  pop.initParams(0, 1, 0);
  {
    Rollout init(info, exe);
    init.runInit(pop, 0);
  }
  if (!params.empty())
    pop.setParams(0, params);
  RolloutConfig rc;
  rc.steps = c.program.world.steps;
  rc.groundHeight = c.program.world.ground.height;
  rc.upAxis = c.program.world.dim - 1;
  rc.checkpointK = 32;
  Rollout r(info, exe);
  return use(pop, r, rc);
}

} // namespace

FixedResult simulateFixed(const app::CompiledFile &c, const codegen::Executable &exe,
                          const ParamSet &params, bool backward) {
  return withBody(c, exe, params, [&](Population &pop, Rollout &r, const RolloutConfig &rc) {
    RolloutOutcome out = r.run(pop, 0, rc, backward);
    FixedResult res;
    res.valid = out.valid;
    res.error = out.error;
    res.loss = out.loss;
    if (out.valid && backward)
      res.grad = pop.grads(0);
    return res;
  });
}

std::vector<double> stateAt(const app::CompiledFile &c, const codegen::Executable &exe,
                            const ParamSet &params, const std::string &field, int64_t t) {
  return withBody(c, exe, params, [&](Population &pop, Rollout &r, const RolloutConfig &rc) {
    auto v = r.trajectory(pop, 0, rc, field, {t});
    return v.empty() ? std::vector<double>{} : v[0];
  });
}

app::CompiledFile compileText(const std::string &name, const std::string &text) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / "evoc-fixed-body";
  fs::create_directories(dir);
  std::ofstream(dir / name) << text;
  return app::compileFile((dir / name).string());
}

} // namespace evoc::test
