// Every size the checker refuses beyond, in one place (docs/language.md,
// Evolution): an absurd size is a located error, never an allocation that
// fails later. The terrain files' limits are in Terrain.h, beside their reader.
#pragma once

#include <cstddef>
#include <cstdint>

namespace evoc::sema {

// evolve { ... }: the engine counts in 32 bits, and no run this large fits a
// machine anyway.
constexpr int64_t kMaxPopulation = 1000000;
constexpr int64_t kMaxGenerations = 10000000;
constexpr int64_t kMaxIterations = 1000000;
constexpr int64_t kMaxBatch = 65536;

/// The most states a rollout may count.
constexpr int64_t kMaxSteps = 100000000;

/// The largest lattice side (rows, cols) and the most memory a run's
/// rollouts may need.
constexpr int64_t kMaxLatticeSide = 1000;
constexpr double kMaxRunBytes = 32.0 * (1ull << 30);

/// The most cells a fixed body may have (far more than a hand design needs;
/// a body is built and checked before anything is allocated for it), and
/// the largest grid index, so that corner indices (i + 1, j + 1) never
/// overflow.
constexpr size_t kMaxBodyCells = 100000;
constexpr int64_t kMaxCellIndex = 1000000;

/// The most cells a voxel body's box may have: far beyond Evolution Gym's
/// 5 x 5 and a 3D 10 x 10 x 10; every cell is a gene of every body.
constexpr int64_t kMaxBoxCells = 4096;

/// The MAP-Elites grid (the engine's, runtime/evolve/engine/MapElites.h): two
/// axes (CVT-MAP-Elites, for more, is not built), at most a million cells and
/// 10000 bins an axis.
constexpr size_t kMaxDescriptors = 2;
constexpr int64_t kMaxGridCells = 1000000;
constexpr int64_t kMaxBins = 10000;

/// The most boxes a scene may have: every contact builtin selects among all
/// of them with comparisons, so each box costs simulation time.
constexpr size_t kMaxSceneBoxes = 64;
/// How far from the origin a box coordinate may lie.
constexpr double kMaxSceneCoordinate = 1e4;
/// The most movable objects a world may have: each meets every point of the
/// body in every step.
constexpr size_t kMaxObjects = 16;

/// world.grid (docs/language.md, "Grids and particles"): at least 3 nodes an
/// axis (a quadratic stencil's width), at most 2^22 nodes in all (every
/// field of a grid set is that many values per robot, on every thread).
constexpr int64_t kMinGridAxis = 3;
constexpr int64_t kMaxGridNodes = int64_t(1) << 22;
/// The widest stencil: size^dim nodes are unrolled per use.
constexpr int64_t kMaxStencilSize = 8;
/// The most particles a particle body may have, and per-axis density.
constexpr int64_t kMaxParticles = 4000000;
constexpr int64_t kMaxParticleDensity = 16;
constexpr double kMaxObjectMass = 1e6;

} // namespace evoc::sema
