// The on-disk object cache: cold vs warm, and corrupt or foreign entries rebuilt.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "MassSpring.h"
#include "TempDir.h"
#include "codegen/cpu/CpuBackend.h"
#include "codegen/cpu/ObjectCache.h"

using namespace evoc;
namespace fs = std::filesystem;

namespace {

using test::TempDir;

std::string slurp(const std::string &p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void spit(const std::string &p, const std::string &s) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << s;
}

} // namespace

TEST_CASE("object cache: cold compile writes an entry, warm compile reuses it", "[llvm][cache]") {
  TempDir dir("evoc-cache-test");
  test::MassSpringIds ids;
  ir::Module m = test::makeMassSpringModule(ids);
  codegen::CompileOptions opts;
  opts.cacheDir = dir.path.string();
  std::mt19937_64 rng(3);
  test::MassSpringRobot robot = test::makeRandomRobot(rng, 3, 4);

  auto cold = codegen::cpu::compileCpu(m, opts);
  CHECK_FALSE(cold->fromCache());
  REQUIRE(fs::exists(cold->cacheEntry()));
  const double coldLoss = test::rollout(m, ids, *cold, robot, 100);

  auto warm = codegen::cpu::compileCpu(m, opts);
  CHECK(warm->fromCache());
  CHECK(warm->cacheEntry() == cold->cacheEntry());
  CHECK(test::rollout(m, ids, *warm, robot, 100) == coldLoss);

  SECTION("a corrupted object is detected and rebuilt") {
    std::string bytes = slurp(cold->cacheEntry());
    bytes[bytes.size() - 100] ^= 0x5a;
    spit(cold->cacheEntry(), bytes);
    auto rebuilt = codegen::cpu::compileCpu(m, opts);
    CHECK_FALSE(rebuilt->fromCache());
    CHECK(test::rollout(m, ids, *rebuilt, robot, 100) == coldLoss);
    CHECK(codegen::cpu::compileCpu(m, opts)->fromCache()); // the rebuild was stored
  }
  SECTION("a truncated entry is detected and rebuilt") {
    std::string bytes = slurp(cold->cacheEntry());
    spit(cold->cacheEntry(), bytes.substr(0, bytes.size() / 2));
    CHECK_FALSE(codegen::cpu::compileCpu(m, opts)->fromCache());
    CHECK(codegen::cpu::compileCpu(m, opts)->fromCache());
  }
  SECTION("an entry for another key is not trusted") {
    std::string bytes = slurp(cold->cacheEntry());
    size_t line = bytes.find('\n') + 1;
    bytes[line] = bytes[line] == 'a' ? 'b' : 'a'; // the stored key no longer matches
    spit(cold->cacheEntry(), bytes);
    CHECK_FALSE(codegen::cpu::compileCpu(m, opts)->fromCache());
  }
  SECTION("a different module has a different entry") {
    m.kernels[ids.lossK].body.insts.front()->f = 0.5; // the loss accumulator's initial value
    auto other = codegen::cpu::compileCpu(m, opts);
    CHECK_FALSE(other->fromCache());
    CHECK(other->cacheEntry() != cold->cacheEntry());
  }
  SECTION("other optimisation levels and fp modes have their own entries") {
    codegen::CompileOptions o2 = opts;
    o2.optLevel = 2;
    CHECK_FALSE(codegen::cpu::compileCpu(m, o2)->fromCache());
    CHECK_FALSE(codegen::cpu::compileCpu(m, opts, codegen::cpu::FpMode::Strict)->fromCache());
  }
}

TEST_CASE("object cache: folder selection and unwritable folders", "[llvm][cache]") {
  CHECK(codegen::cpu::cacheDirectory("/some/where") == "/some/where");
  ::setenv("EVOC_CACHE_DIR", "/tmp/evoc-env-cache", 1);
  CHECK(codegen::cpu::cacheDirectory("") == "/tmp/evoc-env-cache");
  ::unsetenv("EVOC_CACHE_DIR");
  const char *xdg = std::getenv("XDG_CACHE_HOME");
  std::string saved = xdg ? xdg : "";
  ::setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
  CHECK(codegen::cpu::cacheDirectory("") == "/tmp/xdg/evoc");
  if (saved.empty())
    ::unsetenv("XDG_CACHE_HOME");
  else
    ::setenv("XDG_CACHE_HOME", saved.c_str(), 1);

  test::MassSpringIds ids;
  ir::Module m = test::makeMassSpringModule(ids);
  codegen::CompileOptions opts;
  opts.cacheDir = "/proc/evoc-cannot-write-here";
  auto exe = codegen::cpu::compileCpu(m, opts); // still compiles, just without a cache
  CHECK_FALSE(exe->fromCache());
  CHECK_FALSE(codegen::cpu::compileCpu(m, opts)->fromCache());
}
