// The checked program: what sema hands to irgen and the runtime. The AST (with
// its annotations) plus plain C++ structs of every evaluated setting, so that
// later layers neither resolve names nor evaluate setting expressions again.
#pragma once

#include "frontend/AST.h"
#include "support/BodySpec.h"
#include "support/CommandSpec.h"
#include "support/Descriptors.h"
#include "support/FitnessKinds.h"
#include "support/Ground.h"
#include "support/Optimizers.h"
#include "support/StateLimit.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace evoc {

class DiagnosticEngine;
class SourceManager;

namespace sema {

enum class Precision : uint8_t { F64, F32 };

/// world.ground = flat(height = h, friction = mu) | terrain("file.csv", friction = mu)
struct Ground {
  std::string kind = "flat"; ///< "flat" or "terrain"
  double height = 0;         ///< flat: the height; terrain: the profile's lowest height
  double friction = 1.0;
  std::string file; ///< terrain("file.csv"): the path, resolved against the file's folder
  /// 2D terrain: (x, height) rows, x increasing; the ground is linear between
  /// rows and flat beyond the first and the last.
  TerrainProfile profile;
  /// 3D terrain: heights on a grid, bilinear, the edges continued beyond it.
  HeightField field;
  /// world.scene = [box(...), ...]: static boxes (docs/language.md, "Scenes").
  std::vector<SceneBox> scene;
  /// world.objects = [box(...), ...]: movable boxes (docs/language.md, "Objects").
  std::vector<WorldObject> objects;

