// Terrain grounds: a piecewise-linear profile of (x, height) rows, read from
// a CSV file (`terrain("hills.csv")`) or drawn from a seed
// (`terrain_random(seed = S, ...)`), checked before anything runs.
#include "sema/Terrain.h"

#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>

namespace evoc::sema {

namespace {

std::string trim(const std::string &s) {
  size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string::npos)
    return "";
  return s.substr(a, s.find_last_not_of(" \t\r") - a + 1);
}

bool number(const std::string &s, double &out) {
  std::string t = trim(s);
  if (t.empty())
    return false;
  std::istringstream in(t);
  in >> out;
  return in && in.peek() == EOF;
}

} // namespace

std::optional<TerrainProfile> readTerrainCsv(const std::string &path, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read the terrain file '" + path +
            "'; check the path (relative to the .evo "
            "file) and its permissions";
    return std::nullopt;
  }
  TerrainProfile p;
  std::string line;
  int row = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++row;
    if (line.find('\0') != std::string::npos) {
      error = path + ":" + std::to_string(row) + ": the terrain file is not text (a NUL byte)";
      return std::nullopt;
    }
    std::string t = trim(line);
    if (t.empty() || t[0] == '#')
      continue;
    size_t comma = t.find(',');
    double x = 0, y = 0;
    bool ok = comma != std::string::npos && t.find(',', comma + 1) == std::string::npos &&
              number(t.substr(0, comma), x) && number(t.substr(comma + 1), y);
    if (!ok && p.empty() && !header && comma != std::string::npos) {
      header = true; // a first row of column names ("x, height")
      continue;
    }
    if (!ok) {
      error = path + ":" + std::to_string(row) +
              ": expected a row 'x, height' of two numbers, got '" + t.substr(0, 60) + "'";
      return std::nullopt;
    }
    if (!std::isfinite(x) || !std::isfinite(y)) {
      error = path + ":" + std::to_string(row) + ": the row holds a value that is not finite";
      return std::nullopt;
    }
    if (!p.empty() && x <= p.back().first) {
      error = path + ":" + std::to_string(row) + ": x = " + trim(t.substr(0, comma)) +
              " does not increase (the rows must be sorted by x, each x once)";
      return std::nullopt;
    }
    if (p.size() >= kMaxTerrainRows) {
      error = path + ": more than " + std::to_string(kMaxTerrainRows) + " rows";
      return std::nullopt;
    }
    p.push_back({x, y});
  }
  if (p.size() < 2) {
    error = path + ": a terrain needs at least two rows 'x, height' (it has " +
            std::to_string(p.size()) + ")";
    return std::nullopt;
  }
  return p;
}

TerrainProfile randomTerrain(uint64_t seed, double roughness, double length, int segments,
                             double height) {
  // splitmix64: a small, well-known generator, so the profile depends on
  // the seed alone (not on the standard library's distributions).
  uint64_t s = seed;
  auto uniform = [&] {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return double(z >> 11) * 0x1.0p-53;
  };
  TerrainProfile p;
  double y = height;
  for (int i = 0; i <= segments; ++i) {
    p.push_back({length * i / segments, y});
    // A random walk that never dips below the base height.
    y = std::max(height, y + roughness * (2 * uniform() - 1));
  }
  return p;
}

} // namespace evoc::sema
