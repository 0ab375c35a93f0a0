// The state irgen keeps while lowering one kernel: the builder, what names
// are bound to, the element a field expression is evaluated at, and which
// buffer holds each field. Shared by the step, controller and loss lowering.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "frontend/AST.h"
#include "ir/Builder.h"
#include "irgen/IRGen.h"
#include "irgen/ValueNumbering.h"
#include "sema/Program.h"
#include "support/SourceRange.h"

namespace evoc::irgen {

/// A lowered value: one IR value per component (1 for scalar and bool).
using Val = std::vector<ir::ValueId>;

/// A construct this back end cannot lower; becomes a diagnostic.
struct LowerError {
  SourceRange range;
  std::string message;
};

/// Which state buffer a field read goes to.
enum class StateTime { Current, Next };

/// Lowers expressions of one kernel. Field expressions (`point.x - com`) are
/// evaluated at the element `ctx` names; lets of field type are lowered
/// lazily at each use, robot-level lets once where they are declared. A fn
/// call (or a lazy let) whose arguments have the value numbers of an earlier
/// one in the same context, still visible and with no store in between,
/// reuses that one's value instead of being inlined again.
class Lowerer {
public:
  Lowerer(const sema::CheckedProgram &prog, ir::Module &m, ir::Kernel &k);

  ir::Builder &b() { return b_; }
  ir::Module &module() { return m_; }

  Val expr(const ast::Expr *e);
  /// Binds a `let` (eagerly unless its value is a per-element field).
  void bindLet(const ast::LetStmt *let);
  void bindLoopVar(const ast::ForStmt *loop, ir::ValueId index) { loops_[loop] = index; }
  /// Sets the element at which whole fields are read; returns the old one.
  std::pair<const ast::SetDecl *, ir::ValueId> setContext(const ast::SetDecl *set,
                                                          ir::ValueId index);
  /// The IR value of the element index an element expression denotes
  /// (a loop variable, or `s.a` gathered through an endpoint).
  ir::ValueId elementIndex(const ast::Expr *e);
  /// Grids and computed indices (GridGen.cpp, docs/language.md "Grids and
  /// particles"). Runs `body` once per node of `loop`'s stencil (unrolled,
  /// the last axis fastest) with the loop variable bound to that node.
  void forEachStencilNode(const ast::ForStmt *loop, const std::function<void()> &body);
  /// Whether the element `e` denotes lies in its set (a bool value), or 0
  /// when it always does (a loop variable, an endpoint of one).
  ir::ValueId elementValid(const ast::Expr *e);
  /// A scatter's value, NaN where its target element lies outside its set.
  Val scatterValue(const ast::Expr *target, Val v);
  /// index * comps + c as an IR int.
  ir::ValueId flatIndex(ir::ValueId index, int comps, int c);
  /// Stamps the location of `r` on what is emitted next.
  void at(const SourceRange &r);

  // Buffers (created on first use).
  int setId(const ast::SetDecl *s);
  int fieldBuffer(const ast::FieldDecl *f); // current / body / temp
  int nextStateBuffer(const ast::FieldDecl *f);
  /// A differentiable buffer of `role` holding state field f (name unset).
  ir::Buffer stateFieldBuffer(const ast::FieldDecl *f, ir::Role role);
  int timedStateBuffer(const ast::FieldDecl *f, int64_t time);
  /// The state at the window's time plus `offset` (< 0) in a LossStep kernel.
  int offsetStateBuffer(const ast::FieldDecl *f, int64_t offset);
  /// Command `index` (CheckedProgram::commands) at a time.
  int commandBuffer(int index, ir::TimeRef time, int64_t at);
  /// ground_height / ground_normal / ground_gap / ground_speed (`id`) of the
  /// point or velocity `a0` (gap, speed) at a horizontal position (GroundGen.cpp).
  Val ground(ast::Builtin id, const Val &a0, const Val &horizontal);
  /// The same in 3D: flat, or a height field's bilinear cell under (x, y).
  Val ground3(ast::Builtin id, const Val &a0, const Val &at);
  /// in_contact / contact_normal / contact_gap / contact_speed / push_out.
  Val contact(const ast::CallExpr *e);
  /// The scene box face chosen at position x: {inside any box, c, normal}.
  Val sceneFace(const Val &x);
  /// A command's value (its components) at a time.
  Val commandValue(int index, ir::TimeRef time, int64_t at);
  int endpointBuffer(const ast::EndpointDecl *e);
  static int comps(const ast::Type &t) { return t.comps(); }

