// Grids, stencils and particle bodies (docs/language.md, "Grids and
// particles"; docs/mpm.md): DiffTaichi's diffmpm (examples/diffmpm.evo)
// against the independent reference (tests/reference/mpm_reference.py, its
// values in tests/data/reference_mpm), the interpreter against the CPU back
// end, the gradient against central differences, and a particle that leaves
// its grid. The matrices MPM uses are tested alone in MatrixTest.cpp.
#include "Close.h"
#include "FixedBody.h"
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "app/BodyModels.h"
#include "app/Pipeline.h"
#include "codegen/Executable.h"
#include "core/Population.h"
#include "core/Rollout.h"
#include "evolve/engine/EvoRng.h"

using namespace evoc;
using namespace evoc::runtime;
namespace fs = std::filesystem;

namespace {

nlohmann::json readJson(const std::string &rel) {
  std::ifstream in(std::string(EVOC_SOURCE_DIR) + "/" + rel);
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

/// w1 [4 x 4] and b1 [4] of a reference file's {"w1": [[...]], "b1": [...]}.
ParamSet paramsOf(const nlohmann::json &j) {
  ParamSet p;
  ParamTensor w{{4, 4}, {}};
  for (const auto &row : j.at("w1"))
    for (double v : row)
      w.data.push_back(v);
  p["w1"] = w;
  p["b1"] = ParamTensor{{4}, j.at("b1").get<std::vector<double>>()};
  return p;
}

std::vector<double> flat(const ParamSet &p) {
  std::vector<double> v = p.at("w1").data;
  for (double x : p.at("b1").data)
    v.push_back(x);
  return v;
}

using Result = test::FixedResult;

Result simulate(const app::CompiledFile &c, const codegen::Executable &exe, const ParamSet &params,
                bool backward = true) {
  return test::simulateFixed(c, exe, params, backward);
}

app::CompiledFile diffmpm(int64_t steps, const std::string &grid = "") {
  std::vector<std::pair<std::string, std::string>> o = {{"world.steps", std::to_string(steps)}};
  if (!grid.empty())
    o.push_back({"world.grid", grid});
  return app::compileFile(std::string(EVOC_SOURCE_DIR) + "/examples/diffmpm.evo", o);
}

/// Loss within 1e-9 and every gradient entry within 1e-7 of the largest.
void checkAgainst(const Result &r, const nlohmann::json &ref) {
  REQUIRE(r.valid);
  CHECK(test::close(r.loss, ref.at("loss").get<double>(), 1e-9, 1e-12));
  test::Gap gap;
  test::widen(gap, flat(paramsOf(ref.at("grad"))), flat(r.grad));
  INFO("worst gradient gap " << gap.worst << " of " << gap.scale);
  CHECK(gap.scale > 0);
  CHECK(gap.within(1e-7, 0));
}

} // namespace

TEST_CASE("diffmpm equals the independent MLS-MPM reference (CPU, interpreter)",
          "[mpm][reference]") {
  const ParamSet params = paramsOf(readJson("tests/data/reference_mpm/params_seed1.json"));
  for (int64_t T : {64, 256, 1024}) {
    INFO("T = " << T);
    app::CompiledFile c = diffmpm(T);
    auto cpu = codegen::compile(c.module, codegen::BackendKind::Cpu);
    const nlohmann::json ref =
        readJson("tests/data/reference_mpm/diffmpm_T" + std::to_string(T) + ".json");
    REQUIRE(ref.at("particles").get<int>() == 2976);
    checkAgainst(simulate(c, *cpu, params), ref);
    if (T != 256) { // the interpreter at the shortest and the longest
      auto interp = codegen::compile(c.module, codegen::BackendKind::Interp);
      checkAgainst(simulate(c, *interp, params), ref);
    }
  }
}

TEST_CASE("diffmpm's gradient equals central differences", "[mpm][gradcheck]") {
  app::CompiledFile c = diffmpm(256);
  auto cpu = codegen::compile(c.module, codegen::BackendKind::Cpu);
  const ParamSet params = paramsOf(readJson("tests/data/reference_mpm/params_seed1.json"));
  const Result r = simulate(c, *cpu, params);
  REQUIRE(r.valid);
  const std::vector<double> g = flat(r.grad);
  double scale = 0;
  for (double x : g)
    scale = std::max(scale, std::abs(x));
  const double h = 1e-6;
  // Entries of w1 (row-major) and of b1 (after w1's 16).
  for (int k : {0, 5, 10, 15, 16, 19}) {
    INFO("parameter " << k);
    auto shifted = [&](double d) {
      ParamSet p = params;
      if (k < 16)
        p["w1"].data[size_t(k)] += d;
      else
        p["b1"].data[size_t(k - 16)] += d;
      return simulate(c, *cpu, p, false).loss;
    };
    const double fd = (shifted(h) - shifted(-h)) / (2 * h);
    CHECK(std::abs(fd - g[size_t(k)]) <= 1e-6 * scale);
  }
}

TEST_CASE("robot_mpm_1 on the moving window equals the reference", "[mpm][reference]") {
  // Fang et al.'s MPM physics (stdlib/physics/mpm_window.evo: the window
  // following particle 0, mu = lambda = 40, gravity -10) and robot
  // (stdlib/bodies/fang_mpm.evo) under diffmpm's open-loop controller,
  // against tests/reference/mpm_fang_reference.py: loss to 1e-9, gradients to
  // 1e-7 of the largest entry, CPU and interpreter. The robot walks about
  // 0.1 to the right in 1000 steps, so the window moves by 4 nodes.
  const ParamSet params =
      paramsOf(readJson("tests/data/reference_mpm_fang/params_open_loop_seed1.json"));
  for (int64_t T : {64, 1000}) {
    INFO("T = " << T);
    app::CompiledFile c = app::compileFile(std::string(EVOC_SOURCE_DIR) +
                                               "/tests/data/reference_mpm_fang/open_loop.evo",
                                           {{"world.steps", std::to_string(T)}});
    const nlohmann::json ref =
        readJson("tests/data/reference_mpm_fang/open_loop_T" + std::to_string(T) + ".json");
    REQUIRE(ref.at("particles").get<int>() == 320);
    for (auto kind : {codegen::BackendKind::Cpu, codegen::BackendKind::Interp}) {
      auto exe = codegen::compile(c.module, kind);
      checkAgainst(simulate(c, *exe, params), ref);
    }
  }
}

TEST_CASE("a particle outside the moving window ends the rollout, named", "[mpm]") {
  // The window is 40 nodes of 1/40 from 5 nodes left of particle 0: a block
  // 1.0 to its right lies outside it from the first step.
  app::CompiledFile c = test::compileText("window.evo", R"(
import "physics/mpm_window.evo";
world { dim = 2; dt = 0.001; steps = 8; gravity = -10; physics = mls_mpm_window;
        grid = grid(nodes = (40, 40), dx = 1 / 40); }
body particles Apart { origin = (0.5, 0.1); blocks = [(0, 0, 0.05, 0.05, 0), (1, 0, 0.05, 0.05, -1)]; }
controller c { inputs = sin_waves(2, omega = 20); outputs = actuator.act tanh; }
loss l = mean(point.x[T].x);
)");
  auto exe = codegen::compile(c.module, codegen::BackendKind::Cpu);
  const Result r = simulate(c, *exe, {});
  CHECK_FALSE(r.valid);
  INFO(r.error);
  CHECK(r.error.find("of point 16 is NaN or infinite at t = 1") != std::string::npos);
}

TEST_CASE("a particle whose stencil leaves the grid ends the rollout, named", "[mpm]") {
  // diffmpm's body reaches x = 0.41, node 52 of 128 per unit: a 40-node grid
  // of the same spacing ends at 0.3.
  app::CompiledFile c = diffmpm(16, "grid(nodes = (40, 40), dx = 1 / 128)");
  for (auto kind : {codegen::BackendKind::Cpu, codegen::BackendKind::Interp}) {
    auto exe = codegen::compile(c.module, kind);
    const Result r = simulate(c, *exe, {});
    CHECK_FALSE(r.valid);
    INFO(r.error);
    CHECK(r.error.find("the state 'point.") != std::string::npos);
    CHECK(r.error.find("of point ") != std::string::npos);
    CHECK(r.error.find("NaN or infinite at t = 1") != std::string::npos);
  }
}

namespace {

/// The quadratic B-spline of a distance d in grid spacings, and its slope.
double bspline(double d) {
  d = std::abs(d);
  return d < 0.5 ? 0.75 - d * d : d < 1.5 ? 0.5 * (1.5 - d) * (1.5 - d) : 0.0;
}
double bsplineSlope(double d) {
  const double a = std::abs(d), s = d < 0 ? -1.0 : 1.0;
  return a < 0.5 ? -2 * d : a < 1.5 ? -(1.5 - a) * s : 0.0;
}

} // namespace

TEST_CASE("grid contact equals the sum over all pairs of points", "[mpm][contact]") {
  // Two overlapping blocks of particles; after one step from rest each
  // point's velocity is dt (k f_i + g), f_i = -sum_j grad_i K(x_i, x_j) with
  // K(a, b) = sum over nodes of w(a, node) w(b, node), here summed over
  // every pair and every node with the kernel written as a function of
  // distance (the physics writes it per stencil offset).
  fs::path dir = fs::temp_directory_path() / "evoc-mpm";
  fs::create_directories(dir);
  std::ofstream(dir / "contact.evo") << R"(import "physics/grid_contact.evo";
world { dim = 2; dt = 0.001; steps = 2; gravity = -9.8;
        grid = grid(nodes = (32, 32), dx = 1 / 32); }
body particles Two { origin = (0.2, 0.3); blocks = [(0, 0, 0.1, 0.1, -1), (0.05, 0.04, 0.1, 0.1, -1)]; }
loss height = mean(point.x[T].y);
)";
  app::CompiledFile c = app::compileFile((dir / "contact.evo").string());
  const double dt = 0.001, k = 0.2, dx = 1.0 / 32;
  ModuleInfo info(c.module);
  evolve::EvoRng rng(1);
  auto model = app::bodyModel(c.program);
  const Robot body = model->express(*model->sample(rng)).robot;
  const int n = body.numPoints();
  REQUIRE(n == 2 * 6 * 6);
  // Brute force over all pairs and all nodes.
  std::vector<double> want(size_t(2 * n));
  const double *x = body.points.data();
  for (int i = 0; i < n; ++i) {
    double f[2] = {0, 0};
    const double xi = x[2 * i] / dx, yi = x[2 * i + 1] / dx;
    for (int j = 0; j < n; ++j) {
      const double xj = x[2 * j] / dx, yj = x[2 * j + 1] / dx;
      for (int a = 0; a < 32; ++a)
        for (int b = 0; b < 32; ++b) {
          const double wj = bspline(xj - a) * bspline(yj - b);
          f[0] -= bsplineSlope(xi - a) * bspline(yi - b) * wj / dx;
          f[1] -= bspline(xi - a) * bsplineSlope(yi - b) * wj / dx;
        }
    }
    want[size_t(2 * i)] = dt * k * f[0];
    want[size_t(2 * i + 1)] = dt * (k * f[1] - 9.8);
  }
  double sideways = 0; // the push along x: the blocks overlap, so it is not negligible
  for (int i = 0; i < n; ++i)
    sideways = std::max(sideways, std::abs(want[size_t(2 * i)]));
  CHECK(sideways > 1e-3);
  for (auto kind : {codegen::BackendKind::Cpu, codegen::BackendKind::Interp}) {
    auto exe = codegen::compile(c.module, kind);
    Population pop(info, {body});
    RolloutConfig rc;
    rc.steps = 2;
    rc.upAxis = 1;
    Rollout r(info, *exe);
    auto v = r.trajectory(pop, 0, rc, "point.v", {1});
    REQUIRE(v.size() == 1);
    test::Gap gap;
    test::widen(gap, want, v[0]);
    INFO("worst " << gap.worst << " of " << gap.scale);
    CHECK(gap.within(1e-12, 1e-15));
  }
}

