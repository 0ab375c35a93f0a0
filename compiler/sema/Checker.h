// Internal to sema: the Checker, the state shared by the checks of one
// program (top-level names, evaluated world, selected decls), and the
// expression context used while typing expressions.
#pragma once

#include "sema/Program.h"
#include "support/BodySpec.h"
#include "support/Diagnostics.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace evoc::sema {

/// Where an expression appears; decides which names and forms are allowed.
enum class Ctx {
  Fn,         ///< a fn body: params, lets, world
  Step,       ///< a physics step: loop elements, lets, world, set fields
  Controller, ///< controller lets and inputs: set fields (current state), world
  Loss,       ///< a loss: states at times, windows, T
  Setting,    ///< a settings value (evaluated to a constant)
};

/// One scope of `let`s (and, in fns, params).
struct Scope {
  std::map<std::string, ast::LetStmt *> lets;
  std::map<std::string, ast::ParamDecl *> params;
  ast::ForStmt *loop = nullptr;            ///< a for loop's variable
  const ast::WindowExpr *window = nullptr; ///< a window's variable
};

/// The context of the expression being checked.
struct ExprCtx {
  Ctx ctx = Ctx::Setting;
  const ast::PhysicsDecl *physics = nullptr; ///< for set names
  std::vector<Scope> scopes;
  /// Step: the temp fields accumulated so far (read-before-write warning).
  std::set<const ast::FieldDecl *> *accumulated = nullptr;
  /// Step: input fields read, with the first place each is read.
  std::map<const ast::FieldDecl *, SourceRange> *inputsRead = nullptr;
  /// Controller inputs: sin_waves(...) is allowed at the top of an item.
  bool allowSinWaves = false;
  /// Loss: a state field is the base of an IndexExpr (it has a time).
  bool timed = false;
};

/// The keys of a `learn { ... }` block (and of --set evolve.learn.* / train.learn.*).
const std::vector<std::string> &learnKeys();
/// The keys of the `world { ... }` block (and of --set world.*).
const std::vector<std::string> &worldKeys();

class Checker {
public:
  Checker(const CheckOptions &options, SourceManager &sources, DiagnosticEngine &diags)
      : options(options), sources(sources), diags(diags) {}

  std::optional<CheckedProgram> run(std::unique_ptr<ast::Program> program);

  // ---- shared state
  const CheckOptions &options;
  SourceManager &sources;
  DiagnosticEngine &diags;
  CheckedProgram out;
  /// Top-level named decls (fn, physics, part, grammar, body, controller, loss).
  std::map<std::string, ast::Decl *> names;
  std::vector<ast::WorldDecl *> worlds;
  std::vector<ast::EvolveDecl *> evolves;
  std::vector<ast::CommandsDecl *> commandDecls;
  std::vector<ast::TrainDecl *> trains;
  std::vector<ast::MutationDecl *> mutations;
  std::vector<ast::PhysicsDecl *> physicsDecls;
  std::vector<ast::ControllerDecl *> controllers;
  std::vector<ast::LossDecl *> losses;
  std::vector<ast::FnDecl *> fns;
  std::vector<ast::BodyDecl *> bodies;
  std::vector<ast::PartDecl *> parts;
  std::vector<ast::MaterialDecl *> materials;
  std::vector<ast::GrammarDecl *> grammars;
  /// Each `requires` block with the file it is in.
  std::vector<std::pair<ast::RequiresDecl *, const ast::Module *>> requirements;
  bool haveWorld = false;
  /// world.dim is known: stated by the world (or its default there) or by
  /// a library's `requires`. Without it vectors and parts take any size.
  bool dimKnown = false;
  /// The commands block has no error (its commands can be compared).
  bool commandsOk = true;

  // ---- CheckFile.cpp
  void collect(ast::Program &program);
  bool applyOverrides();

  // ---- Requires.cpp
  /// The `requires` blocks of the program's files: each checked against the
  /// world and the commands block, or, in a program without a world, the
  /// world they state (its dim, its commands). False when a library does
  /// not fit the program (reported once per import): nothing that depends
  /// on it is checked.
  bool checkRequires(const ast::Program &program);

