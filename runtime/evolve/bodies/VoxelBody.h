// Voxel bodies (`body voxel`, docs/grammars.md "Voxel bodies"): Evolution
// Gym's representation, a box of square (2D) or cube (3D) cells, each empty
// or of one material, behind the engine's BodyModel.
#pragma once

#include "evolve/bodies/BodyModel.h"

#include "support/BodySpec.h"

#include <cstdint>
#include <vector>

namespace evoc::evolve {

/// A voxel genotype: one value per cell of the box in grid order (x
/// fastest, then y, then z; the last axis is up): 0 empty, v > 0
/// materials[v - 1].
struct VoxelGenome : Genome {
  std::vector<uint8_t> cells;
};

/// `body voxel` as a BodyModel. A valid body's voxels are face-connected
/// and at least one is of an actuated material (Evolution Gym's rules);
/// sample() and vary() only give valid bodies.
class VoxelBody : public BodyModel {
public:
  /// Throws evoc::Error for a spec sema would refuse.
  VoxelBody(body::VoxelBodySpec spec, body::VoxelMutationSpec mutation, double groundY);

  const body::VoxelBodySpec &spec() const { return spec_; }
  /// The cells of a genome from this model.
  static const std::vector<uint8_t> &cells(const Genome &g);
  /// A genome of these cells (no validity check).
  static GenomePtr make(std::vector<uint8_t> cells);
  /// Why these cells are not a valid body ("" when they are).
  std::string invalidReason(const std::vector<uint8_t> &cells) const;
  /// The body's voxels (cell indices) in placement order: breadth first from
  /// the first voxel in grid order, neighbours +x, +y[, +z], -x, -y[, -z].
  std::vector<int> placementOrder(const std::vector<uint8_t> &cells) const;

  std::string kind() const override { return "voxel"; }
  EVOC_BODY_MODEL_METHODS;
  double groundY() const override { return groundY_; }

private:
  /// Which values draw() may give: any (empty included), a material, an
  /// actuated material.
  enum class Pick { Any, Material, Actuated };
  /// A cell's value drawn from the sampling weights among `pick`.
  uint8_t draw(EvoRng &rng, Pick pick = Pick::Any) const;
  /// The face neighbours of cell c, in placement order (-1: outside the box).
  void neighbours(int c, int *out) const;
  /// The voxels face-connected to `start`, breadth first (neighbours in
  /// placement order), marked in `seen`.
  std::vector<int> groupFrom(const std::vector<uint8_t> &cells, int start,
                             std::vector<char> &seen) const;
  /// evoc's operators (docs/grammars.md, Voxel bodies); each returns false
  /// when it has nothing to act on. add: a voxel of a material drawn by
  /// weight on an empty cell beside the body; remove: one whose removal
  /// keeps the body valid; swap: one voxel's material for another.
  bool addVoxel(std::vector<uint8_t> &cells, EvoRng &rng) const;
  bool removeVoxel(std::vector<uint8_t> &cells, EvoRng &rng) const;
  bool swapVoxel(std::vector<uint8_t> &cells, EvoRng &rng) const;
  /// The cells of the largest face-connected group of voxels (the first in
  /// grid order on a tie); empty when there is no voxel.
  std::vector<int> largestGroup(const std::vector<uint8_t> &cells) const;

  body::VoxelBodySpec spec_;
  body::VoxelMutationSpec mutation_;
  double groundY_ = 0;
};

} // namespace evoc::evolve
