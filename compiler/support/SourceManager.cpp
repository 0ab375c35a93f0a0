// SourceManager: file loading and offset -> line/column mapping.
#include "support/SourceManager.h"

#include "support/Error.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace evoc {

static std::vector<int> computeLineStarts(const std::string &text) {
  std::vector<int> starts{0};
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n')
      starts.push_back(int(i + 1));
  return starts;
}

std::string SourceManager::key(const std::string &path) {
  ++normalisations_;
  std::error_code ec;
  auto canon = std::filesystem::weakly_canonical(std::filesystem::path(path), ec);
  return ec ? path : canon.string();
}

int SourceManager::loadFile(const std::string &path) {
  std::error_code ec;
  std::filesystem::path p(path);
  if (std::filesystem::is_directory(p, ec))
    return -1;
  const std::string want = key(path);
  for (; keyed_ < files_.size(); ++keyed_)
    byKey_.emplace(key(files_[keyed_].path), int(keyed_)); // the first id of a key stays
  if (auto it = byKey_.find(want); it != byKey_.end())
    return it->second;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return -1;
  std::ostringstream ss;
  ss << in.rdbuf();
  return addBuffer(path, ss.str());
}

int SourceManager::addBuffer(const std::string &name, std::string text, std::string shown) {
  File f;
  f.path = name;
  f.text = std::move(text);
  f.shown = std::move(shown);
  f.lineStarts = computeLineStarts(f.text);
  files_.push_back(std::move(f));
  return int(files_.size() - 1);
}

const std::string &SourceManager::path(int file) const {
  EVOC_ASSERT(file >= 0 && file < numFiles(), "bad file id");
  return files_[file].path;
}

std::string_view SourceManager::text(int file) const {
  EVOC_ASSERT(file >= 0 && file < numFiles(), "bad file id");
  return files_[file].text;
}

std::string_view SourceManager::lineText(int file, int line) const {
  if (file < 0 || file >= numFiles())
    return {};
  const File &f = files_[file];
  if (line < 1 || line > int(f.lineStarts.size()))
    return {};
  if (!f.shown.empty())
    return line == 1 ? std::string_view(f.shown) : std::string_view();
  int b = f.lineStarts[line - 1];
  int e = line < int(f.lineStarts.size()) ? f.lineStarts[line] - 1 : int(f.text.size());
  if (e > b && f.text[e - 1] == '\r')
    --e;
  return std::string_view(f.text).substr(b, std::max(0, e - b));
}

SourceLoc SourceManager::locAt(int file, int offset) const {
  SourceLoc loc;
  if (file < 0 || file >= numFiles())
    return loc;
  const File &f = files_[file];
  offset = std::clamp(offset, 0, int(f.text.size()));
  auto it = std::upper_bound(f.lineStarts.begin(), f.lineStarts.end(), offset);
  int line = int(it - f.lineStarts.begin());
  loc.file = file;
  loc.line = line;
  loc.col = offset - f.lineStarts[line - 1] + 1;
  loc.offset = offset;
  return loc;
}

} // namespace evoc