  // ---- Settings.cpp: constants and the world
  /// Evaluates a constant numeric expression; reports and returns nullopt if
  /// it is not one. `what` names the setting in messages.
  std::optional<double> evalNumber(const ast::Expr &e, const std::string &what,
                                   const std::map<std::string, double> *vars = nullptr);
  std::optional<double> evalNumberRaw(const ast::Expr &e, const std::string &what,
                                      const std::map<std::string, double> *vars);
  std::optional<int64_t> evalInt(const ast::Expr &e, const std::string &what,
                                 const std::map<std::string, double> *vars = nullptr);
  /// A bare name value (`f64`, `mlp`); reports if it is not a name.
  std::optional<std::string> evalName(const ast::Expr &e, const std::string &what);
  ast::Expr *single(const ast::Setting &s, const std::string &what);
  void checkKnownKeys(const ast::SettingsBlock &b, const std::string &block,
                      const std::vector<std::string> &keys,
                      const std::vector<std::string> &blocks = {});
  void checkWorld();
  /// world.ground: flat(..), terrain("file.csv", ..) or terrain_random(..).
  void checkGround(ast::Expr &e);
  /// world.grid = grid(nodes = (...), dx = H): into out.world.gridNodes / gridDx.
  void checkGrid(ast::Expr &e);
  /// world.scene: [box(..), ...] into out.world.ground.scene (Scene.cpp),
  /// after the ground (a box resting on it has no bottom face).
  void checkScene(ast::Expr &e);
  /// world.objects: [box(.., mass = M), ...] into out.world.ground.objects
  /// (Scene.cpp), after the scene (an object may not start inside a box).
  void checkObjects(ast::Expr &e);
  /// A box(..) of the scene or the objects: its corners, each checked;
  /// `named` lists the named arguments it may have (read by the caller).
  std::optional<SceneBox> evalBox(ast::CallExpr &call, const std::string &what,
                                  const std::vector<std::string> &named);
  void selectPhysics();

  // ---- Materials.cpp
  /// A checked material; stiffness and actuation it does not set are the
  /// body's (resolveMaterial).
  struct MaterialInfo {
    const ast::MaterialDecl *decl = nullptr;
    body::MaterialSpec spec;
    bool hasStiffness = false, hasActuation = false;
    bool ok = true; ///< no error in this material
  };
  std::vector<MaterialInfo> materialInfos; ///< in declaration order
  void checkMaterials();
  /// The material a value names; reports an unknown name (with a
  /// suggestion) and returns null.
  const MaterialInfo *materialRef(const ast::Expr &e, const std::string &what);
  /// The material with the body's defaults for what it leaves unset.
  body::MaterialSpec resolveMaterial(const MaterialInfo &m, double stiffness,
                                     double actuation) const;

  // ---- Parts.cpp: parts into out.parts and out.partSpecs (parallel)
  /// What a body may still override on a part: its own settings, as written.
  struct PartExtra {
    std::optional<double> stiffness, actuation;         ///< the part's
    std::vector<std::optional<double>> springStiffness; ///< each spring's own
    std::vector<std::vector<double>> defaults;          ///< points at default params
    bool ok = true;                                     ///< no error in this part
  };
  std::vector<PartExtra> partExtras; ///< parallel to out.partSpecs
  /// Parts with an error: what uses them is not checked (it would repeat it).
  std::set<std::string> failedParts;
  void checkParts();
  /// Compiles a coordinate into a Scalar over the part's params (`params`:
  /// name -> index); reports anything else at its location.
  bool compileScalar(const ast::Expr &e, const std::map<std::string, int> &params,
                     body::Scalar &out, const std::string &what,
                     const std::string &namesWhat = "the part's params");
  /// The index of part `name` in out.partSpecs, or -1.
  int partIndex(const std::string &name) const;

  // ---- Grammars.cpp: grammars into out.grammars and grammarInfos (parallel)
  /// A checked grammar: its spec (parts: indices into out.partSpecs until a
  /// body copies them) and its smallest derivation.
  struct GrammarInfo {
    const ast::GrammarDecl *decl = nullptr;
    body::GrammarSpec spec;     ///< spec.parts left empty; see usedParts
    std::vector<int> usedParts; ///< AlternativeSpec::part -> out.partSpecs index
    bool ok = true;             ///< no error in this grammar
    /// The start symbol's minimal completion (fewest parts, required
    /// bindings only): totals and nodes per symbol.
    int minParts = 0, minPoints = 0, minSprings = 0, minDepth = 0;
    std::vector<int> minCount;
  };
  std::vector<GrammarInfo> grammarInfos;

  // ---- GrammarBody.cpp
  /// `body grammar`: its settings into `body` and, when chosen, out.grammarBody.
  void checkGrammarBody(const ast::BodyDecl &bd, Body &body, bool chosen);

