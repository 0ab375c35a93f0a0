// The evoc IR: a typed SSA loop-nest IR over flat per-robot buffers.
//
// One Module holds everything compiled for one experiment: the element sets
// (point, spring, unit, ...), the buffers a robot owns (state, body data,
// controller parameters, temporaries, and after autodiff their adjoints), and
// the kernels (step, loss, and their adjoints) that read and write them.
//
// Design (see docs/architecture.md):
//  - Every value is a scalar: float (the module's precision), int (i64) or
//    bool. Buffers of elem Type::I (index buffers: spring endpoints, ...)
//    hold int32_t in memory; a Load widens to i64, a Store narrows. Float
//    buffers hold the module precision (double or float). Vectors of the
//    language are lowered to scalars by irgen; a field of vec2 over points
//    is a buffer with comps = 2, index = i * 2 + c.
//  - Control flow is structured: a Loop instruction owns a nested Block that
//    runs once per element of a set; its block argument is the element index.
//  - Reductions use accumulator locals: `Local` declares a mutable float slot
//    (initialised to Inst::f, which may be +-inf, each time the `local`
//    instruction runs: one declared in a loop body restarts every
//    iteration), LocalAdd/LocalMax/LocalMin update it, LocalGet reads it.
//    Rule (checked by the verifier): a local is read only in the block that
//    declares it, after the last instruction that updates it. Updates of one
//    slot happen in program order, loops in index order (a float sum's
//    rounding depends on it).
//  - Memory: Load / Store / AccAdd (scatter-add) on buffers at an int index.
//    Rule: within one kernel a buffer is either stored (each element at most
//    once) or accumulated, never both; a temporary is written before it is
//    read; no kernel reads a NextState or Output buffer. Out-of-range
//    indices are compiler or body-data bugs (the interpreter checks).
//  - Exact semantics every back end must match (the interpreter is the
//    reference): min(a, b) = b < a ? b : a; max(a, b) = b > a ? b : a
//    (ties and NaN in b pick a); local.max: s = x > s ? x : s; local.min:
//    s = x < s ? x : s; select(c, a, b) = c ? a : b (its result type is the
//    type of a and b, F or I); comparisons take two F or two I operands
//    (eq/ne also two B); f32 modules compute every float op in float.
//  - A kernel is called for one robot at a time with the C ABI of KernelFn
//    (see below); the population loop lives in the runtime / device layer.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace evoc::ir {

/// Scalar types. F is the module's float precision (f64 or f32).
enum class Type : uint8_t { None, F, I, B };

/// Float precision of a whole module.
enum class Precision : uint8_t { F64, F32 };

/// Traits of an op, declared with it in EVOC_IR_OPS (MLIR's ODS traits):
///  - kPure: its result depends on its operands alone (no memory, no
///    accumulator): it may be deduplicated, moved or recomputed freely;
///  - kMemory: it reads or writes a buffer (Inst::buffer);
///  - kLocal: it declares, updates or reads an accumulator local;
///  - kCostly: the cost class of ops lowered to long instruction sequences
///    or calls (tanh, exp, ...) or with 13-20 cycles of latency (div, sqrt):
///    worth a vectorised loop of their own (CPU loop fission);
///  - kFlop: one floating-point operation in FLOP counts (ir/Cost.h): the
///    float arithmetic and math functions, and the accumulating adds.
enum OpTrait : unsigned {
  kNoTraits = 0,
  kPure = 1,
  kMemory = 2,
  kLocal = 4,
  kCostly = 8,
  kFlop = 16
};

