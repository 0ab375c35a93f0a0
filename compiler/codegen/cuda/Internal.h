// Declarations shared by the files of the CUDA back end; not a public API.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace evoc::codegen::cuda {

/// The symbol of the __global__ function of kernel `k` ("evoc_k3").
std::string kernelSymbol(int k);

/// Options NVRTC compiles generated sources with (part of the cache key).
std::vector<std::string> nvrtcOptions(const std::string &arch, bool cubin);

/// Compiles CUDA source with NVRTC: CUBIN for a real arch ("sm_90") when
/// `cubin`, else PTX for its virtual arch. A compile failure is a bug in
/// evoc: throws evoc::Error saying so, with the source saved to a file whose
/// path the message gives. `name` is used for that file's name.
std::string nvrtcCompile(const std::string &src, const std::string &name,
                         const std::string &arch, bool cubin);

/// nvrtcCompile through the on-disk cache in `cacheDir` (empty: default).
std::string cachedCompile(const std::string &src, const std::string &name,
                          const std::string &arch, bool cubin,
                          const std::string &cacheDir, bool useCache);

/// The default cache folder: $EVOC_CACHE_DIR, else $XDG_CACHE_HOME/evoc,
/// else $HOME/.cache/evoc, else /tmp/evoc-cache.
std::string defaultCacheDir();

} // namespace evoc::codegen::cuda
