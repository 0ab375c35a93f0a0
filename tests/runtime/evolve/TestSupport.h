// Shared helpers for the evolution tests: scratch directories and a fake
// trainer whose fitness is easy to reason about.
#pragma once

#include "evolve/engine/Evolution.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

namespace evoc::evolve::test {

/// A fresh, empty scratch directory unique to this process and `name`.
std::filesystem::path scratchDir(const std::string &name);

/// A fake trainer: a 5-iteration learning curve approaching
/// -(number of actuated springs) / 100, so fitness counts actuated springs.
/// Robots whose point count is a multiple of 7 get a NaN loss (invalid).
/// Params are {"w": [seed mod 1000, #springs]}. `sleepMs` per batch.
EvaluateFn fakeEvaluate(int sleepMs = 0);

/// Run options for the engine tests: `dir`, no progress output, and
/// `kTestSource` as the experiment text (resolved.evo).
inline constexpr const char *kTestSource = "// engine test\n";
RunOptions quiet(const std::filesystem::path &dir, bool resume = false);

/// A small experiment for the engine tests (6 x 10 lattice).
EvolutionConfig smallConfig(int population, int generations, uint64_t seed = 7);

/// smallConfig with MAP-Elites over (actuators 0..30 in 6 bins, width
/// 0..`widthHi` in 4 bins): the fake fitness counts actuated springs.
EvolutionConfig mapElitesConfig(int population, int generations, uint64_t seed = 7,
                                double widthHi = 0.5);

/// The JSON document at `p` (evoc::Error naming it when it cannot be read).
nlohmann::json readJson(const std::filesystem::path &p);

/// The log without its timing fields, one JSON text per line.
std::vector<std::string> logWithoutTiming(const std::filesystem::path &dir);

} // namespace evoc::evolve::test
