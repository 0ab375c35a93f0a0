// On-disk cache of compiled kernel objects, keyed by a hash of what was compiled.
//
// Entry file <key>.evobj:
//   "evoc-object-cache 1\n" "<key>\n" "<object length>\n" "<sha256 of object>\n" <object>
// An entry is trusted only if every header line matches: a truncated, corrupt
// or foreign file is rebuilt, never linked.
#include "codegen/cpu/ObjectCache.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/SHA256.h>

namespace evoc::codegen::cpu {

namespace fs = std::filesystem;

static const char *const kMagic = "evoc-object-cache 1";

std::string sha256Hex(std::string_view data) {
  llvm::SHA256 h;
  h.update(llvm::StringRef(data.data(), data.size()));
  std::array<uint8_t, 32> digest = h.final();
  return llvm::toHex(llvm::ArrayRef<uint8_t>(digest.data(), digest.size()), /*LowerCase=*/true);
}

std::string cacheDirectory(const std::string &configured) {
  if (!configured.empty())
    return configured;
  if (const char *e = std::getenv("EVOC_CACHE_DIR"); e && *e)
    return e;
  if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return (fs::path(x) / "evoc").string();
  if (const char *h = std::getenv("HOME"); h && *h)
    return (fs::path(h) / ".cache" / "evoc").string();
  return {};
}

std::string cacheEntryPath(const std::string &dir, const std::string &key) {
  return (fs::path(dir) / (key + ".evobj")).string();
}

std::optional<std::string> cacheLoad(const std::string &dir, const std::string &key) {
  if (dir.empty())
    return std::nullopt;
  std::ifstream in(cacheEntryPath(dir, key), std::ios::binary);
  if (!in)
    return std::nullopt;
  std::string magic, fileKey, lenLine, sum;
  if (!std::getline(in, magic) || magic != kMagic || !std::getline(in, fileKey) || fileKey != key ||
      !std::getline(in, lenLine) || !std::getline(in, sum))
    return std::nullopt;
  char *end = nullptr;
  unsigned long long len = std::strtoull(lenLine.c_str(), &end, 10);
  if (lenLine.empty() || *end != '\0' || len > (1ull << 31))
    return std::nullopt;
  std::string object(len, '\0');
  if (!in.read(object.data(), std::streamsize(len)) || in.peek() != EOF)
    return std::nullopt;
  if (sha256Hex(object) != sum)
    return std::nullopt;
  return object;
}

bool cacheStore(const std::string &dir, const std::string &key, std::string_view object) {
  if (dir.empty())
    return false;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return false;
  static std::atomic<unsigned> counter{0};
  // Unique per process and call: concurrent writers never share a temp file.
  std::string tmp = cacheEntryPath(dir, key) + ".tmp." + std::to_string(::getpid()) + "." +
                    std::to_string(counter++);
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out)
      return false;
    out << kMagic << '\n' << key << '\n' << object.size() << '\n' << sha256Hex(object) << '\n';
    out.write(object.data(), std::streamsize(object.size()));
    out.flush();
    if (!out) {
      out.close();
      fs::remove(tmp, ec);
      return false;
    }
  }
  fs::rename(tmp, cacheEntryPath(dir, key), ec);
  if (ec) {
    fs::remove(tmp, ec);
    return false;
  }
  return true;
}

} // namespace evoc::codegen::cpu
