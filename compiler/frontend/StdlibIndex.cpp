// Which stdlib files declare a name (frontend/Imports.h, stdlibDeclaring):
// the checker's hint for a name the user's file uses without importing it.
#include "frontend/Imports.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

namespace evoc::frontend {

namespace {

/// (keyword, name) -> the import paths of the files declaring it, read once
/// from the default search path (the stdlib and EVOC_STDLIB_PATH).
using Index = std::map<std::pair<std::string, std::string>, std::vector<std::string>>;

Index buildIndex() {
  namespace fs = std::filesystem;
  Index index;
  // `material NAME`, `fn NAME`, `physics NAME`, `part NAME`, `grammar NAME`,
  // `controller NAME`, `body KIND NAME` at the start of a line.
  static const std::regex decl(
      R"(^\s*(material|fn|physics|part|grammar|controller|body\s+[A-Za-z_]\w*)\s+([A-Za-z_]\w*))");
  for (const std::string &dir : importSearchPath(ImportOptions{})) {
    std::error_code ec;
    for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      if (!it->is_regular_file() || it->path().extension() != ".evo")
        continue;
      std::ifstream in(it->path());
      const std::string rel = fs::relative(it->path(), dir).generic_string();
      std::string line;
      std::smatch m;
      while (std::getline(in, line))
        if (std::regex_search(line, m, decl)) {
          std::string keyword = m[1].str();
          if (keyword.rfind("body", 0) == 0)
            keyword = "body";
          auto &files = index[{keyword, m[2].str()}];
          if (std::find(files.begin(), files.end(), rel) == files.end())
            files.push_back(rel);
        }
    }
  }
  for (auto &[key, files] : index)
    std::sort(files.begin(), files.end());
  return index;
}

} // namespace

std::vector<std::string> stdlibDeclaring(const std::string &keyword, const std::string &name) {
  static const Index index = buildIndex();
  auto it = index.find({keyword, name});
  return it == index.end() ? std::vector<std::string>{} : it->second;
}

} // namespace evoc::frontend