  /// The window variable's time in a LossStep kernel: `point.x[t]` reads the
  /// current state buffer. Null outside one.
  const ast::WindowExpr *window = nullptr;
  /// In the "loss" kernel: the slot of "loss.window" each reduced window
  /// (max, min, or a nonlinear use) is read from. Null elsewhere.
  const std::map<const ast::WindowExpr *, int> *reducedWindows = nullptr;

  [[noreturn]] static void unsupported(const SourceRange &r, const std::string &msg);

  // Arithmetic on lowered values with scalar broadcasting.
  Val map1(ir::Op op, const Val &a);
  Val map2(ir::Op op, const Val &a, const Val &b);
  ir::ValueId sumOf(const Val &a);

private:
  Val name(const ast::NameExpr *e);
  Val member(const ast::MemberExpr *e);
  Val index(const ast::IndexExpr *e);
  Val call(const ast::CallExpr *e);
  Val builtin(const ast::CallExpr *e);
  Val reduce(const ast::CallExpr *e);
  Val partMean(const ast::CallExpr *e);
  Val stencilSum(const ast::StencilExpr *e);
  /// The constructors (vec2, vec3, mat2, mat3), transpose / det / trace /
  /// outer / polar_rotation (MatrixGen.cpp).
  Val matrix(const ast::CallExpr *e);
  /// The product of a matrix (entries by rows) and a matrix or a column vector.
  Val matProduct(const Val &a, const Val &v);
  /// set[i]: the element's index, clamped into the set; its validity into *valid.
  ir::ValueId elementAt(const ast::IndexExpr *e, ir::ValueId *valid);
  /// The index of the element `e` denotes and whether it lies in its set
  /// (elementIndex and elementValid, each computed once).
  std::pair<ir::ValueId, ir::ValueId> elementRef(const ast::Expr *e);
  /// A field of an element (NaN when the element lies outside its set).
  Val readField(const ast::MemberExpr *e);
  /// node.index / node.offset.
  Val gridMember(const ast::MemberExpr *e);
  /// Folds `arg` (a field) over its set with `update` from `init`; with a
  /// `weights` buffer (>= 0) each element's value is multiplied by its
  /// weight and the weights' sum is returned in *weightSum.
  Val accumulate(const ast::Expr *arg, ir::Op update, double init, int weights,
                 ir::ValueId *weightSum);
  Val inlineFn(const ast::CallExpr *e);
  Val binary(const ast::BinaryExpr *e);
  /// The value of a field let at the element in context, lowered once per
  /// context.
  Val lazyLet(const ast::LetStmt *let);
  /// What a memoised value depends on besides its own arguments: the element
  /// in context and the window being lowered.
  void contextKey(std::vector<uint64_t> &key);
  /// The memo entry of `key`, if it is still usable here.
  const Val *recall(const std::vector<uint64_t> &key) const;
  void remember(std::vector<uint64_t> key, const Val &v);
  /// Refuses the kernel once it holds more than kMaxKernelInstructions,
  /// naming the outermost expansion in progress.
  void checkSize(const ast::Expr *at);
  Val loadField(int buffer, int comps, ir::ValueId element);
  const ast::SetDecl *setOfField(const ast::FieldDecl *f) const { return f->owner; }

  const sema::CheckedProgram &prog_;
  ir::Module &m_;
  ir::Builder b_;
  std::map<const ast::LetStmt *, Val> lets_;
  std::map<const ast::ForStmt *, ir::ValueId> loops_;
  std::vector<std::map<const ast::ParamDecl *, Val>> frames_;
  /// The stencil node each stencil loop variable is bound to now.
  struct Stencil {
    Val coords, offset;
    ir::ValueId valid = 0;
  };
  std::map<const ast::ForStmt *, Stencil> stencils_;
  const ast::SetDecl *ctxSet_ = nullptr;
  ir::ValueId ctxIndex_ = 0;
  ValueNumbering vn_;
  struct Memo {
    Val value;
    std::vector<uint64_t> loops; ///< Builder::openLoops() when it was lowered
    uint64_t writes = 0;         ///< Builder::writes() then
  };
  std::map<std::vector<uint64_t>, Memo> memo_;
  const ast::Expr *expanding_ = nullptr; ///< the outermost fn call being inlined
};

/// Lowering of each part of the program into `m` (each one file).
void lowerStep(const sema::CheckedProgram &prog, ir::Module &m);
void lowerController(const sema::CheckedProgram &prog, Lowerer &L);
void lowerLoss(const sema::CheckedProgram &prog, ir::Module &m);

/// Adds a buffer unless one of that name exists; returns its index.
int ensureBuffer(ir::Module &m, ir::Buffer buf);

} // namespace evoc::irgen
