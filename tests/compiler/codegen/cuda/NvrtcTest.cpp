// NVRTC (no GPU needed): the generated CUDA compiles to CUBIN for sm_80 and
// sm_90 in f64 and f32; PTX; compile errors save the source; the cache.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <regex>

#include "MassSpring.h"
#include "codegen/cuda/CudaBackend.h"
#include "codegen/cuda/Internal.h"
#include "support/Error.h"

using namespace evoc;
using namespace evoc::test;
namespace fs = std::filesystem;

namespace {

fs::path freshDir(const std::string &name) {
  fs::path p =
      fs::temp_directory_path() / ("evoc-cuda-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

/// An ELF file (CUBIN) of reasonable size.
bool looksLikeCubin(const std::string &bin) {
  return bin.size() > 1000 && bin.compare(0, 4,
                                          "\x7f"
                                          "ELF") == 0;
}

} // namespace

TEST_CASE("the test module compiles to CUBIN for sm_80 and sm_90, f64 and f32", "[cuda][nvrtc]") {
  MassSpringIds d;
  codegen::CompileOptions opts;
  opts.useCache = false;
  for (auto prec : {ir::Precision::F64, ir::Precision::F32}) {
    ir::Module m = makeMassSpringModule(d, prec, true);
    for (const char *arch : {"sm_80", "sm_90"}) {
      INFO(arch << (prec == ir::Precision::F64 ? " f64" : " f32"));
      std::string bin = codegen::cuda::emitCubin(m, arch, opts);
      CHECK(looksLikeCubin(bin));
    }
  }
}

TEST_CASE("PTX names every kernel and keeps the .evo line info", "[cuda][nvrtc]") {
  MassSpringIds d;
  ir::Module m = makeMassSpringModule(d, ir::Precision::F64, true);
  std::string ptx = codegen::cuda::emitPtx(m, "sm_90");
  CHECK(ptx.find(".target sm_90") != std::string::npos);
  for (int k = 0; k < 3; ++k)
    CHECK(ptx.find(".entry evoc_k" + std::to_string(k)) != std::string::npos);
  CHECK(ptx.find("stdlib/physics/mass_spring.evo") != std::string::npos);
  // Deterministic: integer atomics only (incidence lists), never a float one.
  CHECK(std::regex_search(ptx, std::regex("\\satom\\.[.a-z0-9]*\\.[us]32")));
  CHECK_FALSE(std::regex_search(ptx, std::regex("\\s(atom|red)\\.[.a-z0-9]*\\.f(16|32|64)")));
}

TEST_CASE("an NVRTC failure is an internal error with the source saved", "[cuda][nvrtc]") {
  std::string bad = "extern \"C\" __global__ void k() { this is not cuda; }\n";
  try {
    codegen::cuda::nvrtcCompile(bad, "broken/name", "sm_90", true);
    FAIL("NVRTC accepted broken source");
  } catch (const Error &e) {
    std::string msg = e.what();
    CHECK(msg.find("evoc internal error") != std::string::npos);
    CHECK(msg.find("bug in evoc") != std::string::npos);
    std::smatch mm;
    REQUIRE(std::regex_search(msg, mm, std::regex("saved to (\\S+\\.cu)")));
    std::ifstream f(mm[1].str());
    std::string saved((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    CHECK(saved == bad);
    CHECK(mm[1].str().find("broken_name") != std::string::npos);
    fs::remove(mm[1].str());
  }
}

TEST_CASE("the CUBIN cache: hit, and a corrupt entry is rebuilt", "[cuda][nvrtc]") {
  fs::path dir = freshDir("cache");
  std::string src = "extern \"C\" __global__ void evoc_k0(double *p) { p[threadIdx.x] *= 2; }\n";
  std::string a = codegen::cuda::cachedCompile(src, "tiny", "sm_90", true, dir.string(), true);
  REQUIRE(looksLikeCubin(a));
  std::vector<fs::path> entries;
  for (auto &e : fs::directory_iterator(dir / "cuda"))
    entries.push_back(e.path());
  REQUIRE(entries.size() == 1); // no temporaries left behind
  CHECK(entries[0].extension() == ".cubin");
  // A hit returns the same bytes (even with NVRTC's output unchanged, this
  // checks the entry round trip).
  CHECK(codegen::cuda::cachedCompile(src, "tiny", "sm_90", true, dir.string(), true) == a);
  // Truncate the entry: it must be detected and rebuilt, never trusted.
  fs::resize_file(entries[0], fs::file_size(entries[0]) / 2);
  CHECK(codegen::cuda::cachedCompile(src, "tiny", "sm_90", true, dir.string(), true) == a);
  CHECK(fs::file_size(entries[0]) > a.size());
  // Flip one payload byte: also rebuilt.
  {
    std::fstream f(entries[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(200);
    f.put('\x55');
  }
  CHECK(codegen::cuda::cachedCompile(src, "tiny", "sm_90", true, dir.string(), true) == a);
  // A different arch is a different key.
  std::string b = codegen::cuda::cachedCompile(src, "tiny", "sm_80", true, dir.string(), true);
  CHECK(b != a);
  fs::remove_all(dir);
}

TEST_CASE("the FMA peak microbenchmark compiles, with real FMAs", "[cuda][nvrtc]") {
  for (bool f64 : {true, false}) {
    std::string ptx =
        codegen::cuda::nvrtcCompile(codegen::cuda::peakKernelSource(f64), "peak", "sm_90", false);
    CHECK(ptx.find(f64 ? "fma.rn.f64" : "fma.rn.f32") != std::string::npos);
  }
}
