// MAP-Elites (docs/evolution.md, "MAP-Elites"): the descriptors of a body
// and its training, the grid cell they fall in (values outside an axis's
// range go to its edge cell), the archive's survivors (one elite per cell,
// replaced only by a better design) and its coverage and QD-score.
#pragma once

#include "evolve/engine/Selection.h"

#include "core/Robot.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace evoc::evolve {

/// The most descriptors a grid may have (CVT-MAP-Elites, for more, is not
/// built; sema refuses more with a located error).
inline constexpr size_t kMaxDescriptors = 2;

/// The most cells a grid may have (the product of the bins).
inline constexpr int64_t kMaxCells = 1000000;

/// What a design is described by: its phenotype and its training.
struct Described {
  const runtime::Robot *robot = nullptr;
  const std::vector<double> *losses = nullptr;
  const std::vector<double> *gradNorms = nullptr;
  const std::vector<std::pair<std::string, std::vector<double>>> *terms = nullptr;
};

/// The descriptor as a .evo file writes it: "actuators", "term(height)".
std::string descriptorName(const Descriptor &d);

/// The descriptor's value for a design; NaN where it has none (a term its
/// loss does not report, a curve too short for a measure).
double descriptorValue(const Descriptor &d, const Described &x);

/// The bin of `v` on the axis: floor((v - lo) / (hi - lo) * bins), clipped to
/// 0 .. bins - 1 (so out-of-range values land in the edge cells; NaN in 0).
int descriptorBin(const Descriptor &d, double v);

/// The row-major cell of `values` (the first descriptor varies slowest).
int64_t cellIndex(const std::vector<Descriptor> &axes, const std::vector<double> &values);

/// The cells of the grid (the product of the bins).
int64_t cellCount(const std::vector<Descriptor> &axes);

/// The archive after adding candidates: `pool[i]` sits in `cells[i]` (< 0:
/// not a candidate). Candidates are taken in pool order; one takes its cell
/// when it is empty or when it ranks before the elite there (ranksBefore:
/// higher fitness; an equal fitness keeps the older design). Returns the
/// elites' pool indices in rank order.
std::vector<size_t> eliteSurvivors(const std::vector<Scored> &pool,
                                   const std::vector<int64_t> &cells);

/// Coverage (filled / cells) and QD-score (sum of max(0, fitness - offset)
/// over the elites, in the given order) of an archive.
struct MapStats {
  int64_t filled = 0, cells = 0;
  double coverage = 0, qdScore = 0;
};
MapStats mapStats(const SelectionSpec &spec, const std::vector<double> &eliteFitness);

/// One elite of the archive, for its file.
struct EliteRecord {
  uint64_t id = 0;
  int born = 0;
  double fitness = 0;
  std::vector<double> descriptors;
};

/// The archive as DIR/elites.json holds it (docs/evolution.md): format
/// "evoc-map-elites", the axes, coverage and QD-score, and every elite (in
/// the given order, rank order) with its cell's bins, id, fitness and
/// descriptors (NaN as null).
nlohmann::json eliteMapJson(const SelectionSpec &spec, int generation,
                            const std::vector<EliteRecord> &elites);

} // namespace evoc::evolve