  // ---- CellBody.cpp
  /// `body cells`: its settings into `body` and, when chosen, out.cellBody.
  void checkCellBody(const ast::BodyDecl &bd, Body &body, bool chosen);
  /// `body particles`: blocks of particles (ParticleBody.cpp); a fixed body
  /// like `body cells`, given as out.cellBody with `particles` set.
  void checkParticleBody(const ast::BodyDecl &bd, Body &body, bool chosen);
  /// `origin = (x, y[, z]);` of a cells or particles body into spec.origin;
  /// `meaning` says what the point is, for the message.
  void checkBodyOrigin(const ast::Expr &e, body::CellBodySpec &spec, const std::string &meaning);
  /// The body fields a particle body fills (point.actuator_id) and its sets.
  void checkParticleFields(const ast::PhysicsDecl &ph);

  // ---- VoxelBody.cpp
  /// `body voxel`: its settings into `body` and, when chosen, out.voxelBody.
  void checkVoxelBody(const ast::BodyDecl &bd, Body &body, bool chosen);

  // ---- Bodies.cpp: parts, grammars, bodies, mutations
  void checkGrammars();
  void checkBody();
  void checkMutations();
  /// A voxel body's rules (`resample voxel p = P [until changed];`) into
  /// out.voxelMutation.
  void checkVoxelMutations();
  /// With a body: the selected physics has the point and spring fields the
  /// runtime fills from a robot (point.x, spring.a/b, rest, stiffness, ...).
  void checkBodyFields();
  /// The physics' sets the world fills: 'object' and sets of (point,
  /// object) pairs (docs/language.md, "Objects"); Bodies.cpp.
  void checkObjectSets();

  // ---- Evolve.cpp
  void checkEvolve();
  /// A `learn { ... }` block: its controller, loss and keys (selectLearn),
  /// then its settings (checkLearn; `prefix`: "evolve.learn").
  void selectLearn(const ast::SettingsBlock *learn, SourceRange at, Learn &out);
  void checkLearn(const ast::SettingsBlock *learn, const std::string &prefix, Learn &out);
  /// `episodes = fresh()` or `continued(after = N, ...)` (sema::Episodes).
  void checkEpisodes(ast::Expr &e, const std::string &what, Episodes &out);
  void checkTrain();
  // ---- MapElites.cpp
  /// `select = map_elites(D1, D2, qd_offset = X)`: its descriptors (at most
  /// two), each `KIND(range = (LO, HI), bins = N)` or `term(NAME, ...)`.
  void checkMapElites(ast::CallExpr &call, Select &out);
  // ---- Commands.cpp
  void checkCommands();
  /// The index of command `name`, or -1.
  int commandIndex(const std::string &name) const;

  // ---- Exprs.cpp: typing expressions
  ast::Type check(ast::Expr &e, ExprCtx &cx);
  /// Reports "undefined name" with a did-you-mean from `candidates`.
  void undefined(const SourceRange &r, const std::string &what, const std::string &name,
                 const std::vector<std::string> &candidates);

  // ---- Stmts.cpp: fns, physics, controllers, losses
  void checkFns();
  void checkPhysics(ast::PhysicsDecl &p);
  void checkController(ast::ControllerDecl &c);
  void checkLoss(ast::LossDecl &l);
  void checkLet(ast::LetStmt &let, ExprCtx &cx);
  void warnUnused(Scope &scope);
  /// The physics controllers and losses are checked against.
  const ast::PhysicsDecl *learningPhysics() const;
  /// The scope of a controller's or a loss's expressions (`ctx`) over the
  /// learning physics, with its `lets` checked into it.
  ExprCtx learningScope(Ctx ctx, std::vector<std::unique_ptr<ast::LetStmt>> &lets);
};

/// A cell's actuation template (`vertical`, ..., the cube-only ones in 3D
/// only); reports anything else at its location.
std::optional<body::CellTemplate> cellTemplate(Checker &C, const ast::Expr &te, int dim);

/// The number of distinct points (cell corners) of a fixed body.
int cellBodyPoints(const body::CellBodySpec &spec);

/// A grid set's own rules: the world has a grid, no endpoints, temps only
/// (Grids.cpp).
void checkGridSet(Checker &C, const ast::SetDecl &s);
/// A stencil's set (a grid set), base (a vecN) and size (a constant), and
/// where it stands (in a loop of a step, not in another stencil); resolves
/// loop.set. False, reported, if it cannot be lowered.
bool checkStencil(Checker &C, ExprCtx &cx, ast::ForStmt &loop);

/// Edit distance, for did-you-mean suggestions.
int editDistance(const std::string &a, const std::string &b);
/// The closest candidate within a small edit distance, or "".
std::string closest(const std::string &name, const std::vector<std::string> &candidates);

} // namespace evoc::sema
