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
};

struct CompileOptions {
  std::string cacheDir; // empty: the default user cache folder
  bool useCache = true;
  int optLevel = 3;
};

/// Compiles `m` for back end `kind`. Throws evoc::Error (support/Error.h)
/// when the back end is unavailable, with a sentence saying why.
std::unique_ptr<Executable> compile(const ir::Module &m, BackendKind kind,
                                    const CompileOptions &opts = {});

} // namespace evoc::codegen