// The one list of ops. X(Name, "mnemonic", operand count (-1: variadic),
// result type, traits). Printer, parser, verifier, interpreter, autodiff and
// every code generator switch over this list, with no `default:`, so that
// adding an op is one edit in each, found by the compiler (-Werror=switch).
#define EVOC_IR_OPS(X)                                                                             \
  /* constants and kernel-level scalars */                                                         \
  X(ConstF, "constf", 0, F, kPure) /* float literal Inst::f */                                     \
  X(ConstI, "consti", 0, I, kPure) /* int literal Inst::i */                                       \
  X(ConstB, "constb", 0, B, kPure) /* bool literal Inst::i != 0 */                                 \
  X(Time, "time", 0, I, kPure)     /* index t of the input state of this step */                   \
  X(Size, "size", 0, I, kPure)     /* number of elements of set Inst::set */                       \
  /* float arithmetic */                                                                           \
  X(Add, "add", 2, F, kPure | kFlop)                                                               \
  X(Sub, "sub", 2, F, kPure | kFlop)                                                               \
  X(Mul, "mul", 2, F, kPure | kFlop)                                                               \
  X(Div, "div", 2, F, kPure | kCostly | kFlop)                                                     \
  X(Neg, "neg", 1, F, kPure)                                                                       \
  X(Min, "min", 2, F, kPure)                                                                       \
  X(Max, "max", 2, F, kPure)                                                                       \
  X(Pow, "pow", 2, F, kPure | kCostly | kFlop)                                                     \
  X(Sin, "sin", 1, F, kPure | kCostly | kFlop)                                                     \
  X(Cos, "cos", 1, F, kPure | kCostly | kFlop)                                                     \
  X(Tanh, "tanh", 1, F, kPure | kCostly | kFlop)                                                   \
  X(Exp, "exp", 1, F, kPure | kCostly | kFlop)                                                     \
  X(Log, "log", 1, F, kPure | kCostly | kFlop)                                                     \
  X(Sqrt, "sqrt", 1, F, kPure | kCostly | kFlop)                                                   \
  X(Abs, "abs", 1, F, kPure)                                                                       \
  X(Floor, "floor", 1, F, kPure)   /* derivative 0 */                                              \
  X(Select, "select", 3, F, kPure) /* args: bool cond, float a, float b */                         \
  /* comparisons and logic */                                                                      \
  X(Lt, "lt", 2, B, kPure)                                                                         \
  X(Le, "le", 2, B, kPure)                                                                         \
  X(Gt, "gt", 2, B, kPure)                                                                         \
  X(Ge, "ge", 2, B, kPure)                                                                         \
  X(Eq, "eq", 2, B, kPure)                                                                         \
  X(Ne, "ne", 2, B, kPure)                                                                         \
  X(And, "and", 2, B, kPure)                                                                       \
  X(Or, "or", 2, B, kPure)                                                                         \
  X(Not, "not", 1, B, kPure)                                                                       \
  /* integers (indices) */                                                                         \
  X(IAdd, "iadd", 2, I, kPure)                                                                     \
  X(ISub, "isub", 2, I, kPure)                                                                     \
  X(IMul, "imul", 2, I, kPure)                                                                     \
  X(IToF, "itof", 1, F, kPure) /* int -> float */                                                  \
  X(FToI, "ftoi", 1, I, kPure) /* float -> int, toward zero, saturated to int32; NaN -> 0 */       \
  /* memory: Inst::buffer names the buffer */                                                      \
  X(Load, "load", 1, F, kMemory)                /* args: index; result type = buffer elem */       \
  X(Store, "store", 2, None, kMemory)           /* args: index, value */                           \
  X(AccAdd, "accadd", 2, None, kMemory | kFlop) /* args: index, value; buffer[i] += value */       \
  /* accumulator locals: Inst::f is the initial value */                                           \
  X(Local, "local", 0, None, kLocal)                /* declares slot; result id names the slot */  \
  X(LocalAdd, "local.add", 2, None, kLocal | kFlop) /* args: slot, value */                        \
  X(LocalMax, "local.max", 2, None, kLocal)                                                        \
  X(LocalMin, "local.min", 2, None, kLocal)                                                        \
  X(LocalGet, "local.get", 1, F, kLocal)                                                           \
  /* structured control flow */                                                                    \
  X(Loop, "loop", 0, None, kNoTraits) /* over set Inst::set; body = Inst::body */

// The case labels of op families, for switches that treat a family alike
// (`EVOC_IR_CASE_COMPARE: return ...;`). Written out, not derived from the
// list above: a new op compiles only once it is put in a family here or
// given a case of its own in every switch over ops.
#define EVOC_IR_CASE_CONSTS                                                                        \
  case Op::ConstF:                                                                                 \
  case Op::ConstI:                                                                                 \
  case Op::ConstB
#define EVOC_IR_CASE_FLOAT_BINARY /* add sub mul div min max pow */                                \
  case Op::Add:                                                                                    \
  case Op::Sub:                                                                                    \
  case Op::Mul:                                                                                    \
  case Op::Div:                                                                                    \
  case Op::Min:                                                                                    \
  case Op::Max:                                                                                    \
  case Op::Pow