  /// The shape the runtime rests bodies on and draws: terrain, boxes, objects.
  GroundShape shape() const { return {profile, field, scene, objects}; }
};

/// The evaluated `world { ... }`.
struct World {
  int dim = 2;
  double dt = 0.004;
  int64_t steps = 1000; ///< number of states x[0] .. x[steps-1]
  Precision precision = Precision::F64;
  double gravity = -9.8;
  double damping = 0;
  double dashpot = 0; ///< spring dashpot coefficient (read as world.dashpot by a physics)
  Ground ground;
  std::optional<int64_t> checkpoint;      ///< world.checkpoint = K (states kept every K steps)
  double stateLimit = kDefaultStateLimit; ///< world.state_limit: beyond it a rollout blew up
  /// world.grid = grid(nodes = (NX, NY[, NZ]), dx = H) (docs/language.md,
  /// "Grids and particles"): nodes per axis (empty: no grid) and spacing.
  /// Node (i, j) is element i * NY + j of a grid set (3D: (i * NY + j) * NZ + k).
  std::vector<int64_t> gridNodes;
  double gridDx = 0;
  const ast::PhysicsDecl *physics = nullptr; ///< world.physics = NAME (or the only physics)
};

/// A part: points (dim coordinates each), springs (point index pairs), ports.
struct Port {
  std::string name;
  std::vector<int> points;
};
struct Part {
  std::string name;
  std::vector<std::vector<double>> points;
  std::vector<std::pair<int, int>> springs;
  std::vector<Port> ports;
  const ast::PartDecl *decl = nullptr;
};

/// A production alternative: a part with each named port bound to a symbol
/// ("" = left empty).
struct GrammarAlternative {
  std::string part;
  std::vector<std::pair<std::string, std::string>> ports; ///< (port, symbol)
  double weight = 1.0;
};
struct GrammarRule {
  std::string symbol;
  std::vector<GrammarAlternative> alternatives;
};
struct BodyGrammar {
  std::string name;
  std::string start;
  std::vector<GrammarRule> rules;
};

/// `body lattice`, `body grammar`, `body voxel` or `body cells` (fixed; see
/// CellBodySpec).
struct Body {
  std::string name;
  ast::BodyKind kind = ast::BodyKind::Lattice;
  // lattice
  std::string cell; ///< the part used as cell (e.g. "triangle")
  int64_t rows = 0, cols = 0;
  double edge = 0.05;
  double stiffness = 3e4;
  double actuation = 0.1;
  // repair = fill_holes, largest_component (either, both or neither)
  bool fillHoles = false;
  bool largestComponent = false;
  // grammar
  std::string grammar;
  int64_t maxParts = 0;
  double scale = 1.0; ///< grammar body: part coordinates times scale
  const ast::BodyDecl *decl = nullptr;
};

/// An optimizer call: normalized_sgd(step = S), sgd(lr = L) or adam(lr,
/// beta1, beta2, eps), and its named numeric arguments.
struct Optimizer {
  OptimizerKind kind = OptimizerKind::NormalizedStep;
  std::map<std::string, double> args; ///< step / lr, beta1, beta2, eps
};

/// How an iteration's episodes start. Fresh (continueAfter < 0): every
/// episode from the body's initial state. `continued(after = N, ...)`
/// (docs/multitask.md, "Training and validation"): from iteration N on
/// (counted from 0), episode b starts from the final state of episode b of
/// the previous iteration, except one in every `step`: those with
/// b % step == iteration % step start afresh,
/// step = min(resetEveryMax, resetEvery + (iteration - N) / growEvery).
struct Episodes {
  int64_t continueAfter = -1;
  int64_t resetEvery = 2;
  int64_t resetEveryMax = 2;
  int64_t growEvery = 0; ///< 0: step stays resetEvery
};

struct Learn {
  int64_t iterations = 35;
  Optimizer optimizer;
  /// `inherit = weights`: a child starts from its parent's trained weights
  /// where the body is unchanged; `none` (ELDiR): every child learns from
  /// scratch.
  bool inheritWeights = false;
  /// Episodes per robot per iteration (each with its own commands); the
  /// loss is their mean, one optimiser step on the mean gradient.
  int64_t batch = 1;
  Episodes episodes;
  const ast::LossDecl *loss = nullptr;
  const ast::ControllerDecl *controller = nullptr;
};

/// fitness = R(sign * loss) with R over the learning curve: max|min|mean|last|first.
struct Fitness {
  FitnessKind kind = FitnessKind::MaxNegLoss; ///< support/FitnessKinds.h
};

/// One axis of `map_elites(...)` (docs/language.md, Evolution).
struct Descriptor {
  DescriptorKind kind = DescriptorKind::Actuators; ///< support/Descriptors.h
  std::string term;                                ///< the loss term's name, for term
  double lo = 0, hi = 1;
  int64_t bins = 10;
  SourceRange at; ///< the descriptor as written
};

struct Select {
  /// truncation(mu_plus_lambda), tournament(K), map_elites(...) or random
  /// (mu_comma_lambda is refused: the engine always selects from parents
  /// and children together).
  enum class Kind : uint8_t { Truncation, Tournament, MapElites, Random };
  Kind kind = Kind::Truncation;
  int64_t tournamentSize = 0;
  std::vector<Descriptor> descriptors; ///< map_elites: one or two axes
  double qdOffset = 0;                 ///< map_elites: QD-score counts fitness above it
};

struct Evolve {
  int64_t population = 50;
  SourceRange populationAt; ///< its setting, else the evolve block's name
  int64_t generations = 50;
  uint64_t seed = 1;
  int64_t offspring = 0; ///< lambda, children per generation after the first; 0: population
  Learn learn;
  Fitness fitness;
  Select select;
  std::vector<InvalidRule> invalid; ///< support/FitnessKinds.h; nonfinite() adds none
};

/// `train { ... }`: one fixed body trained without evolution.
struct Train {
  Learn learn;
  uint64_t seed = 1;
  int64_t validateEvery = 0; ///< 0: validate only at the start and the end
};

/// The checked program. Owns the AST; every pointer into it stays valid as
/// long as this lives.
struct CheckedProgram {
  std::unique_ptr<ast::Program> ast;
  World world;
  std::vector<Part> parts;
  /// Every part, evaluated (parallel to `parts`); spring stiffness and
  /// actuation resolved as the spring's, else the part's, else 3e4 and 0.1.
  std::vector<body::PartSpec> partSpecs;
  /// The chosen body, when it is a grammar body: its grammar with exactly
  /// the parts it uses, stiffness and actuation resolved with the body's.
  std::optional<body::GrammarBodySpec> grammarBody;
  /// The chosen body, when it is a fixed `body cells`: its cells and settings.
  std::optional<body::CellBodySpec> cellBody;
  /// The mutation rates of a grammar body (all 0 otherwise).
  /// The `mutation` block of a lattice body (flip cell, flip actuator).
  body::LatticeMutationSpec latticeMutation;
  body::GrammarMutationSpec grammarMutation;
  /// The chosen body, when it is a `body voxel`: its box, materials
  /// (resolved with the body's stiffness and actuation) and weights.
  std::optional<body::VoxelBodySpec> voxelBody;
  /// The mutation of a voxel body (Evolution Gym's rate when none is given).
  body::VoxelMutationSpec voxelMutation;
  std::vector<BodyGrammar> grammars;
  Body body;
  bool hasBody = false;
  Evolve evolve;
  bool hasEvolve = false;
  Train train;
  bool hasTrain = false;
  /// Commands and their task mixture (empty without a `commands` block).
  body::CommandSpec commands;
  /// The selected physics, controller and loss (also in world / evolve.learn).
  const ast::PhysicsDecl *physics = nullptr;
  const ast::ControllerDecl *controller = nullptr;
  const ast::LossDecl *loss = nullptr;
  /// Every fn, by name (call sites also point at them: CallExpr::fn).
  std::map<std::string, const ast::FnDecl *> fns;
};

/// Options of a check.
struct CheckOptions {
  /// Extra folders searched for imports before EVOC_STDLIB_PATH and the
  /// compiled-in stdlib (`--stdlib DIR`).
  std::vector<std::string> stdlibDirs;
  /// `--set key=value` overrides, applied before the checks, in order:
  /// world.steps=200, evolve.population=50, evolve.learn.iterations=3, ...
  std::vector<std::pair<std::string, std::string>> overrides;
  /// Ignore EVOC_STDLIB_PATH (tests).
  bool ignoreEnv = false;
  /// Require a complete experiment (world, physics, body, evolve): `run`,
  /// `sim`. Without it a library file (stdlib/physics/...) checks on its own.
  bool requireExperiment = false;
  /// The command evolves the body (`evoc run`): a fixed body, which does
  /// not evolve, is refused.
  bool evolveBody = false;
};

/// Parse `path` and everything it imports, check it, and return the checked
/// program, or nullopt when there were errors (all reported to `diags`).
std::optional<CheckedProgram> checkFile(const std::string &path, const CheckOptions &options,
                                        SourceManager &sources, DiagnosticEngine &diags);

/// As checkFile, for a main file already loaded into `sources` (tests, fuzzing).
std::optional<CheckedProgram> checkBuffer(int file, const CheckOptions &options,
                                          SourceManager &sources, DiagnosticEngine &diags);

/// As checkBuffer, for tools that want the program even when it has errors
/// (the language server, docs/editors.md): the AST of the main file and its
/// imports in `ast`, annotated as far as checking got (the rest of the
/// program is complete only when `diags` has no errors); null only when a
/// file could not be read or parsed.
std::shared_ptr<const CheckedProgram> analyseBuffer(int file, const CheckOptions &options,
                                                    SourceManager &sources,
                                                    DiagnosticEngine &diags);

} // namespace sema
} // namespace evoc
