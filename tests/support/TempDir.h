// A fresh scratch folder for a test, removed with what it holds at the end.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace evoc::test {

struct TempDir {
  std::filesystem::path path;
  /// A new folder "PREFIX-XXXXXX" under the system's temporary folder.
  explicit TempDir(const std::string &prefix = "evoc-test") {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  /// Writes `text` to path/rel (creating folders); returns its path.
  std::string write(const std::string &rel, const std::string &text) const {
    const std::filesystem::path p = path / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
};

} // namespace evoc::test
