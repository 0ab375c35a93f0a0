// Gradients with respect to the body (PipelineOptions::bodyGradients,
// docs/python.md): the adjoint kernels accumulate d loss / d each float body
// buffer (springs' rest, stiffness, actuation; the world objects' half sizes
// and masses), which Rollout::bodyAdjoints returns. Checked against central
// differences of the loss in each buffer, the CPU back end against the
// interpreter, and a module compiled without them left as it was.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "TestBodies.h"
#include "app/Pipeline.h"
#include "core/Population.h"
#include "core/Rollout.h"

using namespace evoc;
using namespace evoc::runtime;

namespace {

app::CompiledFile compiled(const std::string &file, bool bodyGradients) {
  app::PipelineOptions po;
  po.bodyGradients = bodyGradients;
  return app::compileFile(std::string(EVOC_SOURCE_DIR) + "/" + file, {{"world.steps", "80"}}, po);
}

int bodyAdjointCount(const ir::Module &m) {
  int n = 0;
  for (const ir::Buffer &b : m.buffers)
    n += b.role == ir::Role::Adjoint && m.buffers[size_t(b.primal)].role == ir::Role::Body;
  return n;
}

struct Outcome {
  double loss = 0;
  std::vector<double> grad;
  std::map<std::string, std::vector<double>> body;
};

// One forward and backward rollout of `robot` under weights drawn from seed 7.
Outcome rollout(const app::CompiledFile &c, codegen::BackendKind kind, const Robot &robot,
                const std::function<void(Population &)> &edit = {}) {
  ModuleInfo info(c.module);
  auto exe = codegen::compile(c.module, kind);
  Population pop(info, {robot});
  pop.initParams(0, 7, 0);
  Rollout ro(info, *exe);
  ro.runInit(pop, 0);
  if (edit)
    edit(pop);
  RolloutConfig rc;
  rc.steps = c.program.world.steps;
  rc.groundHeight = c.program.world.ground.height;
  const GroundShape shape = c.program.world.ground.shape();
  rc.terrain = shape.empty() ? nullptr : &shape;
  rc.upAxis = c.program.world.dim - 1;
  RolloutOutcome o = ro.run(pop, 0, rc, true);
  REQUIRE(o.valid);
  const double *g = reinterpret_cast<const double *>(pop.arena(0, Arena::Grad));
  return {o.loss, {g, g + pop.layout(0).paramCount}, ro.bodyAdjoints()};
}

double maxAbs(const std::vector<double> &v) {
  double m = 0;
  for (double x : v)
    m = std::max(m, std::abs(x));
  return m;
}

// Central differences of the loss in a few entries of each body buffer the
// module differentiates, against the CPU back end's adjoint.
// `kinks`: (field, entry) pairs left out of the differences, where the loss
// has a kink at the body's value.
void checkBodyGradients(const std::string &file, const Robot &robot, double h,
                        const std::vector<std::string> &fields,
                        const std::set<std::pair<std::string, size_t>> &kinks = {}) {
  app::CompiledFile plain = compiled(file, false), withBody = compiled(file, true);
  CHECK(bodyAdjointCount(plain.module) == 0);
  CHECK(bodyAdjointCount(withBody.module) >= int(fields.size()));

  const Outcome p = rollout(plain, codegen::BackendKind::Cpu, robot);
  const Outcome cpu = rollout(withBody, codegen::BackendKind::Cpu, robot);
  const Outcome interp = rollout(withBody, codegen::BackendKind::Interp, robot);
  CHECK(p.body.empty());
  CHECK(cpu.loss == p.loss); // the forward kernels are the same
  REQUIRE(cpu.grad.size() == p.grad.size());
  for (size_t i = 0; i < p.grad.size(); ++i)
    CHECK(std::abs(cpu.grad[i] - p.grad[i]) <= 1e-12 * maxAbs(p.grad));

  for (const std::string &field : fields) {
    INFO(file << ": " << field);
    REQUIRE(cpu.body.count(field) == 1);
    const std::vector<double> &g = cpu.body.at(field);
    const double scale = maxAbs(g);
    REQUIRE(scale > 0);
    const std::vector<double> &gi = interp.body.at(field);
    REQUIRE(gi.size() == g.size());
    for (size_t i = 0; i < g.size(); ++i)
      CHECK(std::abs(gi[i] - g[i]) <= 1e-10 * scale);
    const int b = withBody.module.findBuffer(field);
    REQUIRE(b >= 0);
    const size_t stride = std::max<size_t>(1, g.size() / 5);
    for (size_t i = 0; i < g.size(); i += stride) {
      if (kinks.count({field, i}))
        continue;
      double value = 0;
      auto shifted = [&](double by) {
        return rollout(withBody, codegen::BackendKind::Cpu, robot,
                       [&](Population &pop) {
                         double *v = reinterpret_cast<double *>(pop.buffer(0, b));
                         value = v[i];
                         v[i] += by * h * std::max(1.0, std::abs(v[i]));
                       })
            .loss;
      };
      const double lp = shifted(1), lm = shifted(-1);
      const double fd = (lp - lm) / (2 * h * std::max(1.0, std::abs(value)));
      INFO("entry " << i << ": difference " << fd << ", adjoint " << g[i]);
      CHECK(std::abs(fd - g[i]) <= 1e-5 * scale);
    }
  }
}

} // namespace

TEST_CASE("Body gradients: the springs' rest lengths, stiffness and actuation",
          "[bodygrad][gradcheck]") {
  checkBodyGradients("examples/eldir_small.evo", test::ladder(0.3, 0.1), 1e-6,
                     {"spring.rest", "spring.stiffness", "spring.actuation"});
}

TEST_CASE("Body gradients: the world objects' sizes and masses", "[bodygrad][gradcheck][objects]") {
  // h = 1e-7 as the objects' parameter check (TerrainTest): a larger step
  // moves a point across a box's diagonal, where the push changes axis.
  // The second box starts resting on the ground: its half height (entry 3)
  // moves its bottom face across the ground's surface, where the loss has a
  // kink (the difference averages the two sides; measured -0.99 against
  // the adjoint's one-sided -2.04).
  checkBodyGradients("tests/data/terrain/objects.evo", test::ladder(0.44, 0.0), 1e-7,
                     {"spring.rest", "object.half", "object.mass"}, {{"object.half", 3}});
}
