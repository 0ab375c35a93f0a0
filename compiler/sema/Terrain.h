// Terrain grounds (Terrain.cpp): reading a profile or height-field file and
// drawing a random one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "support/Ground.h"

namespace evoc::sema {

constexpr size_t kMaxTerrainRows = 10000;
/// A height field's grid points at most: the physics selects the cell under
/// a point with comparisons, so its cost grows with the grid.
constexpr size_t kMaxFieldPoints = 4096;

/// Reads `x, height` rows ('#' comments, blank lines and one header row of
/// names allowed). On a problem: nullopt and `error` names the file and row.
std::optional<TerrainProfile> readTerrainCsv(const std::string &path, std::string &error);

/// `segments` equal segments over [0, length] from `height`: a random walk
/// of steps U(-roughness, roughness), never below `height`.
TerrainProfile randomTerrain(uint64_t seed, double roughness, double length, int segments,
                             double height);

/// Reads `x, y, height` rows on a full grid (any order, each point once; the
/// comments and header of readTerrainCsv). On a problem: nullopt and `error`
/// names the file and row, or the grid point that has no height.
std::optional<HeightField> readHeightFieldCsv(const std::string &path, std::string &error);

/// A segments x segments grid over [0, length]^2 from `height`: each height
/// the mean of the ones before it in x and y plus a step U(-roughness,
/// roughness), never below `height`.
HeightField randomHeightField(uint64_t seed, double roughness, double length, int segments,
                              double height);

} // namespace evoc::sema
