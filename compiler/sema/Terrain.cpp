// Terrain grounds: a piecewise-linear profile of (x, height) rows, read from
// a CSV file (`terrain("hills.csv")`) or drawn from a seed
// (`terrain_random(seed = S, ...)`), checked before anything runs.
#include "sema/Terrain.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
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

// Reads the rows of `cols` numbers of a terrain file ('#' comments, blank
// lines and one first row of column names allowed); each row's line number
// goes to `rows`. `what` names a row's columns in errors.
bool readRows(const std::string &path, size_t cols, const char *what,
              std::vector<std::vector<double>> &out, std::vector<int> &rows, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read the terrain file '" + path +
            "'; check the path (relative to the .evo "
            "file) and its permissions";
    return false;
  }
  std::string line;
  int row = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++row;
    const std::string at = path + ":" + std::to_string(row) + ": ";
    if (line.find('\0') != std::string::npos) {
      error = at + "the terrain file is not text (a NUL byte)";
      return false;
    }
    std::string t = trim(line);
    if (t.empty() || t[0] == '#')
      continue;
    std::vector<double> v;
    bool ok = true;
    for (size_t a = 0; ok;) {
      size_t comma = t.find(',', a);
      double x = 0;
      ok = number(t.substr(a, comma == std::string::npos ? std::string::npos : comma - a), x);
      v.push_back(x);
      if (comma == std::string::npos)
        break;
      a = comma + 1;
    }
    ok = ok && v.size() == cols;
    if (!ok && out.empty() && !header && t.find(',') != std::string::npos) {
      header = true; // a first row of column names ("x, height")
      continue;
    }
    if (!ok) {
      error = at + "expected a row '" + what + "' of " + std::to_string(cols) + " numbers, got '" +
              t.substr(0, 60) + "'";
      return false;
    }
    for (double x : v)
      if (!std::isfinite(x)) {
        error = at + "the row holds a value that is not finite";
        return false;
      }
    if (out.size() >= kMaxTerrainRows) {
      error = path + ": more than " + std::to_string(kMaxTerrainRows) + " rows";
      return false;
    }
    out.push_back(std::move(v));
    rows.push_back(row);
  }
  return true;
}

// splitmix64: a small, well-known generator, so a random terrain depends on
// the seed alone (not on the standard library's distributions).
struct SplitMix {
  uint64_t s;
  double uniform() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return double(z >> 11) * 0x1.0p-53;
  }
};

} // namespace

std::optional<TerrainProfile> readTerrainCsv(const std::string &path, std::string &error) {
  std::vector<std::vector<double>> rows;
  std::vector<int> lines;
  if (!readRows(path, 2, "x, height", rows, lines, error))
    return std::nullopt;
  TerrainProfile p;
  for (size_t r = 0; r < rows.size(); ++r) {
    if (!p.empty() && rows[r][0] <= p.back().first) {
      std::ostringstream x;
      x << rows[r][0];
      error = path + ":" + std::to_string(lines[r]) + ": x = " + x.str() +
              " does not increase (the rows must be sorted by x, each x once)";
      return std::nullopt;
    }
    p.push_back({rows[r][0], rows[r][1]});
  }
  if (p.size() < 2) {
    error = path + ": a terrain needs at least two rows 'x, height' (it has " +
            std::to_string(p.size()) + ")";
    return std::nullopt;
  }
  return p;
}

std::optional<HeightField> readHeightFieldCsv(const std::string &path, std::string &error) {
  std::vector<std::vector<double>> rows;
  std::vector<int> lines;
  if (!readRows(path, 3, "x, y, height", rows, lines, error))
    return std::nullopt;
  HeightField f;
  for (const auto &r : rows) {
    f.xs.push_back(r[0]);
    f.ys.push_back(r[1]);
  }
  for (auto *g : {&f.xs, &f.ys}) {
    std::sort(g->begin(), g->end());
    g->erase(std::unique(g->begin(), g->end()), g->end());
  }
  if (f.nx() < 2 || f.ny() < 2) {
    error = path +
            ": a height field needs rows 'x, y, height' on a grid of at least two x and "
            "two y values (it has " +
            std::to_string(f.nx()) + " x and " + std::to_string(f.ny()) + " y)";
    return std::nullopt;
  }
  if (f.nx() * f.ny() > kMaxFieldPoints) {
    error = path + ": a height field of " + std::to_string(f.nx()) + " x " +
            std::to_string(f.ny()) + " points is more than " + std::to_string(kMaxFieldPoints) +
            " (the physics evaluates the grid cell by cell; use a coarser grid)";
    return std::nullopt;
  }
  const double unset = std::numeric_limits<double>::quiet_NaN();
  f.h.assign(f.nx() * f.ny(), unset);
  auto index = [](const std::vector<double> &g, double v) {
    return size_t(std::lower_bound(g.begin(), g.end(), v) - g.begin());
  };
  for (size_t r = 0; r < rows.size(); ++r) {
    double &h = f.h[index(f.ys, rows[r][1]) * f.nx() + index(f.xs, rows[r][0])];
    if (!std::isnan(h)) {
      error = path + ":" + std::to_string(lines[r]) +
              ": a second height for the same (x, y); each grid point once";
      return std::nullopt;
    }
    h = rows[r][2];
  }
  for (size_t k = 0; k < f.h.size(); ++k)
    if (std::isnan(f.h[k])) {
      std::ostringstream m;
      m << path << ": the grid has no height at (x, y) = (" << f.xs[k % f.nx()] << ", "
        << f.ys[k / f.nx()] << "); a height field gives every pair of its x and y values";
      error = m.str();
      return std::nullopt;
    }
  return f;
}

TerrainProfile randomTerrain(uint64_t seed, double roughness, double length, int segments,
                             double height) {
  SplitMix rng{seed};
  TerrainProfile p;
  double y = height;
  for (int i = 0; i <= segments; ++i) {
    p.push_back({length * i / segments, y});
    // A random walk that never dips below the base height.
    y = std::max(height, y + roughness * (2 * rng.uniform() - 1));
  }
  return p;
}

HeightField randomHeightField(uint64_t seed, double roughness, double length, int segments,
                              double height) {
  SplitMix rng{seed};
  HeightField f;
  for (int i = 0; i <= segments; ++i) {
    f.xs.push_back(length * i / segments);
    f.ys.push_back(length * i / segments);
  }
  const size_t n = f.nx();
  f.h.assign(n * n, height);
  // A random walk in two directions: each height the mean of the heights
  // before it in x and in y plus a step U(-roughness, roughness), never below
  // the base height; the corner (0, 0) is at the base height.
  for (size_t j = 0; j < n; ++j)
    for (size_t i = 0; i < n; ++i) {
      if (i == 0 && j == 0)
        continue;
      double before = i == 0   ? f.h[(j - 1) * n]
                      : j == 0 ? f.h[i - 1]
                               : 0.5 * (f.h[j * n + i - 1] + f.h[(j - 1) * n + i]);
      f.h[j * n + i] = std::max(height, before + roughness * (2 * rng.uniform() - 1));
    }
  return f;
}

} // namespace evoc::sema
