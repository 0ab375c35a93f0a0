// Which SIMD dimension for the CPU back end: vectorising inside one robot
// (what the LLVM back end does) or across robots (8 robots in the 8 lanes
// of an AVX-512 vector)? Times the two kernels that dominate a step, the
// spring gather/scatter and the controller's matrix-vector product, in both
// layouts on 8 robots of the paper's size (13x22 lattice: ~120 points,
// ~300 springs, 32 hidden units, 12 + 4 * 120 inputs).
//
//   evoc_simd_layout_bench
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <immintrin.h>
#include <random>
#include <vector>

#include "BenchUtil.h"

namespace {

constexpr int kLanes = 8, kUnits = 32;

struct Robot {
  int nP, nS;
  std::vector<int> a, b;
  std::vector<double> x, rest, stiff, act, vinc, w, in, out;
};

// One robot, springs in order: the code LLVM generates for the scatter loop.
__attribute__((noinline)) void springsScalar(Robot &r) {
  const double dt = 0.004;
  for (int s = 0; s < r.nS; ++s) {
    int a = r.a[s], b = r.b[s];
    double dx = r.x[2 * a] - r.x[2 * b], dy = r.x[2 * a + 1] - r.x[2 * b + 1];
    double len = std::sqrt(dx * dx + dy * dy) + 1e-4;
    double target = r.rest[s] * (1 + 0.1 * r.act[s]);
    double k = dt * (len - target) * r.stiff[s] / len;
    r.vinc[2 * a] -= k * dx;
    r.vinc[2 * a + 1] -= k * dy;
    r.vinc[2 * b] += k * dx;
    r.vinc[2 * b + 1] += k * dy;
  }
}

// Eight robots in the lanes: element e of robot l at [e * 8 + l]; springs
// padded to the largest robot with zero-stiffness springs (a = b = 0).
struct Packed {
  int maxS, maxP;
  std::vector<int> a, b; // [s * 8 + l]
  std::vector<double> x, rest, stiff, act, vinc;
};

__attribute__((target("avx512f"), noinline)) void springsLanes(Packed &p) {
  const __m512d dt = _mm512_set1_pd(0.004), eps = _mm512_set1_pd(1e-4), one = _mm512_set1_pd(1),
                tenth = _mm512_set1_pd(0.1);
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (int s = 0; s < p.maxS; ++s) {
    __m256i a = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(&p.a[s * 8]));
    __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(&p.b[s * 8]));
    // index of (point, comp) in lane l: (point * 2 + comp) * 8 + l
    __m256i ax = _mm256_add_epi32(_mm256_slli_epi32(a, 4), lane);
    __m256i ay = _mm256_add_epi32(ax, _mm256_set1_epi32(8));
    __m256i bx = _mm256_add_epi32(_mm256_slli_epi32(b, 4), lane);
    __m256i by = _mm256_add_epi32(bx, _mm256_set1_epi32(8));
    __m512d dx = _mm512_sub_pd(_mm512_i32gather_pd(ax, p.x.data(), 8),
                               _mm512_i32gather_pd(bx, p.x.data(), 8));
    __m512d dy = _mm512_sub_pd(_mm512_i32gather_pd(ay, p.x.data(), 8),
                               _mm512_i32gather_pd(by, p.x.data(), 8));
    __m512d len =
        _mm512_add_pd(_mm512_sqrt_pd(_mm512_fmadd_pd(dx, dx, _mm512_mul_pd(dy, dy))), eps);
    __m512d target = _mm512_mul_pd(_mm512_loadu_pd(&p.rest[s * 8]),
                                   _mm512_fmadd_pd(tenth, _mm512_loadu_pd(&p.act[s * 8]), one));
    __m512d k = _mm512_div_pd(_mm512_mul_pd(_mm512_mul_pd(dt, _mm512_sub_pd(len, target)),
                                            _mm512_loadu_pd(&p.stiff[s * 8])),
                              len);
    __m512d ix = _mm512_mul_pd(k, dx), iy = _mm512_mul_pd(k, dy);
    // Lanes never collide (each lane is its own robot), so gather-add-scatter is exact.
    double *v = p.vinc.data();
    _mm512_i32scatter_pd(v, ax, _mm512_sub_pd(_mm512_i32gather_pd(ax, v, 8), ix), 8);
    _mm512_i32scatter_pd(v, ay, _mm512_sub_pd(_mm512_i32gather_pd(ay, v, 8), iy), 8);
    _mm512_i32scatter_pd(v, bx, _mm512_add_pd(_mm512_i32gather_pd(bx, v, 8), ix), 8);
    _mm512_i32scatter_pd(v, by, _mm512_add_pd(_mm512_i32gather_pd(by, v, 8), iy), 8);
  }
}

