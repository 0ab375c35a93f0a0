// The evoc AST: every construct of the language as plain structs with source
// ranges, plus the annotations sema fills in (resolved names, types, element
// sets), so that lowering (irgen) never resolves a name again.
//
// Ownership: nodes are owned by unique_ptr in their parent; a Program owns its
// Modules. Pointers between nodes (annotations) stay valid as long as the
// Program lives. Kinds are enums; use isa<>/cast<>/dynCast<> below.
//
// Reading guide for lowering:
//  - Expr::type is the checked type of every expression (Type below).
//  - NameExpr::ref / MemberExpr::ref / CallExpr::callee say what each name is.
//  - A field of the physics used as a whole value (`point.x` in a controller
//    or loss) is MemberExpr{ref = SetField}; with a time, IndexExpr{base =
//    that MemberExpr, index = time}, annotated with IndexExpr::time*.
#pragma once

#include "support/SourceRange.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace evoc::ast {

struct SetDecl;
struct FieldDecl;
struct EndpointDecl;
struct FnDecl;
struct ParamDecl;
struct LetStmt;
struct ForStmt;
struct WindowExpr;
struct PhysicsDecl;

/// A name as written, with its range.
struct Ident {
  std::string name;
  SourceRange range;
};

// ---------------------------------------------------------------- types ----

/// Kinds of checked types.
enum class TypeKind : uint8_t {
  Error, ///< a type error was already reported; suppresses follow-ups
  Void,  ///< statements, settings values with no type
  Bool,
  Int,     ///< a time index (T, a window variable, integer arithmetic on them)
  Scalar,  ///< a float of the module's precision
  Vec,     ///< a float vector of `width` 2 or 3
  Mat,     ///< a square float matrix, `width` x `width` (2 or 3), row-major
  Element, ///< a loop variable: one element of set `set`
  Set,     ///< an element set's name used as a namespace (`point` in `point.x`)
  World,   ///< `world` or a record inside it (`world.ground`)
  String,
  Tuple, ///< (a, b, ...) in settings (part points, springs)
  List,  ///< [a, b, ...] in settings
};

/// A checked type. When `set` is non-null and kind is Bool/Int/Scalar/Vec, the
/// value is a per-element field over that set (field<set, T>); for Element
/// and Set kinds `set` names the set.
struct Type {
  TypeKind kind = TypeKind::Error;
  int width = 1;                ///< Vec, Mat: 2 or 3; otherwise 1
  const SetDecl *set = nullptr; ///< field / element / set: which element set

  static Type error() { return {TypeKind::Error}; }
  static Type scalar() { return {TypeKind::Scalar}; }
  static Type boolean() { return {TypeKind::Bool}; }
  static Type integer() { return {TypeKind::Int}; }
  static Type vec(int w) { return {TypeKind::Vec, w}; }
  static Type mat(int w) { return {TypeKind::Mat, w}; }
  bool isError() const { return kind == TypeKind::Error; }
  bool isField() const {
    return set && (kind == TypeKind::Bool || kind == TypeKind::Int || kind == TypeKind::Scalar ||
                   kind == TypeKind::Vec || kind == TypeKind::Mat);
  }
  /// Scalar, Int (promotes to scalar), Vec or Mat, per element or not.
  bool isNumeric() const {
    return kind == TypeKind::Scalar || kind == TypeKind::Int || kind == TypeKind::Vec ||
           kind == TypeKind::Mat;
  }
  /// How many floats a value holds: a vector's width, a matrix's width
  /// squared (row-major), 1 otherwise.
  int comps() const {
    return kind == TypeKind::Vec ? width : kind == TypeKind::Mat ? width * width : 1;
  }
  bool operator==(const Type &o) const {
    return kind == o.kind && width == o.width && set == o.set;
  }
  bool operator!=(const Type &o) const { return !(*this == o); }
};

