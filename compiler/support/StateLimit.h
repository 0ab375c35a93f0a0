// The default bound on a rollout's state values (world.state_limit), shared
// by sema (the world's default) and the runtime (RolloutConfig's).
#pragma once

namespace evoc {

/// A rollout any of whose state values reaches a magnitude above this is
/// invalid: the simulation blew up (docs/language.md, world.state_limit).
/// 1e6 is far beyond any state of a metre-scale robot simulated for seconds
/// (positions in metres, velocities in metres per second) and far below
/// where an unstable integration ends (it grows by a factor per step, so it
/// crosses 1e6 within a few dozen steps of leaving the physical range).
inline constexpr double kDefaultStateLimit = 1e6;

} // namespace evoc
