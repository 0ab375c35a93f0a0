// GPU benchmark of the paper's workload (docs/evolution.md): a population of random
// 13x22-lattice ELDiR robots, T states, one forward + backward of the whole
// population with the fused CUDA rollout kernels, in f64 and f32. Prints
// robot-steps per second, the fraction of the GPU's FMA peak (measured in the
// same run) and one "RESULT" line per precision for bench/gpu/run.sh.
//
//   evoc_bench_gpu [--population P] [--steps T] [--precision f64|f32|both]
//                  [--iterations I] [--dump-robots FILE] [--seed S]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "BenchUtil.h"
#include "MassSpring.h"
#include "autodiff/Differentiate.h"
#include "codegen/cuda/CudaBackend.h"
#include "cuda/CudaRollout.h"
#include "evolve/bodies/Lattice.h"
#include "ir/Cost.h"
#include "opt/Passes.h"
#include "support/Error.h"
#include "support/OptionTable.h"

using namespace evoc;
using test::MassSpringIds;

namespace {

struct Args {
  int population = 1000, iterations = 1;
  int64_t steps = 1000;
  std::string precision = "both", dumpRobots;
  uint64_t seed = 1234;
};

Args parse(int argc, char **argv) {
  Args a;
  int64_t seed = int64_t(a.seed);
  OptionTable t("evoc_bench_gpu");
  t.integer("--population", 1, 10000000, a.population)
      .integer("--steps", 2, 100000000, a.steps)
      .text("--precision", a.precision)
      .integer("--iterations", 1, 1000000, a.iterations)
      .text("--dump-robots", a.dumpRobots)
      .integer("--seed", 0, INT64_MAX, seed);
  bool ok = t.parse(std::vector<std::string>(argv + 1, argv + argc));
  if (ok && a.precision != "f64" && a.precision != "f32" && a.precision != "both")
    ok = t.error("--precision takes f64, f32 or both, not '" + a.precision + "'");
  if (!ok) {
    std::fprintf(stderr, "usage: evoc_bench_gpu [--population P] [--steps T] "
                         "[--precision f64|f32|both] [--iterations I] [--dump-robots FILE] "
                         "[--seed S]\n");
    std::exit(2);
  }
  a.seed = uint64_t(seed);
  return a;
}

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Random repaired 13x22 lattice bodies (the paper's genotype space) with the
/// controller initialisation of ELDiR (Xavier-normal x2 / x3, zero biases).
std::vector<test::MassSpringRobot> robots(int n, uint64_t seed, const std::string &dump) {
  std::mt19937_64 wrng(seed);
  std::normal_distribution<double> gauss(0, 1);
  std::vector<test::MassSpringRobot> out;
  std::ofstream js;
  if (!dump.empty()) {
    js.open(dump);
    js << "[";
  }
  const std::vector<runtime::Robot> bodies = evolve::randomLatticeRobots(13, 22, n, seed);
  for (int i = 0; i < n; ++i) {
    const runtime::Robot &r = bodies[size_t(i)];
    test::MassSpringRobot m;
    m.nPoints = r.numPoints();
    m.nSprings = r.numSprings();
    m.x0 = r.points;
    m.v0.assign(m.x0.size(), 0.0);
    for (const runtime::Spring &s : r.springs) {
      m.a.push_back(s.a);
      m.b.push_back(s.b);
      m.rest.push_back(s.rest);
      m.stiff.push_back(s.stiffness);
      m.actu.push_back(s.actuation);
    }
    test::xavierWeights(m, wrng, gauss);
    m.b1.assign(32, 0.0);
    m.b2.assign(size_t(m.nSprings), 0.0);
    out.push_back(std::move(m));
    if (js.is_open()) { // bench/torch_baseline.py's format
      js << (i ? "," : "") << "{\"points\":[";
      for (int p = 0; p < r.numPoints(); ++p)
        js << (p ? "," : "") << "[" << r.points[2 * p] << "," << r.points[2 * p + 1] << "]";
      js << "],\"springs\":[";
      for (size_t s = 0; s < r.springs.size(); ++s) {
        const auto &q = r.springs[s];
        js << (s ? "," : "") << "[" << q.a << "," << q.b << "," << q.rest << "," << q.stiffness
           << "," << q.actuation << "]";
      }
      js << "]}";
    }
  }
  if (js.is_open())
    js << "]\n";
  return out;
}

/// Converts f64 host data to the module's precision.
std::vector<char> bytes(const std::vector<double> &v, bool f64) {
  std::vector<char> out(v.size() * (f64 ? 8 : 4));
  for (size_t i = 0; i < v.size(); ++i) {
    if (f64) {
      std::memcpy(out.data() + 8 * i, &v[i], 8);
    } else {
      float f = float(v[i]);
      std::memcpy(out.data() + 4 * i, &f, 4);
    }
  }
  return out;
}

void run(const Args &a, ir::Precision prec, const std::vector<test::MassSpringRobot> &rs) {
  const bool f64 = prec == ir::Precision::F64;
  const char *pname = f64 ? "f64" : "f32";
  MassSpringIds d;
  ir::Module m = test::makeMassSpringModule(d, prec, true);
  m.kernels.pop_back(); // the test-only adjoint-shapes kernel
  autodiff::differentiate(m);
  opt::runPasses(m);
  auto t0 = std::chrono::steady_clock::now();
  auto exe = codegen::cuda::compileCuda(m);
  double compileS = since(t0);

  const int P = int(rs.size());
  std::vector<int64_t> sizes;
  double flopsPerStep = 0; // forward + adjoint, summed over the population
  for (const auto &r : rs) {
    std::vector<int64_t> s(m.sets.size(), 0);
    s[d.point] = r.nPoints;
    s[d.spring] = r.nSprings;
    ir::deriveSetSizes(m, s.data());
    flopsPerStep += ir::kernelFlops(m, d.step, s.data()) +
                    ir::kernelFlops(m, m.findKernel("step.adj"), s.data());
    sizes.insert(sizes.end(), s.begin(), s.end());
  }
  auto upload = [&](cuda::CudaRollout &ro) {
    using Field = std::vector<double> test::MassSpringRobot::*;
    for (auto [b, f] : std::vector<std::pair<int, Field>>{{d.x, &test::MassSpringRobot::x0},
                                                          {d.v, &test::MassSpringRobot::v0},
                                                          {d.rest, &test::MassSpringRobot::rest},
                                                          {d.stiff, &test::MassSpringRobot::stiff},
                                                          {d.actu, &test::MassSpringRobot::actu},
                                                          {d.w1, &test::MassSpringRobot::w1},
                                                          {d.b1, &test::MassSpringRobot::b1},
                                                          {d.w2, &test::MassSpringRobot::w2},
                                                          {d.b2, &test::MassSpringRobot::b2}}) {
      std::vector<std::vector<char>> data;
      std::vector<const void *> host;
      for (const auto &q : rs)
        data.push_back(bytes(q.*f, f64));
      for (const auto &v : data)
        host.push_back(v.data());
      ro.uploadAll(b, host.data());
    }
    std::vector<const void *> a, bb;
    for (const auto &q : rs) {
      a.push_back(q.a.data());
      bb.push_back(q.b.data());
    }
    ro.uploadAll(d.sa, a.data());
    ro.uploadAll(d.sb, bb.data());
  };
  { // warm-up: module load, first launches, clocks
    cuda::CudaRollout warm(*exe, m, P, sizes.data(), 3);
    upload(warm);
    warm.forward();
    warm.backward();
  }
  cuda::CudaRollout ro(*exe, m, P, sizes.data(), a.steps);
  upload(ro);
  double fwd = 0, bwd = 0;
  for (int it = 0; it < a.iterations; ++it) {
    ro.zeroGradients();
    auto t1 = std::chrono::steady_clock::now();
    ro.forward();
    fwd += since(t1);
    auto t2 = std::chrono::steady_clock::now();
    ro.backward();
    bwd += since(t2);
  }
  int bad = 0;
  double lossSum = 0;
  for (int r = 0; r < P; ++r) {
    double l = 0;
    float lf = 0;
    if (f64)
      ro.download(d.loss, r, &l);
    else
      ro.download(d.loss, r, &lf), l = lf;
    if (std::isfinite(l))
      lossSum += l;
    else
      ++bad;
  }
  const double robotSteps = double(P) * double(a.steps - 1) * a.iterations;
  const double sec = fwd + bwd, rate = robotSteps / sec;
  double theo = 0;
  std::string dev;
  double peak = codegen::cuda::measurePeakFlops(prec, &theo, &dev);
  double achieved = flopsPerStep * double(a.steps - 1) * a.iterations / sec;
  std::printf("== %s on %s: %d robots (13x22 lattice), T = %lld, %d iteration(s)\n", pname,
              dev.c_str(), P, (long long)a.steps, a.iterations);
  std::printf("   compile %.2f s, device memory %.2f GB, mean loss %.6g, non-finite %d\n", compileS,
              ro.deviceBytes() / 1e9, lossSum / std::max(1, P - bad), bad);
  std::printf("   forward %.3f s, backward %.3f s: %.4g robot-steps/s (forward + backward)\n", fwd,
              bwd, rate);
  std::printf("   %.3g GFLOP/s = %.2f%% of the measured %s FMA peak (%.3g GFLOP/s; "
              "theoretical %.3g)\n",
              achieved / 1e9, 100 * achieved / peak, pname, peak / 1e9, theo / 1e9);
  std::printf("RESULT precision=%s robot_steps_per_s=%.6g fraction_of_peak=%.6g "
              "forward_s=%.6g backward_s=%.6g population=%d steps=%lld device=\"%s\"\n",
              pname, rate, achieved / peak, fwd, bwd, P, (long long)a.steps, dev.c_str());
  std::fflush(stdout);
}

} // namespace

int main(int argc, char **argv) {
  Args a = parse(argc, argv);
  try {
    std::string why;
    if (!codegen::cuda::cudaAvailable(&why)) {
      std::fprintf(stderr, "evoc_bench_gpu: %s\n", why.c_str());
      return 1;
    }
    auto rs = robots(a.population, a.seed, a.dumpRobots);
    if (a.precision == "f64" || a.precision == "both")
      run(a, ir::Precision::F64, rs);
    if (a.precision == "f32" || a.precision == "both")
      run(a, ir::Precision::F32, rs);
  } catch (const Error &e) {
    std::fprintf(stderr, "evoc_bench_gpu: %s\n", e.what());
    return 1;
  }
  return 0;
}