/// A type as written in the source: `scalar`, `bool`, `vec2`, `vec3`,
/// `mat2`, `mat3`.
struct TypeExpr {
  Ident name;
  Type resolved; ///< sema: the type it denotes (Error if unknown)
};

// ---------------------------------------------------------- expressions ----

enum class ExprKind : uint8_t {
  Number,
  Bool,
  String,
  Name,
  Member,
  Index,
  Call,
  Unary,
  Binary,
  If,
  Window,
  Stencil,
  Tuple,
  List,
};

/// A node class of kind K of the hierarchy `Base` (Expr, Stmt, Decl): its
/// `Kind` for isa / cast, and its base constructed with it.
template <class Base, auto K> struct NodeOf : Base {
  static constexpr decltype(K) Kind = K;
  NodeOf() : Base(K) {}
};

struct Expr {
  ExprKind kind;
  SourceRange range;
  Type type; ///< sema: the checked type (Error until checked)

  explicit Expr(ExprKind k) : kind(k) {}
  virtual ~Expr() = default;
};
using ExprPtr = std::unique_ptr<Expr>;

/// A numeric literal: 3, 0.5, 3e4.
struct NumberExpr : NodeOf<Expr, ExprKind::Number> {
  double value = 0;
  bool isInteger = false; ///< written without '.', 'e' (usable as a count/time)
  std::string text;
};

/// `true` or `false`.
struct BoolExpr : NodeOf<Expr, ExprKind::Bool> {
  bool value = false;
};

/// A string literal (terrain file names); escapes already decoded.
struct StringExpr : NodeOf<Expr, ExprKind::String> {
  std::string value;
};

/// What a bare identifier refers to (sema).
enum class NameRef : uint8_t {
  Unresolved,
  Let,       ///< a `let` in a fn, step, controller or loss: NameExpr::let
  Param,     ///< a fn parameter: NameExpr::param
  Element,   ///< a `for` loop variable: NameExpr::loop (its set: type.set)
  WindowVar, ///< a window variable `t` in sum(t in a..b: ...): NameExpr::window
  Set,       ///< an element set name (`point`): NameExpr::set
  World,     ///< `world`
  LastTime,  ///< `T`: index of the last state, steps - 1 (NameExpr::constValue)
  Command,   ///< a command (`commands { ... }`): NameExpr::command is its index
  Constant,  ///< a named constant (`pi`): NameExpr::constValue
  Decl,      ///< a top-level declaration used as a value (settings only)
};

struct NameExpr : NodeOf<Expr, ExprKind::Name> {
  std::string name;
  // sema:
  NameRef ref = NameRef::Unresolved;
  const LetStmt *let = nullptr;
  const ParamDecl *param = nullptr;
  const ForStmt *loop = nullptr;
  const WindowExpr *window = nullptr;
  const SetDecl *set = nullptr;
  double constValue = 0;
  int command = -1;
};

/// What `base.member` is (sema).
enum class MemberRef : uint8_t {
  Unresolved,
  Field,        ///< element.field (`p.x`, `s.a.x`): MemberExpr::field
  Endpoint,     ///< element.endpoint (`s.a`): MemberExpr::endpoint; type Element
  Component,    ///< vector component .x .y .z: MemberExpr::component (0..2);
                ///< also on per-element vector fields (`point.x[T].x`); a
                ///< matrix entry .xy (row x, column y): row * width + column
  SetField,     ///< set.field (`point.x`): the field over all elements
  WorldSetting, ///< world.dt, world.ground.height: worldKey, constValue
  GridIndex,    ///< node.index of a grid element: its grid coordinates (vecN)
  GridOffset,   ///< node.offset of a stencil element: its offset in the stencil (vecN)
};

