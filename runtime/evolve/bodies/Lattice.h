// ELDiR's triangular-lattice bodies (docs/evolution.md, "Lattice bodies"):
// the genotype (a mask over R x C triangles plus one actuation bit per
// lattice edge), random sampling, repair, mutation and the phenotype mapping
// to a runtime::Robot.
#pragma once

#include "evolve/engine/EvoRng.h"

#include "core/Robot.h"

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace evoc::evolve {

/// The `body lattice` settings of a .evo file, as plain numbers.
struct LatticeSpec {
  int rows = 6;                 ///< R: rows of triangles
  int cols = 10;                ///< C: triangles per row
  double edge = 0.05;           ///< spring rest length (lattice edge length)
  double stiffness = 3e4;       ///< spring stiffness
  double actuation = 0.1;       ///< actuation amplitude of an actuated edge
  double baseY = 0.1;           ///< height of the lowest lattice row
  bool fillHoles = true;        ///< repair step 1 (docs/evolution.md)
  bool largestComponent = true; ///< repair step 2 (docs/evolution.md)
  double sampleCellP = 0.5;     ///< P(triangle present) when sampling
  double sampleActuatorP = 0.5; ///< P(actuation bit set) when sampling
};

/// A lattice node (x, y): column x in [-1, C], row line y in [0, R].
struct Node {
  int x = 0, y = 0;
  /// Nodes are ordered by x, then y (the phenotype's point order).
  auto operator<=>(const Node &) const = default;
};

/// The fixed geometry of an R x C lattice. Edge numbering: every distinct
/// edge of every triangle, as a node pair (a < b in node order), sorted by
/// (a, b); an edge's number is its index in that order, so edge numbers
/// follow the phenotype's spring order.
class LatticeGeometry {
public:
  explicit LatticeGeometry(int rows, int cols);

  int rows() const { return rows_; }
  int cols() const { return cols_; }
  int numTriangles() const { return rows_ * cols_; }
  int numEdges() const { return int(edges_.size()); }
  int numNodes() const { return int(nodes_.size()); }
  /// Triangle i = y * C + x points up when x + y is odd.
  bool pointsUp(int tri) const;
  /// The three corner node numbers of triangle `tri`.
  const std::array<int, 3> &corners(int tri) const { return corners_[tri]; }
  /// The three edge numbers of triangle `tri`.
  const std::array<int, 3> &triangleEdges(int tri) const { return triEdges_[tri]; }
  /// Edge e's endpoints as node numbers (first < second).
  std::pair<int, int> edge(int e) const { return edges_[e]; }
  /// Node number n's lattice coordinates; node numbers follow node order.
  Node node(int n) const { return nodes_[n]; }

private:
  int rows_, cols_;
  std::vector<Node> nodes_;
  std::vector<std::pair<int, int>> edges_;
  std::vector<std::array<int, 3>> corners_, triEdges_;
};

/// A lattice body's genotype: mask[y * C + x] (1 = triangle present) and
/// actuation[e] per lattice edge e.
struct LatticeGenome {
  std::vector<uint8_t> mask;
  std::vector<uint8_t> actuation;
  bool operator==(const LatticeGenome &) const = default;
};

/// How a lattice genome mutates; the rates are per bit (ELDiR uses
/// 1 / #triangles and 1 / #edges, see defaultMutation() and
/// docs/evolution.md, "Lattice bodies").
struct LatticeMutation {
  double cellRate = 0;      ///< P(flip) per mask bit
  bool untilChanged = true; ///< repeat, rate growing, until the shape changes
  double growth = 2.0;      ///< rate multiplier per retry (capped at 0.5)
  double actuatorRate = 0;  ///< P(flip) per actuation bit
  int maxAttempts = 1000;   ///< retries before giving up on a change
};

/// What one call of LatticeBody::mutate did (for the run log).
struct LatticeMutationReport {
  int attempts = 0;              ///< mask draws it took
  bool maskGaveUp = false;       ///< maxAttempts draws never changed the shape: mask kept
  bool actuationFlipped = false; ///< some actuation bit differs from the parent's
  int actuationRedraws = 0;      ///< redraws because no spring was left actuated
};

/// The reference mutation for a geometry: 1/#triangles until changed,
/// 1/#edges for actuation bits.
LatticeMutation defaultMutation(const LatticeGeometry &g);

/// n random robots of a rows x cols lattice (the reference spec otherwise),
/// sampled one after another from EvoRng(seed): the bodies of benchmarks
/// and agreement tests.
std::vector<runtime::Robot> randomLatticeRobots(int rows, int cols, int n, uint64_t seed);

/// Lattice bodies: sampling, repair, mutation and expression.
class LatticeBody {
public:
  explicit LatticeBody(LatticeSpec spec);

  const LatticeSpec &spec() const { return spec_; }
  const LatticeGeometry &geometry() const { return geom_; }

  /// A random repaired, non-empty genome.
  LatticeGenome sample(EvoRng &rng) const;
  /// Repairs in place: fill holes (a triangle whose three edges all belong to
  /// present triangles becomes present), then keep the largest 4-connected
  /// component of the mask grid (ties: the one met first in row-major order).
  void repair(LatticeGenome &g) const;
  /// A mutated, repaired, non-empty copy of `parent` (see LatticeMutation);
  /// with untilChanged its shape (points, springs) differs from the parent's,
  /// not merely its mask (a translated mask expresses the same shape). The
  /// actuation flips are redrawn (up to maxAttempts times) while they leave
  /// no spring of the child actuated (docs/evolution.md, "ELDiR evolution").
  LatticeGenome mutate(const LatticeGenome &parent, const LatticeMutation &m, EvoRng &rng,
                       LatticeMutationReport *report = nullptr) const;
  /// The phenotype: points ordered by node (x, then y), springs by node pair.
  /// `nodes` / `edges`, when given, receive each point's lattice node number
  /// and each spring's lattice edge number.
  runtime::Robot express(const LatticeGenome &g, std::vector<int> *nodes = nullptr,
                         std::vector<int> *edges = nullptr) const;
  /// The number of the child's springs (present edges) that are actuated.
  int actuatedSprings(const LatticeGenome &g) const;
  /// True when no triangle is present.
  static bool empty(const LatticeGenome &g);

  /// {"rows": ["0110...", ...] (row y = 0 first), "actuation": "0101..."}.
  nlohmann::json toJson(const LatticeGenome &g) const;
  /// Reads toJson's format; throws evoc::Error naming the field if malformed.
  LatticeGenome fromJson(const nlohmann::json &j) const;

private:
  LatticeSpec spec_;
  LatticeGeometry geom_;
};

} // namespace evoc::evolve