#define EVOC_IR_CASE_FLOAT_UNARY /* neg, the math functions, abs, floor */                         \
  case Op::Neg:                                                                                    \
  case Op::Sin:                                                                                    \
  case Op::Cos:                                                                                    \
  case Op::Tanh:                                                                                   \
  case Op::Exp:                                                                                    \
  case Op::Log:                                                                                    \
  case Op::Sqrt:                                                                                   \
  case Op::Abs:                                                                                    \
  case Op::Floor
#define EVOC_IR_CASE_COMPARE                                                                       \
  case Op::Lt:                                                                                     \
  case Op::Le:                                                                                     \
  case Op::Gt:                                                                                     \
  case Op::Ge:                                                                                     \
  case Op::Eq:                                                                                     \
  case Op::Ne
#define EVOC_IR_CASE_LOGIC                                                                         \
  case Op::And:                                                                                    \
  case Op::Or:                                                                                     \
  case Op::Not
#define EVOC_IR_CASE_INT                                                                           \
  case Op::IAdd:                                                                                   \
  case Op::ISub:                                                                                   \
  case Op::IMul
#define EVOC_IR_CASE_MEMORY                                                                        \
  case Op::Load:                                                                                   \
  case Op::Store:                                                                                  \
  case Op::AccAdd
#define EVOC_IR_CASE_LOCAL_UPDATE                                                                  \
  case Op::LocalAdd:                                                                               \
  case Op::LocalMax:                                                                               \
  case Op::LocalMin
/* a value computed from operands alone: select, itof, ftoi and the arithmetic,
   comparison, logic and integer families (every kPure op but the constants,
   Time and Size) */
#define EVOC_IR_CASE_COMPUTE                                                                       \
  case Op::Select:                                                                                 \
  case Op::IToF:                                                                                   \
  case Op::FToI:                                                                                   \
  EVOC_IR_CASE_FLOAT_BINARY:                                                                       \
  EVOC_IR_CASE_FLOAT_UNARY:                                                                        \
  EVOC_IR_CASE_COMPARE:                                                                            \
  EVOC_IR_CASE_LOGIC:                                                                              \
    EVOC_IR_CASE_INT

enum class Op : uint8_t {
#define EVOC_X(Name, mnemonic, nargs, type, traits) Name,
  EVOC_IR_OPS(EVOC_X)
#undef EVOC_X
};

/// Mnemonic, operand count and default result type of an op.
const char *opName(Op op);
int opNumArgs(Op op);
Type opResultType(Op op);
/// The traits of an op (OpTrait bits), as EVOC_IR_OPS declares them.
unsigned opTraits(Op op);
/// Whether an op's result depends on its operands alone (kPure).
inline bool isPure(Op op) { return opTraits(op) & kPure; }
/// Whether an op reads or writes a buffer: Load, Store, AccAdd (kMemory).
inline bool isMemoryOp(Op op) { return opTraits(op) & kMemory; }
/// Whether an op declares, updates or reads an accumulator local (kLocal).
inline bool isLocalOp(Op op) { return opTraits(op) & kLocal; }
/// Whether an op counts as one FLOP (kFlop).
inline bool isFlop(Op op) { return opTraits(op) & kFlop; }
/// Whether an op is of the costly class (kCostly).
inline bool isCostly(Op op) { return opTraits(op) & kCostly; }
/// Whether an op updates an accumulator local: LocalAdd, LocalMax, LocalMin.
inline bool isLocalUpdate(Op op) {
  return op == Op::LocalAdd || op == Op::LocalMax || op == Op::LocalMin;
}

/// A value id; 0 means "no value". Ids are unique within a kernel.
using ValueId = uint32_t;

/// Where an instruction came from in the .evo source, for #line and errors.
struct SrcLoc {
  int file = -1; // index into Module::files, -1 when unknown
  int line = 0;
  int col = 0;
};

struct Block;

/// One instruction. Its result (if any) is the value `result`.
struct Inst {
  Op op;
  Type type = Type::None; // result type
  ValueId result = 0;     // 0 if no result (Local: the slot id)
  std::vector<ValueId> args;
  double f = 0;                // ConstF value; Local initial value
  int64_t i = 0;               // ConstI / ConstB value
  int buffer = -1;             // Load / Store / AccAdd
  int set = -1;                // Size / Loop
  std::unique_ptr<Block> body; // Loop
  SrcLoc loc;
};

