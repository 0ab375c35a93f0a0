// A canonical key of a phenotype, so that no robot is trained twice in a run:
// invariant to point labels, spring order, translation and the derivation
// that built it; not to mirror images or rotations (docs/evolution.md, "Never
// the same robot twice").
#pragma once

#include "core/Robot.h"

#include <cstdint>
#include <string>

namespace evoc::evolve {

/// 128 bits of hash with the canonical bytes they hash, so equal hashes can
/// be told apart from collisions.
struct CanonicalKey {
  uint64_t hi = 0, lo = 0;
  std::string bytes; ///< the canonical form: quantised sorted points, relabelled sorted springs
  /// The hash as 32 hex digits (the archive's key in state.json).
  std::string hex() const;
  bool operator==(const CanonicalKey &o) const { return bytes == o.bytes; }
};

/// Translate to the bounding-box minimum, quantise coordinates to `quantum`
/// (absolute), sort points, relabel springs (a < b) and sort them with their
/// quantised rest length, stiffness and actuation.
CanonicalKey canonicalKey(const runtime::Robot &r, double quantum = 1e-7);

} // namespace evoc::evolve