struct MemberExpr : NodeOf<Expr, ExprKind::Member> {
  ExprPtr base;
  Ident member;
  // sema:
  MemberRef ref = MemberRef::Unresolved;
  const FieldDecl *field = nullptr;
  const EndpointDecl *endpoint = nullptr;
  int component = -1;
  std::string worldKey;  ///< "dt", "gravity", "ground.height", ...
  double constValue = 0; ///< WorldSetting with a numeric value
};

/// `base[index]`. On a state field (`point.x[T]`, `point.x[t]`) it selects the
/// state at a time; that is the only indexing the language has.
struct IndexExpr : NodeOf<Expr, ExprKind::Index> {
  ExprPtr base;
  ExprPtr index;
  // sema: the time, when constant (`x[0]`, `x[T]`, `x[T - 1]`) or relative to
  // a window variable (`x[t]`, `x[t - 1]`): time = window + timeOffset.
  bool timeIsConstant = false;
  int64_t timeValue = 0;
  /// `actuator[i]` in a step: the element of set `base` at the computed
  /// index (docs/language.md, "Grids and particles"); the type is Element.
  bool elementAt = false;
  const WindowExpr *timeWindow = nullptr;
  int64_t timeOffset = 0;
};

/// Builtin functions (sema resolves CallExpr::builtin).
enum class Builtin : uint8_t {
  None,
  // element-wise math
  Norm,
  Dot,
  Clamp,
  Abs,
  Min,
  Max,
  Exp,
  Log,
  Sin,
  Cos,
  Tanh,
  Sqrt,
  Pow,
  Floor,
  Vec2,
  Vec3,
  // small matrices (docs/language.md, "Matrices")
  Mat2,          ///< mat2(a, b, c, d) by rows, or mat2(row0, row1)
  Mat3,          ///< mat3(9 numbers) by rows, or mat3(row0, row1, row2)
  Transpose,     ///< transpose(M)
  Det,           ///< det(M)
  Trace,         ///< trace(M)
  Outer,         ///< outer(u, v): u v^T
  PolarRotation, ///< polar_rotation(F): R of F = R S, 2 x 2 only
  // reductions of a field over its set to a robot-level value
  Sum,
  Mean,
  ReduceMin,
  ReduceMax,
  // controller inputs: sin_waves(N, omega = W), repeat(N, value)
  SinWaves,
  Repeat,
  // the ground under a horizontal position (flat or a terrain profile)
  GroundHeight, ///< ground_height(x)
  GroundNormal, ///< ground_normal(x): the unit normal
  GroundGap, ///< ground_gap(p, x): p's signed distance to the ground line under x, along its normal
  GroundSpeed, ///< ground_speed(v, x): v's component along the normal of the ground under x
  // the contact surface at a position: the ground, or a scene box's face
  InContact,     ///< in_contact(x): x is below the ground or inside a box
  ContactNormal, ///< contact_normal(x): the contact surface's outward unit normal
  ContactGap,    ///< contact_gap(p, x): p's signed distance to the contact plane chosen at x
  ContactSpeed,  ///< contact_speed(v, x): v's component along that plane's normal
  PushOut,       ///< push_out(q, x): q moved out of that plane, then onto the ground
  // part_mean(NAME, F): the mean of a point field over the points of the
  // body's parts (or voxels' materials) named NAME
  PartMean,
};

/// What a call is (sema).
enum class CallRef : uint8_t {
  Unresolved,
  Builtin, ///< CallExpr::builtin
  Fn,      ///< a user fn, to inline: CallExpr::fn
  Setting, ///< a constructor-like call in a setting (flat(...), adam(...)),
           ///< interpreted by sema into the CheckedProgram
};

/// `name = value` inside a call's argument list.
struct NamedArg {
  Ident name;
  ExprPtr value;
};

struct CallExpr : NodeOf<Expr, ExprKind::Call> {
  Ident callee;
  std::vector<ExprPtr> args;
  std::vector<NamedArg> namedArgs;
  // sema:
  CallRef ref = CallRef::Unresolved;
  Builtin builtin = Builtin::None;
  const FnDecl *fn = nullptr;
};

