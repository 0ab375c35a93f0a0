// NVRTC: generated CUDA C++ -> CUBIN (real arch) or PTX (virtual arch), and
// the on-disk cache of the results keyed by source, arch, options and versions.
#include <nvrtc.h>

#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "codegen/cuda/CudaBackend.h"
#include "codegen/cuda/Internal.h"
#include "support/Error.h"

#ifndef EVOC_VERSION
#define EVOC_VERSION "dev"
#endif

namespace fs = std::filesystem;

namespace evoc::codegen::cuda {
namespace {

uint64_t fnv1a(const std::string &s, uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

/// 128-bit content hash (two independent FNV-1a streams) as 32 hex digits.
std::string hashHex(const std::string &s) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx",
                static_cast<unsigned long long>(fnv1a(s, 0xcbf29ce484222325ULL)),
                static_cast<unsigned long long>(fnv1a(s, 0x84222325cbf29ce4ULL ^ s.size())));
  return buf;
}

std::string nvrtcVersionString() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return std::to_string(major) + "." + std::to_string(minor);
}

/// Writes `data` to `path` atomically: a unique temporary, then rename().
bool writeAtomic(const fs::path &path, const std::string &data) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  static std::atomic<uint64_t> counter{0};
  std::random_device rd;
  fs::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++) + "." +
         std::to_string(rd());
  {
    std::ofstream f(tmp, std::ios::binary);
    if (!f.write(data.data(), static_cast<std::streamsize>(data.size())))
      return fs::remove(tmp, ec), false;
  }
  fs::rename(tmp, path, ec);
  if (ec)
    fs::remove(tmp, ec);
  return !ec;
}

constexpr char kMagic[8] = {'E', 'V', 'O', 'C', 'C', 'U', 'B', '1'};

/// Cache entry: magic, payload hash (32 hex), payload. Anything else is corrupt.
std::string packEntry(const std::string &payload) {
  return std::string(kMagic, 8) + hashHex(payload) + payload;
}

bool unpackEntry(const std::string &entry, std::string &payload) {
  if (entry.size() < 40 || entry.compare(0, 8, std::string(kMagic, 8)) != 0)
    return false;
  payload = entry.substr(40);
  return entry.compare(8, 32, hashHex(payload)) == 0;
}

std::string readFile(const fs::path &p, bool &ok) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  ok = static_cast<bool>(f);
  return ss.str();
}

} // namespace

std::string defaultCacheDir() {
  if (const char *e = std::getenv("EVOC_CACHE_DIR"); e && *e)
    return e;
  if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return std::string(x) + "/evoc";
  if (const char *h = std::getenv("HOME"); h && *h)
    return std::string(h) + "/.cache/evoc";
  return "/tmp/evoc-cache";
}

std::vector<std::string> nvrtcOptions(const std::string &arch, bool cubin) {
  // sm_90 -> compute_90 for PTX. IEEE arithmetic without contraction to FMA,
  // so the GPU computes what the interpreter and the CPU back end compute.
  std::string a = cubin ? arch : "compute_" + arch.substr(arch.find('_') + 1);
  return {"--gpu-architecture=" + a, "--std=c++17", "--fmad=false", "--prec-div=true",
          "--prec-sqrt=true",        "--ftz=false", "-lineinfo"};
}

std::string nvrtcCompile(const std::string &src, const std::string &rawName,
                         const std::string &arch, bool cubin) {
  std::string name = rawName; // used in a file name: keep it tame
  for (char &c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '.')
      c = '_';
  nvrtcProgram prog = nullptr;
  std::string file = name + ".cu";
  if (nvrtcCreateProgram(&prog, src.c_str(), file.c_str(), 0, nullptr, nullptr) != NVRTC_SUCCESS)
    throw Error("evoc internal error: NVRTC could not create a program for '" + name + "'.");
  std::vector<std::string> opts = nvrtcOptions(arch, cubin);
  std::vector<const char *> copts;
  for (const std::string &o : opts)
    copts.push_back(o.c_str());
  nvrtcResult rc = nvrtcCompileProgram(prog, static_cast<int>(copts.size()), copts.data());
  size_t logSize = 0;
  nvrtcGetProgramLogSize(prog, &logSize);
  std::string log(logSize, '\0');
  if (logSize)
    nvrtcGetProgramLog(prog, log.data());
  if (rc != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&prog);
    fs::path dir = fs::temp_directory_path() / "evoc-cuda-failures";
    fs::path saved = dir / (name + "-" + hashHex(src).substr(0, 12) + ".cu");
    bool ok = writeAtomic(saved, src);
    throw Error("evoc internal error: NVRTC rejected the CUDA generated for '" + name + "' (" +
                nvrtcGetErrorString(rc) + "). This is a bug in evoc; please report it " +
                "with the generated source, " +
                (ok ? "saved to " + saved.string() : "which could not be saved") +
                ".\nNVRTC log:\n" + log);
  }
  std::string outBin;
  size_t n = 0;
  if (cubin) {
    nvrtcGetCUBINSize(prog, &n);
    outBin.resize(n);
    nvrtcGetCUBIN(prog, outBin.data());
  } else {
    nvrtcGetPTXSize(prog, &n);
    outBin.resize(n);
    nvrtcGetPTX(prog, outBin.data());
    while (!outBin.empty() && outBin.back() == '\0')
      outBin.pop_back();
  }
  nvrtcDestroyProgram(&prog);
  return outBin;
}

std::string cachedCompile(const std::string &src, const std::string &name, const std::string &arch,
                          bool cubin, const std::string &cacheDir, bool useCache) {
  if (!useCache)
    return nvrtcCompile(src, name, arch, cubin);
  std::string key = std::string("evoc " EVOC_VERSION "\nnvrtc ") + nvrtcVersionString() +
                    "\narch " + arch + (cubin ? " cubin" : " ptx") + "\n";
  for (const std::string &o : nvrtcOptions(arch, cubin))
    key += o + "\n";
  key += src;
  fs::path path = fs::path(cacheDir.empty() ? defaultCacheDir() : cacheDir) / "cuda" /
                  (hashHex(key) + (cubin ? ".cubin" : ".ptx"));
  std::error_code ec;
  if (fs::exists(path, ec)) {
    bool ok = false;
    std::string entry = readFile(path, ok), payload;
    if (ok && unpackEntry(entry, payload))
      return payload;
    // Corrupt or truncated: fall through and rebuild it.
  }
  std::string result = nvrtcCompile(src, name, arch, cubin);
  writeAtomic(path, packEntry(result)); // a failed write only costs a recompile
  return result;
}

std::string emitPtx(const ir::Module &m, const std::string &arch) {
  return nvrtcCompile(emitCuda(m), "evoc_" + m.name, arch, false);
}

std::string emitCubin(const ir::Module &m, const std::string &arch, const CompileOptions &opts) {
  return cachedCompile(emitCuda(m), "evoc_" + m.name, arch, true, opts.cacheDir, opts.useCache);
}

} // namespace evoc::codegen::cuda
