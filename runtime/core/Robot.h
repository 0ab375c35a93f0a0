// A robot's phenotype: the points and springs a body expands to. Bodies are
// data, not code (docs/architecture.md, "Layers and principles"): this is
// what kernels are run over.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "support/Ground.h"

namespace evoc::runtime {

/// One spring as ELDiR stores it (docs/evolution.md, "Lattice bodies"):
/// endpoints a, b (indices into the robot's points), rest length, stiffness,
/// actuation amplitude.
struct Spring {
  int a = 0, b = 0;
  double rest = 0, stiffness = 0, actuation = 0;
};

/// A mass-spring robot. `dim` is 2 or 3; point i's coordinates are
/// points[i * dim + c].
struct Robot {
  int dim = 2;
  std::vector<double> points;
  std::vector<Spring> springs;
  /// The points of each named part (a grammar body's part, a voxel body's
  /// material), for losses that name parts (part_mean). `hasParts` is false
  /// for a robot known only as points and springs.
  std::map<std::string, std::vector<int>> partPoints;
  bool hasParts = false;
  /// A particle body's (docs/language.md, "Particle bodies"): each point's
  /// actuator, -1 for a passive one; empty for a body of springs. Fills the
  /// body field point.actuator_id and sizes the set `actuator`.
  std::vector<int> actuators;

  int numPoints() const { return dim == 0 ? 0 : int(points.size()) / dim; }
  int numSprings() const { return int(springs.size()); }
  /// 1 + the largest actuator id of a particle body (0 without any).
  int numActuators() const {
    int n = 0;
    for (int a : actuators)
      n = a + 1 > n ? a + 1 : n;
    return n;
  }
};

/// A world's ground (support/Ground.h): a 2D profile or a 3D height field
/// and the scene's boxes, empty on flat ground without boxes.
using evoc::GroundShape;

} // namespace evoc::runtime
