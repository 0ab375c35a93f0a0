// Terrain grounds (Terrain.cpp): reading a profile file and drawing a random one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace evoc::sema {

/// (x, height) rows, x strictly increasing, at least two.
using TerrainProfile = std::vector<std::pair<double, double>>;

constexpr size_t kMaxTerrainRows = 10000;

/// Reads `x, height` rows ('#' comments, blank lines and one header row of
/// names allowed). On a problem: nullopt and `error` names the file and row.
std::optional<TerrainProfile> readTerrainCsv(const std::string &path, std::string &error);

/// `segments` equal segments over [0, length] from `height`: a random walk
/// of steps U(-roughness, roughness), never below `height`.
TerrainProfile randomTerrain(uint64_t seed, double roughness, double length, int segments,
                             double height);

} // namespace evoc::sema