enum class UnaryOp : uint8_t { Neg, Plus, Not };

struct UnaryExpr : NodeOf<Expr, ExprKind::Unary> {
  UnaryOp op = UnaryOp::Neg;
  ExprPtr operand;
};

enum class BinaryOp : uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  Lt,
  Le,
  Gt,
  Ge,
  Eq,
  Ne,
  And,
  Or,
};

struct BinaryExpr : NodeOf<Expr, ExprKind::Binary> {
  BinaryOp op = BinaryOp::Add;
  SourceRange opRange;
  ExprPtr lhs, rhs;
};

/// `if cond then a else b`: a select; both branches are evaluated.
struct IfExpr : NodeOf<Expr, ExprKind::If> {
  ExprPtr cond, thenExpr, elseExpr;
};

enum class ReduceOp : uint8_t { Sum, Mean, Min, Max };

/// A reduction over a window of time: `sum(t in 0..T: expr)` (bounds
/// inclusive). Only in losses.
struct WindowExpr : NodeOf<Expr, ExprKind::Window> {
  ReduceOp op = ReduceOp::Sum;
  Ident op_name; ///< `sum`, `mean`, `min`, `max` as written
  Ident var;
  ExprPtr lo, hi;
  ExprPtr body;
  // sema: the evaluated bounds, inclusive, 0 <= lo <= hi <= T.
  int64_t loValue = 0, hiValue = -1;
};

/// `(a, b, ...)` in settings: part points and springs.
struct TupleExpr : NodeOf<Expr, ExprKind::Tuple> {
  std::vector<ExprPtr> elems;
};

/// `[a, b, ...]` in settings.
struct ListExpr : NodeOf<Expr, ExprKind::List> {
  std::vector<ExprPtr> elems;
};

// ----------------------------------------------------------- statements ----

enum class StmtKind : uint8_t { Let, Assign, For, Return };

struct Stmt {
  StmtKind kind;
  SourceRange range;

  explicit Stmt(StmtKind k) : kind(k) {}
  virtual ~Stmt() = default;
};
using StmtPtr = std::unique_ptr<Stmt>;

/// `let name = value;` or `let name: type = value;`.
struct LetStmt : NodeOf<Stmt, StmtKind::Let> {
  Ident name;
  std::unique_ptr<TypeExpr> declaredType; ///< optional
  ExprPtr value;
  // sema:
  Type type; ///< the value's type
  bool used = false;
};

enum class AssignOp : uint8_t { Set, AddTo, SubFrom };

/// What an assignment writes (sema).
enum class AssignRef : uint8_t {
  Unresolved,
  NextState,  ///< `p.x = e`: the state at t+1 of the element's own field
  Accumulate, ///< `s.a.dv += e` / `p.dv -= e`: a scatter-add into a temp field
};

/// `target = value;`, `target += value;`, `target -= value;` in a step.
struct AssignStmt : NodeOf<Stmt, StmtKind::Assign> {
  ExprPtr target; ///< a MemberExpr chain: elem.field or elem.endpoint.field
  AssignOp op = AssignOp::Set;
  SourceRange opRange;
  ExprPtr value;
  // sema:
  AssignRef ref = AssignRef::Unresolved;
  const FieldDecl *field = nullptr;
  const EndpointDecl *through = nullptr; ///< endpoint gathered through, if any
};

/// `stencil(node, base, size)` after `in`: the size^dim nodes base + o of a
/// grid set, o in {0 .. size-1}^dim (docs/language.md, "Grids and particles").
struct StencilSpec {
  ExprPtr base;
  ExprPtr size;
  SourceRange range;
  // sema:
  int64_t sizeValue = 0;
};

