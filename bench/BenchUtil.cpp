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

// One function per vector width (W doubles), selected at run time: kChains
// independent FMA chains, each kept in a register, summed at the end.
#define EVOC_FMA_CHAINS(NAME, TARGET, V, W, SET1, FMADD, ADD, STORE)                               \
  __attribute__((target(TARGET))) double NAME(int64_t iters) {                                     \
    V acc[kChains];                                                                                \
    for (int i = 0; i < kChains; ++i)                                                              \
      acc[i] = SET1(1.0 + i * 1e-3);                                                               \
    const V a = SET1(0.9999999), b = SET1(1e-7);                                                   \
    for (int64_t it = 0; it < iters; ++it) {                                                       \
      _Pragma("GCC unroll 16") for (int i = 0; i < kChains; ++i) acc[i] = FMADD(acc[i], a, b);     \
    }                                                                                              \
    V s = acc[0];                                                                                  \
    for (int i = 1; i < kChains; ++i)                                                              \
      s = ADD(s, acc[i]);                                                                          \
    double out[W], sum = 0;                                                                        \
    STORE(out, s);                                                                                 \
    for (double v : out)                                                                           \
      sum += v;                                                                                    \
    return sum;                                                                                    \
  }

EVOC_FMA_CHAINS(chains512, "avx512f", __m512d, 8, _mm512_set1_pd, _mm512_fmadd_pd, _mm512_add_pd,
                _mm512_storeu_pd)
EVOC_FMA_CHAINS(chains256, "avx2,fma", __m256d, 4, _mm256_set1_pd, _mm256_fmadd_pd, _mm256_add_pd,
                _mm256_storeu_pd)

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