// out = W in, one robot (the vectorised reduction over inputs LLVM emits).
__attribute__((target("avx512f"), noinline)) void matvecScalarRobot(Robot &r, int nin) {
  for (int u = 0; u < kUnits; ++u) {
    __m512d acc[4] = {_mm512_setzero_pd(), _mm512_setzero_pd(), _mm512_setzero_pd(),
                      _mm512_setzero_pd()};
    const double *w = &r.w[size_t(u) * nin];
    int i = 0;
    for (; i + 32 <= nin; i += 32)
#pragma GCC unroll 4 // keeps the accumulators in registers
      for (int j = 0; j < 4; ++j)
        acc[j] = _mm512_fmadd_pd(_mm512_loadu_pd(w + i + 8 * j), _mm512_loadu_pd(&r.in[i + 8 * j]),
                                 acc[j]);
    double s = _mm512_reduce_add_pd(
        _mm512_add_pd(_mm512_add_pd(acc[0], acc[1]), _mm512_add_pd(acc[2], acc[3])));
    for (; i < nin; ++i)
      s += w[i] * r.in[i];
    r.out[u] = s;
  }
}

// out = W in for 8 robots, lanes = robots: W[(u * nin + i) * 8 + l].
__attribute__((target("avx512f"), noinline)) void matvecLanes(const std::vector<double> &w,
                                                              const std::vector<double> &in,
                                                              std::vector<double> &out, int nin) {
  for (int u = 0; u < kUnits; ++u) {
    __m512d acc[4] = {_mm512_setzero_pd(), _mm512_setzero_pd(), _mm512_setzero_pd(),
                      _mm512_setzero_pd()};
    const double *wu = &w[size_t(u) * nin * 8];
    int i = 0;
    for (; i + 4 <= nin; i += 4)
#pragma GCC unroll 4
      for (int j = 0; j < 4; ++j)
        acc[j] = _mm512_fmadd_pd(_mm512_loadu_pd(wu + (i + j) * 8),
                                 _mm512_loadu_pd(&in[size_t(i + j) * 8]), acc[j]);
    for (; i < nin; ++i)
      acc[0] =
          _mm512_fmadd_pd(_mm512_loadu_pd(wu + i * 8), _mm512_loadu_pd(&in[size_t(i) * 8]), acc[0]);
    _mm512_storeu_pd(&out[size_t(u) * 8],
                     _mm512_add_pd(_mm512_add_pd(acc[0], acc[1]), _mm512_add_pd(acc[2], acc[3])));
  }
}

template <class F> double cpuTime(int reps, F f) {
  double best = 1e30;
  for (int k = 0; k < 5; ++k) {
    double c0 = evoc::bench::threadCpuSeconds();
    for (int i = 0; i < reps; ++i)
      f();
    best = std::min(best, (evoc::bench::threadCpuSeconds() - c0) / reps);
  }
  return best;
}

} // namespace