/// `for v in set { ... }`: runs the body once per element of the set.
struct ForStmt : NodeOf<Stmt, StmtKind::For> {
  Ident var;
  Ident setName;
  std::vector<StmtPtr> body;
  /// `for n in stencil(node, base, 3) { ... }`: the loop runs over a stencil
  /// of grid set `setName` (nested in a loop of the step).
  std::unique_ptr<StencilSpec> stencil;
  // sema:
  const SetDecl *set = nullptr;
};

/// `sum(n in stencil(node, base, 3): expr)`: a reduction of expr over the
/// nodes of a stencil; `loop` binds the variable (its body is empty).
struct StencilExpr : NodeOf<Expr, ExprKind::Stencil> {
  ReduceOp op = ReduceOp::Sum;
  Ident op_name;
  std::unique_ptr<ForStmt> loop;
  ExprPtr body;
};

/// `return value;` (fn and loss bodies).
struct ReturnStmt : NodeOf<Stmt, StmtKind::Return> {
  ExprPtr value;
};

// ------------------------------------------------------------- settings ----

/// `key = v1, v2, ...;` in world, evolve, learn, part, grammar and body
/// blocks. Each value may carry a trailing word (`32 tanh`), in controllers.
struct Setting {
  Ident key;
  std::vector<ExprPtr> values;
  std::vector<Ident> suffixes; ///< parallel to values; empty name if none
  SourceRange range;
};

/// A `name { ... }` block nested in a settings block (`learn { ... }`).
struct SettingsBlock;
struct NestedBlock {
  Ident name;
  std::unique_ptr<SettingsBlock> block;
  SourceRange range;
};

struct SettingsBlock {
  std::vector<Setting> settings;
  std::vector<NestedBlock> blocks;

  /// The last setting named `key`, or null.
  const Setting *find(const std::string &key) const {
    const Setting *r = nullptr;
    for (const auto &s : settings)
      if (s.key.name == key)
        r = &s;
    return r;
  }
  /// The nested block named `name`, or null.
  const SettingsBlock *findBlock(const std::string &name) const {
    for (const auto &b : blocks)
      if (b.name.name == name)
        return b.block.get();
    return nullptr;
  }
};

// --------------------------------------------------------- declarations ----

enum class DeclKind : uint8_t {
  Import,
  World,
  Fn,
  Physics,
  Material,
  Part,
  Grammar,
  Body,
  Mutation,
  Controller,
  Loss,
  Evolve,
  Commands,
  Train,
  Requires,
};

struct Decl {
  DeclKind kind;
  SourceRange range;
  Ident name; ///< empty for anonymous blocks (import, world, mutation, evolve)

  explicit Decl(DeclKind k) : kind(k) {}
  virtual ~Decl() = default;
};
using DeclPtr = std::unique_ptr<Decl>;

/// `import "path";`
struct ImportDecl : NodeOf<Decl, DeclKind::Import> {
  std::string path; ///< as written
  SourceRange pathRange;
  std::string resolvedPath; ///< frontend: the file it resolved to ("" if not)
  int resolvedFile = -1;    ///< frontend: SourceManager file id
};

/// A declaration that is one settings block: `world { ... }`,
/// `evolve { ... }`, `commands { ... }`, `train { ... }`, `requires { ... }`.
template <DeclKind K> struct SettingsDecl : NodeOf<Decl, K> { SettingsBlock body; };

/// `world { dim = 2; dt = 0.004; ... }`
using WorldDecl = SettingsDecl<DeclKind::World>;

/// A fn parameter `name: type`.
struct ParamDecl {
  Ident name;
  TypeExpr type;
  SourceRange range;
  bool used = false; // sema
};

/// `fn name(p: type, ...) -> type { let ...; return e; }`: a pure function,
/// inlined at every call.
struct FnDecl : NodeOf<Decl, DeclKind::Fn> {
  std::vector<ParamDecl> params;
  TypeExpr result;
  std::vector<StmtPtr> body; ///< LetStmt... ReturnStmt
};