TEST_CASE("a 3D stencil: scatter to 3 x 3 x 3 nodes and gather back equal the sum over pairs",
          "[mpm][grid3d]") {
  // Each particle spreads weight w(x, node) (quadratic B-spline per axis)
  // over its 27 nodes; then gathers K_i = sum over nodes of w(x_i, node)
  // times the nodes' sum, which is sum_j K(x_i, x_j) with K(a, b) = sum
  // over all nodes of w(a, node) w(b, node): here computed over every pair
  // and every node of the grid. Its gradient in the particles' positions
  // (a param offset) against central differences.
  app::CompiledFile c = test::compileText("stencil3d.evo", R"(
world { dim = 3; dt = 0.01; steps = 2; physics = density3;
        grid = grid(nodes = (8, 8, 8), dx = 1 / 8); }
body particles Pair { origin = (0.3, 0.31, 0.33); spacing = 0.05; blocks = [(0, 0, 0, 0.1, 0.1, 0.1, -1), (0.07, 0.02, 0.04, 0.1, 0.05, 0.1, -1)]; }
fn w1(o: scalar, fx: scalar) -> scalar {
  return if o == 0 then 0.5 * (1.5 - fx) * (1.5 - fx)
      else if o == 1 then 0.75 - (fx - 1) * (fx - 1)
      else 0.5 * (fx - 0.5) * (fx - 0.5);
}
fn w3(o: vec3, fx: vec3) -> scalar { return w1(o.x, fx.x) * w1(o.y, fx.y) * w1(o.z, fx.z); }
physics density3 {
  set point {
    state x: vec3;
    state k: scalar;
    param shift: vec3;
  }
  set node: grid { temp w: scalar; }
  step {
    for p in point {
      let X = (p.x + p.shift) / world.grid.dx;
      let base = floor(X - vec3(0.5, 0.5, 0.5));
      for n in stencil(node, base, 3) { n.w += w3(n.offset, X - base); }
    }
    for p in point {
      let X = (p.x + p.shift) / world.grid.dx;
      let base = floor(X - vec3(0.5, 0.5, 0.5));
      p.k = sum(n in stencil(node, base, 3): w3(n.offset, X - base) * n.w);
      p.x = p.x;
    }
  }
}
loss l = sum(point.k[T] * point.k[T]);
)");
  ModuleInfo info(c.module);
  evolve::EvoRng rng(1);
  auto model = app::bodyModel(c.program);
  const Robot body = model->express(*model->sample(rng)).robot;
  const int n = body.numPoints();
  REQUIRE(n == 8 + 4);
  auto weight = [](const double *x, int a, int b, int d) {
    const double X[3] = {x[0] * 8, x[1] * 8, x[2] * 8};
    return bspline(X[0] - a) * bspline(X[1] - b) * bspline(X[2] - d);
  };
  // With every shift zero: K_i over all pairs and all 512 nodes.
  std::vector<double> want(size_t(n), 0.0);
  const double *x = body.points.data();
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int a = 0; a < 8; ++a)
        for (int b = 0; b < 8; ++b)
          for (int d = 0; d < 8; ++d)
            want[size_t(i)] += weight(x + 3 * i, a, b, d) * weight(x + 3 * j, a, b, d);
  ParamSet zero;
  zero["shift"] = ParamTensor{{n, 3}, std::vector<double>(size_t(3 * n), 0.0)};
  for (auto kind : {codegen::BackendKind::Cpu, codegen::BackendKind::Interp}) {
    auto exe = codegen::compile(c.module, kind);
    const std::vector<double> k = test::stateAt(c, *exe, zero, "point.k", 1);
    test::Gap gap;
    test::widen(gap, want, k);
    INFO("worst " << gap.worst << " of " << gap.scale);
    CHECK(gap.within(1e-13, 1e-15));
  }
  // The gradient in the shifts of three particles, against central differences.
  auto cpu = codegen::compile(c.module, codegen::BackendKind::Cpu);
  ParamSet p = zero;
  for (int i = 0; i < 3 * n; ++i)
    p["shift"].data[size_t(i)] = 0.004 * std::sin(1.7 * i);
  const Result r = simulate(c, *cpu, p);
  REQUIRE(r.valid);
  for (size_t e : {0, 4, 8, 20, 34}) {
    auto shifted = [&](double by) {
      ParamSet q = p;
      q["shift"].data[e] += by;
      return simulate(c, *cpu, q, false).loss;
    };
    const double fd = (shifted(1e-6) - shifted(-1e-6)) / 2e-6;
    INFO("shift entry " << e << ": adjoint " << r.grad.at("shift").data[e] << ", fd " << fd);
    CHECK(test::close(r.grad.at("shift").data[e], fd, 1e-6, 1e-8));
  }
}