/// A sequence of instructions. A loop body's `arg` is the element index.
/// Copying a block copies its instructions deeply (ir::cloneInst), so a
/// Kernel or a Module copies as a value.
struct Block {
  ValueId arg = 0;
  std::vector<std::unique_ptr<Inst>> insts;

  Block() = default;
  Block(const Block &from);
  Block(Block &&) = default;
  Block &operator=(const Block &from);
  Block &operator=(Block &&) = default;
};

/// What a buffer holds, which decides who allocates it and how autodiff
/// treats it.
enum class Role : uint8_t {
  State,     // a state field at some time (see Buffer::time); read-only in a kernel
  NextState, // the state at t+1 written by a step kernel
  Body,      // body data (rest lengths, stiffness, endpoint indices, ...)
  Param,     // controller parameters (trained)
  Temp,      // kernel-internal scratch, zeroed by the caller before a call
  Output,    // a kernel result (e.g. the loss, extent 1)
  Adjoint,   // adjoint of another buffer (Buffer::primal)
  Command,   // a robot-level command at some time (Buffer::time), set by the
             // runtime per episode and period; read-only, not differentiable
  Window,    // time-window reductions (sum, mean, max, min over t of a
             // LossStep kernel's sample, slot Kernel::windowSlot), computed
             // by the runtime from the samples; read by Loss kernels
};

/// Which state (or command) a State / Command buffer refers to. Offset:
/// the current time plus Buffer::fixedTime (<= 0), in a LossStep kernel.
enum class TimeRef : uint8_t { Current, First, Last, Fixed, Offset };

/// A per-robot array. Its length is the product of the sizes of `sets` times
/// `comps` (sets empty: a robot-level array of `comps` entries). Element
/// (i0, i1, ..., c) lives at ((i0 * n1 + i1) * ...) * comps + c.
struct Buffer {
  std::string name;    // "point.x", "spring.a", "mlp.w1.sin", "point.x.adj"
  Type elem = Type::F; // F or I
  Role role = Role::Temp;
  std::vector<int> sets; // element sets indexing it (outermost first)
  int comps = 1;
  std::string field;               // language-level field it stores ("point.x")
  TimeRef time = TimeRef::Current; // for State / Command buffers
  int64_t fixedTime = 0;           // TimeRef::Fixed: the time; Offset: the offset
  int column = 0;                  // Role::Command: first column in the command row
  bool differentiable = false;     // gradients wanted / propagated through it
  // Role::Temp written by the Step kernel and kept per step (autodiff's
  // choice): the runtime gives step.adj at t what step wrote at t, and
  // step.adj reads it instead of recomputing it.
  bool tape = false;
  int primal = -1; // Role::Adjoint: the buffer it is the adjoint of
  // Role::Param: how the runtime initialises it from the run's seed.
  // "zeros", or "xavier_normal" with std = gain * sqrt(2 / (fan_in + fan_out)),
  // fan_out = size(sets[0]), fan_in = size(sets[1]) (a matrix [out, in]).
  std::string init = "zeros";
  double initGain = 1.0;
  // Role::State: the value every element starts with, per component (empty:
  // zero, or what the body or the world gives, as for point.x).
  std::vector<double> start;
};

/// What a kernel computes, which decides when the runtime calls it.
enum class KernelKind : uint8_t {
  Step,     // state t -> state t+1 (controller + physics, fused)
  Loss,     // once, after the rollout: writes the Output buffer "loss"
  LossStep, // once per step t in [windowBegin, windowEnd]: accumulates into
            // "loss" (windowSlot < 0) or into slot windowSlot of "loss.sample",
            // which the runtime reduces (windowReduce) into the Window buffer
  StepAdj,  // adjoint of a Step kernel
  LossAdj,  // adjoint of a Loss kernel
  LossStepAdj,
  Init, // once per robot before training: parameter initialisation etc.
};

/// How the runtime reduces a LossStep kernel's per-step samples over its
/// window (max / min: the first time the extreme is reached carries the
/// gradient).
enum class WindowReduce : uint8_t { Sum, Mean, Max, Min };