/// Field kinds of an element set.
enum class FieldKind : uint8_t {
  State, ///< evolves over time; written once per step as the next state
  Temp,  ///< zero at the start of every step; only accumulated (+= / -=)
  Body,  ///< per-element data from the robot's body (rest length, ...)
  Param, ///< trainable per-element parameter (gradient taken)
  Input, ///< written by the controller's outputs, read by the step
};

/// `state x: vec2;` (also temp / body / param / input), with an optional
/// initial value for params: `param k: scalar = 1;`.
struct FieldDecl {
  FieldKind kind = FieldKind::State;
  Ident kindWord;
  Ident name;
  TypeExpr type;
  ExprPtr init; ///< optional
  SourceRange range;
  const SetDecl *owner = nullptr; ///< frontend: the set it belongs to
  /// sema: init's value per component (a number for every component, or
  /// vec2(a, b) / vec3(a, b, c)); empty without init.
  std::vector<double> initValue;
};

/// `a: point` in `set spring(a: point, b: point)`: an index into another set.
struct EndpointDecl {
  Ident name;
  Ident setName;
  SourceRange range;
  const SetDecl *owner = nullptr;  ///< frontend
  const SetDecl *target = nullptr; ///< sema: the set it points into
};

/// `set name(endpoints) { fields }` inside a physics.
struct SetDecl {
  Ident name;
  /// `set node: grid { ... }`: the word after ':' (empty if none); grid is
  /// true when it reads `grid` (the world's grid nodes are its elements).
  Ident kindWord;
  bool grid = false;
  std::vector<EndpointDecl> endpoints;
  std::vector<std::unique_ptr<FieldDecl>> fields;
  SourceRange range;
  const PhysicsDecl *physics = nullptr; ///< frontend
  int index = -1;                       ///< frontend: position in its physics

  const FieldDecl *findField(const std::string &n) const {
    for (const auto &f : fields)
      if (f->name.name == n)
        return f.get();
    return nullptr;
  }
  const EndpointDecl *findEndpoint(const std::string &n) const {
    for (const auto &e : endpoints)
      if (e.name.name == n)
        return &e;
    return nullptr;
  }
};

/// `physics name { set ...; step { ... } }`
struct PhysicsDecl : NodeOf<Decl, DeclKind::Physics> {
  std::vector<std::unique_ptr<SetDecl>> sets;
  std::vector<StmtPtr> step; ///< ForStmt and LetStmt at top level
  SourceRange stepRange;

  const SetDecl *findSet(const std::string &n) const {
    for (const auto &s : sets)
      if (s->name.name == n)
        return s.get();
    return nullptr;
  }
};

/// `param len = 1 in 0.5 .. 2;` in a part: a continuous gene usable in the
/// part's coordinates.
struct PartParam {
  Ident name;
  ExprPtr init, lo, hi;
  SourceRange range;
};

/// `material name { stiffness = ...; actuated = horizontal; colour = "#rrggbb"; }`
struct MaterialDecl : NodeOf<Decl, DeclKind::Material> {
  SettingsBlock body;
};

/// `part name { param ...; points = [...]; springs = [...]; ports = n(i, j), ...; }`
struct PartDecl : NodeOf<Decl, DeclKind::Part> {
  std::vector<PartParam> params; ///< in declaration order
  SettingsBlock body;
};

/// `port: Sym`, `port: Sym?`, `port: _` or a tied pair `[a, b]: Sym[?]` in a
/// production; an omitted port stays empty.
struct PortBinding {
  Ident port;   ///< the (first) port
  Ident symbol; ///< "_" for explicitly empty
  Ident port2;  ///< tied pair: the mirrored port; empty name otherwise
  bool tied = false;
  bool optional = false; ///< `Sym?`
  SourceRange range;
};

