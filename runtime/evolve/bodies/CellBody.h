// Fixed bodies (`body cells`, docs/multitask.md "2D bodies" and "3D bodies"): a
// hand-designed body of square or cube cells behind the engine's BodyModel. It has one genotype
// and one phenotype; it does not evolve, so its variation operator throws.
#pragma once

#include "evolve/bodies/BodyModel.h"

#include "support/BodySpec.h"

#include <array>
#include <utility>
#include <vector>

namespace evoc::evolve {

/// The robot of a fixed body, built as docs/multitask.md says: each cell's
/// corners at origin + edge (i, j[, k]), merged and numbered by first use
/// (in corner order within a cell); a square's corners are a = (i, j),
/// b = (i, j+1), c = (i+1, j), d = (i+1, j+1), a cube's a = (i, j, k),
/// b = (i, j, k+1), c = (i+1, j, k), d = (i+1, j, k+1), then e f g h the same
/// at j + 1 (the square's order in the x-z plane, then along y). Springs are
/// every pair of a cell's corners in order (ab, ac, ad, bc, bd, cd; a cube's
/// 28 from ab to gh), one that an earlier cell made (either direction)
/// skipped, so the first cell keeps it with its actuation; rest length the
/// initial distance; actuation the spec's for the springs of the cell's
/// template, 0 for the others. Throws evoc::Error for a spec sema would
/// refuse (no cells, a repeated cell, neither 2D nor 3D, a non-positive edge
/// or stiffness). `corners`, if given, gets each cell's point indices in
/// corner order.
runtime::Robot buildCellRobot(const body::CellBodySpec &spec,
                              std::vector<std::vector<int>> *corners = nullptr,
                              const struct CellShape *shape = nullptr);

/// The order of a cell's corners (grid offsets (i, j, k)) and springs
/// (corner pairs), and (2D) its corners in polygon order. buildCellRobot
/// builds every cell in one shape.
struct CellShape {
  std::vector<std::array<int, 3>> corners;
  std::vector<std::pair<int, int>> springs;
  std::vector<int> outline;
};
/// A fixed body's (docs/multitask.md, as buildCellRobot above says).
const CellShape &fixedCellShape(int dim);
/// A voxel body's (docs/grammars.md, Voxel bodies): in 2D the stdlib voxel
/// part's corners (0, 0), (1, 0), (1, 1), (0, 1) and springs bottom, right,
/// top, left and the two diagonals, so that a voxel body numbers points and
/// springs as the stdlib voxel grammar does; in 3D the fixed body's.
const CellShape &voxelCellShape(int dim);

/// The outlines pictures draw around cells built by buildCellRobot
/// (`corners` as it gives them): a square per 2D cell; in 3D the cube faces
/// on the body's surface. Cell i's outlines take kinds[i]'s part name and
/// colour (its points are ignored).
std::vector<PartOutline> cellOutlines(int dim, const std::vector<std::vector<int>> &corners,
                                      const std::vector<PartOutline> &kinds,
                                      const CellShape *shape = nullptr);

/// `body cells` as a BodyModel: sample() always gives the one genotype,
/// express() its robot placed where the file puts it (not lifted onto the
/// ground), one outline per square cell or per cube face on the surface; vary() is never called on
/// a fixed body
/// (`evoc run` refuses one) and throws evoc::Error if it is.
class CellBody : public BodyModel {
public:
  /// `groundY`: the world's ground height (pictures). Throws as buildCellRobot.
  CellBody(body::CellBodySpec spec, double groundY);

  const body::CellBodySpec &spec() const { return spec_; }
  /// The one robot this body is.
  const runtime::Robot &robot() const { return robot_; }

  std::string kind() const override { return "cells"; }
  EVOC_BODY_MODEL_METHODS;
  double groundY() const override { return groundY_; }

private:
  body::CellBodySpec spec_;
  double groundY_ = 0;
  runtime::Robot robot_;
  std::vector<PartOutline> outlines_;
  GenomePtr genome_;
};

} // namespace evoc::evolve
