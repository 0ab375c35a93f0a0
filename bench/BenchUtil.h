// Measuring helpers for the benchmarks: the machine's peak FMA throughput,
// FLOP counts of IR kernels, timing.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "ir/IR.h"

namespace evoc::bench {

/// Peak double-precision FLOP/s (an FMA counts 2) of `threads` cores running
/// independent FMA chains with the widest vectors this CPU has; `widthBits`
/// gets the vector width used. `perCpuSecond` gets the rate per CPU second
/// of one thread (robust when other processes share the cores).
double peakFmaFlops(int threads, int *widthBits = nullptr, double *perCpuSecond = nullptr);

/// Bandwidth of one thread's read-modify-write stream y[i] += a * x[i] over
/// two arrays of `bytes` each (24 bytes moved per element: read x and y,
/// write y), in bytes per CPU-second, best of several tries. Sized to sit in
/// L2 (2 x 128 KiB by default: beyond any L1, inside any L2 of 1 MiB or
/// more) it is the L2 bandwidth the weight-gradient loops see; the compiler
/// vectorises it with the widest vectors the host has.
double l2BandwidthBytes(int64_t bytes = 128 * 1024);

/// Seconds since `t0`.
inline double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// CPU seconds used by this process (all threads) / by the calling thread.
double processCpuSeconds();
double threadCpuSeconds();

/// Peak resident set size of this process in bytes (Linux: VmHWM).
int64_t peakRssBytes();

} // namespace evoc::bench