struct Alternative {
  Ident part;
  Ident attach;          ///< `<attach>`: the child's own mating port; empty name if not written
  bool hasAngle = false; ///< `angle = LO .. HI` (degrees) was written
  double angleLo = 0, angleHi = 0;
  SourceRange angleRange;
  bool hasTurn = false; ///< `turn = K` was written: the turn is fixed, not a gene
  double turn = 0;
  SourceRange turnRange;
  std::vector<PortBinding> ports;
  ExprPtr weight; ///< optional `@ w`: relative probability when sampling
  SourceRange range;
};

/// `limit Sym = N;` in a grammar.
/// `limit Sym = N;`, `depth Sym = N;` or `scale Sym = F;` in a grammar.
struct SymbolLimit {
  Ident kind; ///< limit, depth or scale
  Ident symbol;
  ExprPtr value;
  SourceRange range;
};

/// `Sym -> Alt | Alt ... ;`
struct Production {
  Ident lhs;
  std::vector<Alternative> alternatives;
  SourceRange range;
};

/// `grammar name { start = Sym; Sym -> Part(port: Sym) | ...; }`
struct GrammarDecl : NodeOf<Decl, DeclKind::Grammar> {
  SettingsBlock body;
  std::vector<SymbolLimit> limits;
  std::vector<Production> productions;
};

enum class BodyKind : uint8_t { Lattice, Grammar, Cells, Voxel };

/// `body lattice name { ... }`, `body grammar name { ... }` or `body cells
/// name { ... }` (a fixed body of square cells).
struct BodyDecl : NodeOf<Decl, DeclKind::Body> {
  BodyKind bodyKind = BodyKind::Lattice;
  Ident kindWord;
  SettingsBlock body;
};

/// `flip cell p = EXPR until changed;`, `add p = 0.3;`, ...
struct MutationRule {
  Ident op;       ///< flip, add, remove, swap, rearrange, combine, perturb
  Ident target;   ///< cell, actuator (flip only); empty otherwise
  Ident rateName; ///< the `p` as written
  ExprPtr rate;
  bool untilChanged = false;
  SourceRange range;
};

/// `mutation { rules }`
struct MutationDecl : NodeOf<Decl, DeclKind::Mutation> {
  std::vector<MutationRule> rules;
};

/// `hidden = 32 tanh` (one entry per hidden layer).
struct LayerSpec {
  ExprPtr units;
  Ident activation;
  int64_t unitsValue = 0; ///< sema
};

/// `outputs = spring.act tanh`: writes an input field of the physics.
struct OutputSpec {
  ExprPtr target; ///< a set field, `spring.act`
  Ident activation;
  const FieldDecl *field = nullptr; ///< sema: the input field written
};

/// `controller name { let ...; inputs = ...; hidden = ...; outputs = ...;
/// init = ...; }`: an MLP from the inputs to the physics' input fields.
struct ControllerDecl : NodeOf<Decl, DeclKind::Controller> {
  std::vector<std::unique_ptr<LetStmt>> lets;
  std::vector<ExprPtr> inputs; ///< sin_waves(..), robot-level, per-element
  std::vector<LayerSpec> hidden;
  std::vector<OutputSpec> outputs;
  ExprPtr init; ///< optional: xavier_normal(w1 = 2, w2 = 3)
  SourceRange inputsRange, hiddenRange, outputsRange;
};

/// `loss name = expr;` or `loss name { let ...; return expr; }`.
struct LossDecl : NodeOf<Decl, DeclKind::Loss> {
  std::vector<std::unique_ptr<LetStmt>> lets;
  ExprPtr value;
};

/// `evolve { population = ..; learn { ... } fitness = ..; ... }`
using EvolveDecl = SettingsDecl<DeclKind::Evolve>;
/// `commands { period = ..; TASK { p = ..; NAME = value; ... } ... validate { ... } }`
using CommandsDecl = SettingsDecl<DeclKind::Commands>;
/// `train { seed = ..; validate_every = ..; learn { ... } }`
using TrainDecl = SettingsDecl<DeclKind::Train>;
/// `requires { dim = 3; commands = v, h, c; in_2d = "..."; }`: the world a
/// library file is written for (docs/language.md, "Libraries").
using RequiresDecl = SettingsDecl<DeclKind::Requires>;

