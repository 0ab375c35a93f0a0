// Plain descriptions of body parts, body-part grammars, grammar bodies and
// fixed cell bodies: what sema hands the runtime (no AST, no source ranges),
// and what the runtime's body models (runtime/evolve/bodies/GrammarBody.h,
// runtime/evolve/bodies/CellBody.h) build robots from. docs/grammars.md and
// docs/language.md give the language these come from.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "support/PortableMath.h"

namespace evoc::body {

/// A number that may depend on the part's continuous parameters: a small
/// postfix program (constants, parameter reads, + - * / neg sqrt sin cos).
struct Scalar {
  enum class Op : uint8_t { Const, Param, Add, Sub, Mul, Div, Neg, Sqrt, Sin, Cos };
  struct Term {
    Op op = Op::Const;
    double value = 0; ///< Const
    int param = -1;   ///< Param: index into PartSpec::params
  };
  std::vector<Term> code; ///< postfix, stack depth at most 64 (sema checks); empty means 0

  static Scalar constant(double v) { return Scalar{{Term{Op::Const, v, -1}}}; }
  /// True when no term reads a parameter.
  bool isConstant() const {
    for (const auto &t : code)
      if (t.op == Op::Param)
        return false;
    return true;
  }
};

/// A continuous parameter of a part: `param len = 1 in 0.5 .. 2;`.
struct ParamSpec {
  std::string name;
  double init = 0; ///< the default value (used by the static checks)
  double lo = 0, hi = 0;
};

/// One spring of a part, between two of its points.
struct SpringSpec {
  int a = 0, b = 0;
  double stiffness = 0; ///< resolved: the spring's, else the part's, else the body's
  double actuation = 0; ///< amplitude when actuated (resolved like stiffness)
  int gene = -1;        ///< actuation gene (index into PartSpec::genes), -1 = passive
};

/// An actuation gene: one bit that switches a set of springs on or off
/// together (a single actuatable spring, or a named spring group).
struct GeneSpec {
  std::string name; ///< the group's name, or "s<index>" for a single spring
  std::vector<int> springs;
};

/// A named, ordered list of a part's points where another part attaches.
struct PortSpec {
  std::string name;
  std::vector<int> points;
  /// A one-point port's levers (`hip(1, lever = 4)`, a hinge; in 3D
  /// `hip(1, lever = [4, 5])`, a ball joint): points of the part off the
  /// pin. Where a parent port and a child's attach port have as many, a
  /// motor spring joins each pair of levers in order (docs/grammars.md,
  /// Joints); empty: none.
  std::vector<int> levers;
  double leverStiffness = 0, leverActuation = 0; ///< the motor's (resolved like springs)
};

/// A body part: points, springs, ports, parameters, mirror map, cells.
struct PartSpec {
  std::string name;
  int dim = 2;
  std::vector<std::vector<Scalar>> points; ///< dim coordinates each
  std::vector<SpringSpec> springs;
  std::vector<GeneSpec> genes;
  std::vector<PortSpec> ports;
  std::vector<ParamSpec> params;
  /// mirror[i]: the point that point i maps to under the part's reflection
  /// (empty: the part declares no mirror).
  std::vector<int> mirror;
  /// Solid cells for overlap tests: each a convex polygon (2D) or a convex
  /// polyhedron's point set (3D), as point indices. Empty: the convex hull of
  /// all points is the one cell.
  std::vector<std::vector<int>> cells;
  /// The fill colour of its outline in pictures ("#rrggbb", its material's);
  /// empty: a colour of the pictures' palette.
  std::string colour;
};

/// One binding of an alternative: a port (or a tied pair of ports) and the
/// symbol expanded there.
struct BindingSpec {
  std::vector<int> ports; ///< one port, or two for a tied mirror pair [a, b]
  int symbol = -1;        ///< index into GrammarSpec::symbols
  bool optional = false;  ///< `Sym?`: the slot may stay empty
};

/// One alternative of a production: `part<attach>(bindings) @ weight`.
struct AlternativeSpec {
  int part = -1;   ///< index into GrammarSpec::parts
  int attach = -1; ///< the part's port that mates with the parent's port; -1 for the root
  std::vector<BindingSpec> bindings;
  double weight = 1;
  /// Orientation where the attach port does not fix the placement (one
  /// point in 2D; one or two in 3D): the angle gene's range, in degrees.
  bool hasAngle = false;
  double angleLo = 0, angleHi = 0;
  /// `turn = K`: which point of the parent port the child's first attach
  /// point meets is fixed (a port of three or more points); -1: a gene.
  int fixedTurn = -1;
};

/// A nonterminal symbol: its alternatives and its per-body limit.
struct SymbolSpec {
  std::string name;
  std::vector<AlternativeSpec> alternatives;
  int limit = -1; ///< `limit Sym = N;`: at most N nodes of this symbol; -1 none
  /// `depth Sym = N;`: at most N nodes of this symbol on any path from the
  /// root; -1 none.
  int depthLimit = -1;
  /// `scale Sym = F;`: a node of this symbol is F times its parent's size
  /// (the root: F times the body's scale).
  double levelScale = 1;
};

/// A body-part grammar with the parts it uses.
struct GrammarSpec {
  std::string name;
  std::vector<PartSpec> parts;
  std::vector<SymbolSpec> symbols;
  int start = -1; ///< the start symbol
};

/// What to do when two placed parts' cells penetrate.
enum class Overlap : uint8_t { Prune, Reject };

/// `body grammar NAME { ... }`: a grammar, its limits and scale.
struct GrammarBodySpec {
  std::string name;
  GrammarSpec grammar;
  int dim = 2;
  double scale = 1;   ///< part coordinates times scale
  double groundY = 0; ///< the lowest point rests at this height (the world's ground)
  int maxParts = 0;   ///< 0: no limit
  int maxPoints = 0;  ///< 0: no limit
  int maxSprings = 0; ///< 0: no limit
  int maxDepth = 0;   ///< 0: no limit (the root has depth 0)
  Overlap overlap = Overlap::Prune;
  double actuatorP = 0.5; ///< P(an actuation gene is on) when sampling
};

/// The variables a grammar body's mutation rate may use (Scalar::Term::param
/// indexes these), counted on the parent: `flip actuator p = 1 / actuators;`.
enum RateVar : int { kParts = 0, kSprings = 1, kActuators = 2 };

/// Variation rates of a lattice body (`mutation { flip cell p = ...; flip
/// actuator p = ...; }`, docs/language.md): the probability of flipping each
/// mask bit (redrawn until the shape changes when `untilChanged`) and each
/// actuation bit. A rate never given is -1: the reference rate, 1 / #cells
/// and 1 / #edges of the lattice.
struct LatticeMutationSpec {
  double cellRate = -1;
  bool untilChanged = true;
  double actuatorRate = -1;
};

/// Variation rates of a grammar body (`mutation { ... }`): the probability
/// per child of each structural operator, per continuous gene (perturb) and
/// per actuation gene (flip). A rate that is never given is 0.
struct GrammarMutationSpec {
  Scalar add, remove, swap, rearrange, combine;
  Scalar perturb;            ///< per continuous gene (parameter or angle)
  Scalar flip;               ///< per actuation gene
  bool untilChanged = false; ///< retry with growing rates until the robot changes
  int maxAttempts = 50;      ///< then the child is a copy (a logged fallback)
};

/// Which springs of a cell are actuated (docs/language.md, Fixed bodies), by
/// the axes along which a spring's two corners differ (the last axis is up).
/// Square cells, corners a = (i, j), b = (i, j+1), c = (i+1, j), d = (i+1, j+1):
/// vertical = ab, cd; horizontal = ac, bd; diagonal = ad, bc. Cube cells, the
/// 28 springs between their 8 corners: vertical = the 4 vertical edges;
/// horizontal = the 8 other edges; diagonal = the 12 face and 4 body
/// diagonals; leg = the vertical edges and the 8 side-face diagonals (Fang's
/// "leg" cubes); along_x / along_y = the 16 springs whose corners differ in x
/// (y). The last three are for cubes only.
enum class CellTemplate : uint8_t {
  None,
  Vertical,
  Horizontal,
  Diagonal,
  All,
  Leg,
  AlongX,
  AlongY
};

/// Whether template t actuates a spring whose two points differ along the
/// axes in `differs` (dim of them; the last one is up).
inline bool templateActuates(CellTemplate t, const bool *differs, int dim) {
  int n = 0;
  for (int c = 0; c < dim; ++c)
    n += differs[c];
  const bool up = differs[dim - 1];
  switch (t) {
  case CellTemplate::None:
    return false;
  case CellTemplate::Vertical:
    return up && n == 1;
  case CellTemplate::Horizontal:
    return !up && n == 1;
  case CellTemplate::Diagonal:
    return n >= 2;
  case CellTemplate::All:
    return true;
  case CellTemplate::Leg:
    return up && n < dim;
  case CellTemplate::AlongX:
    return differs[0];
  case CellTemplate::AlongY:
    return differs[1];
  }
  return false;
}

/// One cell of a fixed body: its grid position and actuation template.
struct CellSpec {
  int i = 0, j = 0;
  CellTemplate actuated = CellTemplate::None;
  int k = 0; ///< a cube cell's third (vertical) index; 0 for square cells
  /// This cell's own spring stiffness and actuation (a voxel's material);
  /// negative: the body's.
  double stiffness = -1, actuation = -1;
};

/// `body cells NAME { ... }`: a fixed, hand-designed body of unit cells on a
/// grid, square cells in 2D (docs/multitask.md, "2D bodies") or cube cells in
/// 3D (docs/multitask.md, "3D bodies"). Points are the cells' corners, merged
/// and numbered by first use; springs every pair of a cell's corners in order
/// (ab, ac, ad, bc, bd, cd for a square; ab, ac, ..., gh, 28, for a cube), a
/// spring already made by an earlier cell skipped.
/// One block of a particle body: a rectangle (a box in 3D) with its lower
/// corner and size, dim values each, and its actuator (-1: passive).
struct ParticleBlock {
  std::vector<double> lo, size;
  int actuator = -1;
};

struct CellBodySpec {
  std::string name;
  /// `body particles NAME { ... }` (docs/language.md, "Particle bodies"): the
  /// fixed body is made of particle blocks instead of cells, particlesAlong
  /// each axis of a block, at origin + lo + (i + 0.5) * w / n (DiffTaichi's
  /// layout).
  bool particles = false;
  std::vector<ParticleBlock> blocks;
  double spacing = 0;         ///< the world grid's dx
  int density = 2;            ///< particles per grid spacing along each axis
  double particleSpacing = 0; ///< `spacing = S;`: the particles' own, else 0
  /// The particles a block of side w gets along one axis: w / particleSpacing
  /// (rounded: the checker requires it whole) when that is given, else
  /// DiffTaichi's int(w / dx) * density.
  int64_t particlesAlong(double w) const {
    if (particleSpacing > 0)
      return int64_t(std::llround(w / particleSpacing));
    return spacing > 0 ? int64_t(w / spacing) * density : 0;
  }
  int dim = 2;                      ///< 2: square cells; 3: cube cells
  double edge = 0.05;               ///< cell side
  std::vector<double> origin{0, 0}; ///< position of grid corner (0, 0[, 0]), dim values
  double stiffness = 3e4;           ///< every spring's
  double actuation = 0.1;           ///< actuated springs' coefficient (others 0)
  std::vector<CellSpec> cells;      ///< in the order written (it numbers points and springs)
};

/// `material NAME { ... }` (docs/language.md, Materials): what a voxel of
/// it, or a part made of it, gives its springs, and its colour.
struct MaterialSpec {
  std::string name;
  double stiffness = 3e4; ///< every spring's (resolved: the material's, else the body's)
  double actuation = 0.1; ///< amplitude of the springs `actuated` selects
  CellTemplate actuated = CellTemplate::None;
  std::string colour; ///< "#rrggbb"; empty: the pictures' palette
  /// Whether a voxel of this material carries actuators.
  bool actuates() const { return actuated != CellTemplate::None && actuation > 0; }
};

/// `body voxel NAME { ... }` (docs/grammars.md, Voxel bodies): a bounding
/// box of square (2D) or cube (3D) cells, each empty or of one material.
struct VoxelBodySpec {
  std::string name;
  int dim = 2;
  std::vector<int> size;               ///< cells along each axis, dim values (the last is up)
  double edge = 0.05;                  ///< a cell's side
  std::vector<double> origin{0, 0};    ///< where the box's corner (0, 0[, 0]) is before the lift
  std::vector<MaterialSpec> materials; ///< a voxel's value v > 0 is materials[v - 1]
  /// Sampling weights: weights[0] for an empty cell, weights[v] for
  /// materials[v - 1] (not normalised).
  std::vector<double> weights;
  int cells() const {
    int n = 1;
    for (int s : size)
      n *= s;
    return n;
  }
};

/// The variables a voxel body's mutation rate may use, counted on the
/// parent: `resample voxel p = 1 / voxels;`.
enum VoxelRateVar : int { kVoxels = 0, kBoxCells = 1 };

/// `mutation { resample voxel p = P [until changed]; ... }` of a voxel
/// body: each cell of the box is redrawn from the sampling weights with
/// probability P (Evolution Gym's); and evoc's per-child operators, each
/// applied with its probability: add (a voxel on an empty cell beside the
/// body), remove (a voxel whose removal keeps the body valid) and swap (one
/// voxel's material for another). Without rules: resample 0.1 until
/// changed; with rules, a rate not given is 0.
struct VoxelMutationSpec {
  Scalar resample = Scalar::constant(0.1);
  Scalar add, remove, swap;
  bool untilChanged = true;
  int maxAttempts = 50; ///< then the child is a copy (a logged fallback)
};

/// Evaluates a Scalar whose Param terms index `vars` (part parameters, or
/// RateVar counts). Defined inline so every layer can use it.
inline double evalScalar(const Scalar &s, const double *vars) {
  double st[64];
  int n = 0;
  for (const auto &t : s.code) {
    switch (t.op) {
    case Scalar::Op::Const:
      st[n++] = t.value;
      break;
    case Scalar::Op::Param:
      st[n++] = vars[t.param];
      break;
    case Scalar::Op::Add:
      --n;
      st[n - 1] += st[n];
      break;
    case Scalar::Op::Sub:
      --n;
      st[n - 1] -= st[n];
      break;
    case Scalar::Op::Mul:
      --n;
      st[n - 1] *= st[n];
      break;
    case Scalar::Op::Div:
      --n;
      st[n - 1] /= st[n];
      break;
    case Scalar::Op::Neg:
      st[n - 1] = -st[n - 1];
      break;
    case Scalar::Op::Sqrt:
      st[n - 1] = std::sqrt(st[n - 1]);
      break;
    case Scalar::Op::Sin:
      st[n - 1] = portableSin(st[n - 1]); // the same bits on every machine
      break;
    case Scalar::Op::Cos:
      st[n - 1] = portableCos(st[n - 1]);
      break;
    }
  }
  return n ? st[n - 1] : 0.0;
}

} // namespace evoc::body