struct Kernel {
  std::string name; // "step", "step.adj", "loss", ...
  KernelKind kind = KernelKind::Step;
  int64_t windowBegin = 0, windowEnd = -1; // LossStep: inclusive range of t; -1 = last
  int windowSlot = -1;                     // LossStep: reduced window slot, or -1
  WindowReduce windowReduce = WindowReduce::Sum;
  int primal = -1; // adjoint kernels: index of the forward kernel
  Block body;
  ValueId nextValue = 1;        // next free value id
  std::vector<Type> valueTypes; // indexed by ValueId (slot 0 unused)
};

/// An element set. Its size is per robot, given to kernels in `sizes`:
/// either taken from the robot's body (point, spring) or derived as
/// base + sum(coef * size(set)) (unit: 32; input: 12 + 4 * point).
struct ElementSet {
  std::string name;      // "point", "spring", "unit", "input"
  bool fromBody = false; // size comes from the body (points, springs)
  /// The world's grid nodes (docs/language.md, "Grids and particles"): its
  /// temps are as large as the grid, so none is kept per step on the tape;
  /// step.adj recomputes them.
  bool grid = false;
  int64_t base = 0;
  std::vector<std::pair<int, int64_t>> terms; // (set, coefficient)
  /// Optional: the order of the entries of a vector over this set, as
  /// segments (set, count per element); set -1 is a fixed block of `count`
  /// entries, else `count` consecutive entries per element of that set
  /// (element-major). The mlp's input: {-1, 10}, {point, 4}, {-1, 2}. Counts
  /// add up to base and terms. Lets the runtime tell which rows and columns
  /// of a weight belong to which body element (weight inheritance).
  std::vector<std::pair<int, int64_t>> layout;
  /// A set of all pairs (docs/language.md, "Objects"): two endpoints, each
  /// (the endpoint buffer's field, the set it indexes); element e is the
  /// pair (e / n1, e % n1), n1 the second set's size. The runtime fills the
  /// two endpoint buffers with these indices.
  std::vector<std::pair<std::string, int>> pairs;
  /// Entries the compiler knows (the world's objects): a field of this set
  /// ("object.half", "object.x") and its values, element-major. The runtime
  /// fills body fields with them and starts state fields from them (other
  /// state fields start at zero).
  std::vector<std::pair<std::string, std::vector<double>>> values;
};

/// A weight gradient that the runtime accumulates once per window of steps
/// as one matrix product instead of step.adj accumulating it every step
/// (autodiff, with kept temporaries): grad[s, u] += sum over the window's
/// steps t of rows_t[s] * x_t[u]. `grad` is the adjoint of a Param with sets
/// [S, U]; `rows` (set S, written by step.adj) and `x` (set U, written by
/// step) are kept temporaries (Buffer::tape).
struct WindowProduct {
  int grad = -1, rows = -1, x = -1;
};

struct Module {
  std::string name;
  Precision precision = Precision::F64;
  std::vector<std::string> files; // source files, for SrcLoc
  std::vector<ElementSet> sets;
  std::vector<Buffer> buffers;
  std::vector<Kernel> kernels;
  /// Names of the slots of the Output buffer "loss.terms" (reported loss
  /// terms), if the loss has one.
  std::vector<std::string> lossTerms;
  std::vector<WindowProduct> products;

  int findSet(const std::string &n) const;
  int findBuffer(const std::string &n) const;
  int findKernel(const std::string &n) const;
};

/// A deep copy (what copying a Module does; the name says so at the call).
inline Module clone(const Module &m) { return m; }

/// Number of elements of buffer `b` given the sizes of the element sets.
int64_t bufferLength(const Module &m, int b, const int64_t *sizes);

/// Fills sizes[s] of every derived set (fromBody false) as
/// base + sum(coef * sizes[term]); body sets' entries are left as given.
/// Terms must name sets of lower index or body sets.
void deriveSetSizes(const Module &m, int64_t *sizes);

/// The C ABI every backend's compiled kernel has, for one robot:
/// buffers[b] points at buffer b of the module (null if unused by the
/// kernel), sizes[s] is the size of element set s, t the time index.
using KernelFn = void (*)(void *const *buffers, const int64_t *sizes, int64_t t);

} // namespace evoc::ir