/// One parsed file.
struct Module {
  int file = -1; ///< SourceManager file id
  std::string path;
  std::vector<DeclPtr> decls;
};

/// A whole program: the main file and every file it imports (transitively),
/// dependencies first, the main file last. All top-level names share one
/// namespace.
struct Program {
  std::vector<std::unique_ptr<Module>> modules;
  Module *main() const { return modules.empty() ? nullptr : modules.back().get(); }
};

// -------------------------------------------------------------- casting ----

template <class T, class N> bool isa(const N *n) { return n && n->kind == T::Kind; }
template <class T, class N> T *cast(N *n) { return static_cast<T *>(n); }
template <class T, class N> const T *cast(const N *n) { return static_cast<const T *>(n); }
template <class T, class N> T *dynCast(N *n) { return isa<T>(n) ? static_cast<T *>(n) : nullptr; }
template <class T, class N> const T *dynCast(const N *n) {
  return isa<T>(n) ? static_cast<const T *>(n) : nullptr;
}

/// Calls f(child) on each direct sub-expression of e, in source order: a
/// member's or index's base (and the index), a call's arguments (named ones
/// last), an operand, both sides, an if's three parts, a window's bounds and
/// body, a tuple's or list's elements.
template <class F> void forEachChild(const Expr &e, F &&f) {
  auto one = [&](const ExprPtr &x) {
    if (x) // null only where a parse error left a hole
      f(*x);
  };
  auto each = [&](const std::vector<ExprPtr> &v) {
    for (const auto &x : v)
      one(x);
  };
  switch (e.kind) {
  case ExprKind::Number:
  case ExprKind::Bool:
  case ExprKind::String:
  case ExprKind::Name:
    return;
  case ExprKind::Member:
    one(cast<MemberExpr>(&e)->base);
    return;
  case ExprKind::Index:
    one(cast<IndexExpr>(&e)->base);
    one(cast<IndexExpr>(&e)->index);
    return;
  case ExprKind::Call:
    each(cast<CallExpr>(&e)->args);
    for (const auto &a : cast<CallExpr>(&e)->namedArgs)
      one(a.value);
    return;
  case ExprKind::Unary:
    one(cast<UnaryExpr>(&e)->operand);
    return;
  case ExprKind::Binary:
    one(cast<BinaryExpr>(&e)->lhs);
    one(cast<BinaryExpr>(&e)->rhs);
    return;
  case ExprKind::If:
    one(cast<IfExpr>(&e)->cond);
    one(cast<IfExpr>(&e)->thenExpr);
    one(cast<IfExpr>(&e)->elseExpr);
    return;
  case ExprKind::Window:
    one(cast<WindowExpr>(&e)->lo);
    one(cast<WindowExpr>(&e)->hi);
    one(cast<WindowExpr>(&e)->body);
    return;
  case ExprKind::Stencil:
    if (const auto &spec = cast<StencilExpr>(&e)->loop->stencil) {
      one(spec->base);
      one(spec->size);
    }
    one(cast<StencilExpr>(&e)->body);
    return;
  case ExprKind::Tuple:
    each(cast<TupleExpr>(&e)->elems);
    return;
  case ExprKind::List:
    each(cast<ListExpr>(&e)->elems);
    return;
  }
}

/// Spelling of operators and kinds, for dumps and messages.
const char *binaryOpSpelling(BinaryOp op);
const char *unaryOpSpelling(UnaryOp op);
const char *fieldKindSpelling(FieldKind k);
const char *builtinName(Builtin b);
/// "scalar", "vec2", "field<point, vec2>", "element of spring", ...
std::string typeToString(const Type &t);

} // namespace evoc::ast
