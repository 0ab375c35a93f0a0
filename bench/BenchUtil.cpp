// Measuring helpers for the benchmarks: the machine's peak FMA throughput,
// FLOP counts of IR kernels, timing.
#include "BenchUtil.h"

#include <algorithm>
#include <ctime>
#include <fstream>
#include <immintrin.h>
#include <thread>
#include <vector>

namespace evoc::bench {

namespace {

constexpr int kChains = 12; // > latency x ports of any current FMA unit

// Each function uses one vector width, selected at run time.
__attribute__((target("avx512f"))) double chains512(int64_t iters) {
  __m512d acc[kChains];
  for (int i = 0; i < kChains; ++i)
    acc[i] = _mm512_set1_pd(1.0 + i * 1e-3);
  const __m512d a = _mm512_set1_pd(0.9999999), b = _mm512_set1_pd(1e-7);
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 16 // keeps every chain in a register
    for (int i = 0; i < kChains; ++i)
      acc[i] = _mm512_fmadd_pd(acc[i], a, b);
  }
  __m512d s = acc[0];
  for (int i = 1; i < kChains; ++i)
    s = _mm512_add_pd(s, acc[i]);
  return _mm512_reduce_add_pd(s);
}

__attribute__((target("avx2,fma"))) double chains256(int64_t iters) {
  __m256d acc[kChains];
  for (int i = 0; i < kChains; ++i)
    acc[i] = _mm256_set1_pd(1.0 + i * 1e-3);
  const __m256d a = _mm256_set1_pd(0.9999999), b = _mm256_set1_pd(1e-7);
  for (int64_t it = 0; it < iters; ++it) {
#pragma GCC unroll 16
    for (int i = 0; i < kChains; ++i)
      acc[i] = _mm256_fmadd_pd(acc[i], a, b);
  }
  double out[4];
  __m256d s = acc[0];
  for (int i = 1; i < kChains; ++i)
    s = _mm256_add_pd(s, acc[i]);
  _mm256_storeu_pd(out, s);
  return out[0] + out[1] + out[2] + out[3];
}

double rate(int threads, int lanes, double (*fn)(int64_t), double *perCpu) {
  const int64_t iters = 20'000'000;
  std::vector<std::thread> ts;
  std::vector<double> sink(static_cast<size_t>(threads)), cpu(static_cast<size_t>(threads));
  fn(iters / 20); // warm up (frequency ramp)
  auto t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      double c0 = threadCpuSeconds();
      sink[size_t(t)] = fn(iters);
      cpu[size_t(t)] = threadCpuSeconds() - c0;
    });
  for (auto &t : ts)
    t.join();
  double s = since(t0);
  volatile double keep = sink[0];
  (void)keep;
  const double flopsPerThread = 2.0 * lanes * kChains * double(iters);
  if (perCpu) {
    *perCpu = 0;
    for (double c : cpu)
      *perCpu = std::max(*perCpu, flopsPerThread / c);
  }
  return flopsPerThread * threads / s;
}

} // namespace

double peakFmaFlops(int threads, int *widthBits, double *perCpuSecond) {
  double best = 0, bestCpu = 0;
  int width = 0;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    best = rate(threads, 4, chains256, &bestCpu);
    width = 256;
  }
  if (__builtin_cpu_supports("avx512f")) {
    double c = 0, r = rate(threads, 8, chains512, &c);
    if (c > bestCpu) {
      best = r;
      bestCpu = c;
      width = 512;
    }
  }
  if (widthBits)
    *widthBits = width;
  if (perCpuSecond)
    *perCpuSecond = bestCpu;
  return best;
}

namespace {
__attribute__((target("avx512f"), noinline)) void axpy512(double *y, const double *x, double a,
                                                          int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] += a * x[i];
}
__attribute__((target("avx2,fma"), noinline)) void axpy256(double *y, const double *x, double a,
                                                           int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] += a * x[i];
}
} // namespace

double l2BandwidthBytes(int64_t bytes) {
  const int64_t n = bytes / 8;
  std::vector<double> x(size_t(n), 1.0), y(size_t(n), 0.0);
  auto *fn = __builtin_cpu_supports("avx512f") ? axpy512 : axpy256;
  const int64_t sweeps = std::max<int64_t>(1, (int64_t(4) << 30) / (24 * n)); // ~4 GB moved
  double best = 0;
  for (int tr = 0; tr < 5; ++tr) {
    fn(y.data(), x.data(), 1e-9, n); // warm: the arrays into L2
    const double c0 = threadCpuSeconds();
    for (int64_t s = 0; s < sweeps; ++s)
      fn(y.data(), x.data(), 1e-9, n);
    best = std::max(best, double(24 * n * sweeps) / (threadCpuSeconds() - c0));
  }
  volatile double keep = y[0];
  (void)keep;
  return best;
}

double processCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

double threadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

int64_t peakRssBytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0)
      return std::stoll(line.substr(6)) * 1024;
  return 0;
}

} // namespace evoc::bench
