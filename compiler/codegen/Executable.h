// The one interface every back end's compiled module has, and the factory
// that picks a back end. Back-end conditionals live here and nowhere else.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ir/IR.h"

namespace evoc::codegen {

/// The back ends evoc has. `interp` is the IR interpreter (ground truth).
enum class BackendKind : uint8_t { Interp, Cpu, Cuda };

/// Parses "interp" / "cpu" / "cuda"; returns false on anything else.
bool parseBackend(const std::string &s, BackendKind &out);

/// A module compiled for one back end. Kernels are addressed by their index
/// in ir::Module::kernels.
class Executable {
public:
  virtual ~Executable() = default;
  /// Runs kernel `k` for one robot (CPU back ends; thread-safe: the runtime
  /// calls it from several threads for different robots).
  virtual void run(int k, void *const *buffers, const int64_t *sizes, int64_t t) const = 0;
  /// One window's weight-gradient product (ir::WindowProduct) for one robot:
  /// grad[s * U + u] += guard(rows[k * ld + s] * x[k * ld + u]) for every s < S,
  /// u < U, adding the terms of k = n - 1 down to 0 in that order (the order
  /// of step.adj's own accumulation, latest step first); the guard makes a
  /// zero row's term 0. With `lanes` L > 1, for L episodes at once in the
  /// lanes layout (docs/architecture.md, "Episodes in lanes"): element i of
  /// lane l at i * L + l in each of grad, rows and x, each lane's product
  /// the one-lane product of its own elements. Elements are floats when
  /// `f32`, else doubles. This reference rounds each product and sum
  /// separately (the interpreter's arithmetic); the CPU back end runs a
  /// generated, register-blocked one. Thread-safe.
  virtual void windowProduct(bool f32, void *grad, const void *rows, const void *x, int64_t S,
                             int64_t U, int64_t n, int64_t ld, int lanes) const;
};

struct CompileOptions {
  std::string cacheDir; // empty: the default user cache folder
  bool useCache = true;
  int optLevel = 3;
  // CPU: episodes of one robot per kernel call, one per vector lane
  // (codegen/cpu/LowerToLLVM.h); 1: one episode. Init kernels are not
  // compiled with lanes > 1 (Executable::run must not be asked for them).
  int lanes = 1;
  // CPU, one episode or lanes: rows of a loop nest run per inner loop by
  // unroll and jam (codegen/cpu/UnrollAndJam.h); 0: the back end's choice,
  // 1: none (for benchmarks). Results are the same bit for bit either way in
  // strict mode.
  int lanesJam = 0;
};

/// Compiles `m` for back end `kind`. Throws evoc::Error (support/Error.h)
/// when the back end is unavailable, with a sentence saying why.
std::unique_ptr<Executable> compile(const ir::Module &m, BackendKind kind,
                                    const CompileOptions &opts = {});

} // namespace evoc::codegen
