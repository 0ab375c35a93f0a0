// The lattice body (Lattice.h) behind the engine's BodyModel interface: a
// mask genome, ELDiR's mutation (its rates live here; docs/evolution.md,
// "Lattice bodies"), node and edge numbers as provenance keys.
#pragma once

#include "evolve/bodies/BodyModel.h"
#include "evolve/bodies/Lattice.h"

namespace evoc::evolve {

/// A lattice genotype as a BodyModel genome.
struct LatticeGenomeBox : Genome {
  LatticeGenome g;
  explicit LatticeGenomeBox(LatticeGenome genome) : g(std::move(genome)) {}
};

/// The reference mutation of the engine before the body-model interface:
/// rates < 0 stand for ELDiR's 1/#triangles and 1/#edges (docs/evolution.md).
inline constexpr LatticeMutation kReferenceLatticeMutation{-1, true, 2.0, -1, 1000};

/// `body lattice` as a BodyModel. Variation ops are "flip cell" (always;
/// until changed) and "flip actuator" (when an actuation bit changed); a
/// fallback is a mask that never changed in maxAttempts draws.
class LatticeModel : public BodyModel {
public:
  /// Rates < 0 in `mutation` are resolved to 1/#triangles, 1/#edges.
  explicit LatticeModel(LatticeSpec spec, LatticeMutation mutation = kReferenceLatticeMutation);

  const LatticeBody &body() const { return body_; }
  /// The resolved mutation rates.
  const LatticeMutation &mutation() const { return mutation_; }
  /// The lattice genome inside `g` (which must come from this model).
  static const LatticeGenome &genome(const Genome &g);

  std::string kind() const override { return "lattice"; }
  EVOC_BODY_MODEL_METHODS;
  double groundY() const override { return body_.spec().baseY; }

private:
  LatticeBody body_;
  LatticeMutation mutation_;
};

} // namespace evoc::evolve