int main() {
  if (!__builtin_cpu_supports("avx512f")) {
    std::printf("this CPU has no AVX-512: the lane layout experiment needs it\n");
    return 0;
  }
  std::mt19937_64 rng(5);
  std::vector<Robot> robots(kLanes);
  int maxS = 0, maxP = 0;
  for (Robot &r : robots) { // ragged: sizes as the 13x22 lattice's random bodies
    r.nP = 100 + int(rng() % 40);
    r.nS = int(r.nP * 2.5) + int(rng() % 20);
    for (int s = 0; s < r.nS; ++s) {
      r.a.push_back(int(rng() % r.nP));
      r.b.push_back((r.a.back() + 1 + int(rng() % 5)) % r.nP);
      r.rest.push_back(0.05);
      r.stiff.push_back(3e4);
      r.act.push_back(double(rng() % 2));
    }
    for (int i = 0; i < 2 * r.nP; ++i)
      r.x.push_back(0.05 * double(rng() % 100) / 10);
    r.vinc.assign(size_t(2 * r.nP), 0);
    maxS = std::max(maxS, r.nS);
    maxP = std::max(maxP, r.nP);
  }
  Packed p;
  p.maxS = maxS;
  p.maxP = maxP;
  p.a.assign(size_t(maxS) * 8, 0);
  p.b.assign(size_t(maxS) * 8, 0);
  p.rest.assign(size_t(maxS) * 8, 0.05);
  p.stiff.assign(size_t(maxS) * 8, 0.0);
  p.act.assign(size_t(maxS) * 8, 0.0);
  p.x.assign(size_t(maxP) * 16, 0.0);
  p.vinc.assign(size_t(maxP) * 16, 0.0);
  for (int l = 0; l < kLanes; ++l) {
    const Robot &r = robots[size_t(l)];
    for (int s = 0; s < r.nS; ++s) {
      p.a[size_t(s) * 8 + l] = r.a[size_t(s)];
      p.b[size_t(s) * 8 + l] = r.b[size_t(s)];
      p.stiff[size_t(s) * 8 + l] = r.stiff[size_t(s)];
      p.act[size_t(s) * 8 + l] = r.act[size_t(s)];
    }
    for (int i = 0; i < 2 * r.nP; ++i)
      p.x[size_t(i) * 8 + l] = r.x[size_t(i)];
  }
  int springs = 0;
  for (const Robot &r : robots)
    springs += r.nS;
  double tS = cpuTime(2000, [&] {
    for (Robot &r : robots)
      springsScalar(r);
  });
  double tL = cpuTime(2000, [&] { springsLanes(p); });
  // Check the lane layout computes the same impulses.
  for (Robot &r : robots)
    std::fill(r.vinc.begin(), r.vinc.end(), 0.0);
  std::fill(p.vinc.begin(), p.vinc.end(), 0.0);
  for (Robot &r : robots)
    springsScalar(r);
  springsLanes(p);
  double err = 0;
  for (int l = 0; l < kLanes; ++l)
    for (int i = 0; i < 2 * robots[size_t(l)].nP; ++i)
      err = std::max(err, std::fabs(p.vinc[size_t(i) * 8 + l] - robots[size_t(l)].vinc[size_t(i)]));
  std::printf("springs (gather, force, scatter-add), 8 robots, %d springs in all:\n", springs);
  std::printf("  inside a robot (scalar, as generated): %7.2f us = %5.2f ns/spring\n", tS * 1e6,
              tS * 1e9 / springs);
  std::printf("  robots in lanes (AVX-512 gather/scatter, padded to %d springs): %7.2f us = "
              "%5.2f ns/spring  -> %.2fx (max |difference| %.1e)\n",
              maxS, tL * 1e6, tL * 1e9 / springs, tS / tL, err);

  const int nin = 12 + 4 * maxP;
  std::vector<double> wl(size_t(kUnits) * nin * 8, 0.01), inl(size_t(nin) * 8, 0.5),
      outl(size_t(kUnits) * 8);
  for (Robot &r : robots) {
    r.w.assign(size_t(kUnits) * nin, 0.01);
    r.in.assign(size_t(nin), 0.5);
    r.out.assign(kUnits, 0);
  }
  double mS = cpuTime(2000, [&] {
    for (Robot &r : robots)
      matvecScalarRobot(r, nin);
  });
  double mL = cpuTime(2000, [&] { matvecLanes(wl, inl, outl, nin); });
  double m1 = cpuTime(2000, [&] { matvecScalarRobot(robots[0], nin); });
  const double flops = 2.0 * kUnits * nin * kLanes;
  std::printf("controller W1 * in (32 x %d), 8 robots:\n", nin);
  std::printf("  inside a robot (vector reduction over inputs): %7.2f us = %5.1f GFLOP/s\n",
              mS * 1e6, flops / mS * 1e-9);
  std::printf("  one robot, its weights resident in L2 (as in a rollout): %5.1f GFLOP/s\n",
              flops / kLanes / m1 * 1e-9);
  std::printf("  robots in lanes:                                %7.2f us = %5.1f GFLOP/s  -> "
              "%.2fx\n",
              mL * 1e6, flops / mL * 1e-9, mS / mL);
  return 0;
}
