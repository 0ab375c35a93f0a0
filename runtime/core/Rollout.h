// The rollout engine: forward T-1 steps, loss kernels, and the backward
// sweep of adjoint kernels, with checkpointing (states stored every K steps
// and recomputed window by window) or a full tape. Runs any back end through
// codegen::Executable; holds no physics and no derivative of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "codegen/Executable.h"
#include "core/Population.h"
#include "support/StateLimit.h"

namespace evoc::runtime {

/// RolloutConfig::fullTapeBudget's default: 16 MiB a worker thread (a 13x22
/// ELDiR lattice's tape at T = 1000 is 12.5 MiB with its kept temporaries).
inline constexpr int64_t kFullTapeBudgetBytes = int64_t(16) << 20;

/// How one rollout is run.
struct RolloutConfig {
  int64_t steps = 1000;    // T: states x[0] .. x[T-1], T-1 step calls
  int64_t checkpointK = 0; // window length K; 0: chosen (resolveCheckpointK)
  bool fullTape = false;   // store every state (K = T - 1)
  // With checkpointK = 0, a rollout whose whole tape (T states and kept
  // temporaries) fits in this many bytes keeps it (resolveCheckpointK).
  int64_t fullTapeBudget = kFullTapeBudgetBytes;
  double groundHeight = 0;              // initial placement: no point below this
  const GroundShape *terrain = nullptr; // a terrain (and boxes): no point in them instead
  int upAxis = 1;                       // the vertical coordinate
  // A state value whose magnitude exceeds this makes the rollout invalid
  // (world.state_limit): a simulation that blew up but stayed finite.
  double stateLimit = kDefaultStateLimit;
  // The episode's commands: rows of `commandCount` values, row i holding the
  // commands of steps [i * commandPeriod, (i + 1) * commandPeriod) (the last
  // row also every later step; period 0: one row for the whole episode).
  // Required when the module reads commands.
  const double *commands = nullptr;
  int64_t commandRows = 0;
  int64_t commandPeriod = 0;
  int commandCount = 0;
  // Continued episodes (docs/multitask.md, "Training and validation"): when
  // set, x[0] is this snapshot (layout(r).stateBytes() bytes) instead of the
  // body's initial state; no gradient flows into it. `finalState`, when set,
  // receives x[T-1] after the forward pass (it may be the same buffer as
  // startState).
  const std::byte *startState = nullptr;
  std::byte *finalState = nullptr;
};

/// The window length a config resolves to (>= 1), for a robot whose state
/// snapshot has `stateBytes` and whose step keeps `tapeBytes` of temporaries
/// (0, 0: sizes unknown). fullTape or checkpointK decide when set. Otherwise
/// a full tape (K = T - 1) when T * (stateBytes + tapeBytes) fits in
/// c.fullTapeBudget: the recomputation a checkpointed sweep does costs 15-30%
/// of small robots' time and a tape is held once per worker thread, not per
/// robot (docs/architecture.md, "Rollout and sweep"). Else the window that
/// holds the fewest bytes: checkpoints every K steps (T / K states) and a
/// window of K states each with its step's kept temporaries:
/// K = sqrt(T / (1 + tapeBytes / stateBytes)), sqrt(T) without temporaries.
int64_t resolveCheckpointK(const RolloutConfig &c, int64_t stateBytes = 0, int64_t tapeBytes = 0);

/// The first of p[0 .. n) that is NaN, infinite or of magnitude above
/// `limit`, or -1: the check every state of a rollout passes (a block of 64
/// values at a time without a branch, SSE2 for doubles).
int64_t firstBeyondLimit(const double *p, int64_t n, double limit);
int64_t firstBeyondLimit(const float *p, int64_t n, float limit);

/// Memory a rollout held for states, in bytes, next to what a full tape
/// (all T states) would hold.
struct RolloutMemory {
  int64_t stateBytes = 0;      // one state snapshot
  int64_t storedStates = 0;    // snapshots held at once (checkpoints + window + scratch)
  int64_t stateStoreBytes = 0; // storedStates * stateBytes
  int64_t fullTapeBytes = 0;   // T * stateBytes
  int64_t tapeBytes = 0;       // one step's kept temporaries (Arena::Tape)
  int64_t keptTempBytes = 0;   // the kept temporaries held at once (one per ring slot)
  int64_t windowSteps = 0;     // K (resolveCheckpointK), with a backward sweep
};

/// Result of one rollout of one robot.
struct RolloutOutcome {
  bool valid = true;
  std::string error; // why it is invalid (NaN/inf or beyond the state limit, and where)
  double loss = 0;
  std::vector<double> terms; // the module's reported loss terms (Module::lossTerms)
  int64_t stepsRun = 0;      // forward step calls (excluding recomputation)
  RolloutMemory memory;
};

/// A per-thread workspace that runs rollouts for any robot of a population.
/// Not thread-safe itself: use one per thread.
///
/// With `lanes` > 1, `exe` must be compiled with as many lanes
/// (codegen::CompileOptions::lanes) and the workspace runs that many
/// episodes of one robot at once (runLanes, docs/architecture.md "Episodes
/// in lanes"): one kernel call per step for all of them, each with its own
/// commands and start state, sharing the robot's body and parameters.
class Rollout {
public:
  Rollout(const ModuleInfo &info, const codegen::Executable &exe, int lanes = 1);

  /// Runs the module's Init kernels for robot r (after its parameters are
  /// initialised).
  void runInit(Population &pop, int r);
  /// Forward rollout, loss, and (when `backward`) the backward sweep whose
  /// parameter gradient lands in pop.arena(r, Arena::Grad). A non-finite
  /// state, loss or gradient, or a state value beyond cfg.stateLimit, makes
  /// the outcome invalid; it never throws for it.
  RolloutOutcome run(Population &pop, int r, const RolloutConfig &cfg, bool backward);
  /// Lanes > 1: cfgs.size() == lanes episodes of robot r (their configs
  /// differ only in commands, start and final states), one outcome each;
  /// when one is invalid, all are (the first invalid lane's error, which
  /// names it robot `firstName + lane`). After a backward run, lane l's
  /// parameter gradient is laneGradient(l), robot r's Grad arena is untouched.
  std::vector<RolloutOutcome> runLanes(Population &pop, int r,
                                       const std::vector<RolloutConfig> &cfgs, bool backward,
                                       int firstName);
  /// After runLanes(..., true): d loss / d params of lane l as doubles, in
  /// the order of the robot's parameter arena.
  std::vector<double> laneGradient(int lane) const;
  int lanes() const { return lanes_; }
  /// For tests of the contract's zero lists (ModuleInfo::scratchZero,
  /// keptZero): fill every scratch buffer and tape block a kernel finds
  /// unzeroed with all-ones bytes (NaN) before each call instead of leaving
  /// what it held, so that a kernel reading an element it did not write
  /// changes the results.
  void poisonUnzeroedScratch(bool on) { poison_ = on; }
  /// After run(pop, r, cfg, true): d loss / d x[0] for state field `f`
  /// (ModuleInfo::fields), the initial state's adjoint, as doubles ("point.x":
  /// the body's initial positions after the lift onto the ground).
  std::vector<double> initialAdjoint(int f);
  /// After run(pop, r, cfg, true): d loss / d b for every float Body buffer b
  /// the module differentiates (PipelineOptions::bodyGradients), summed over
  /// the rollout, keyed by its field ("spring.rest"); empty for a module
  /// compiled without body gradients.
  std::map<std::string, std::vector<double>> bodyAdjoints();
  /// Forward only, returning the state field `field` ("point.x") at each
  /// requested time (ascending, in [0, T-1]) as doubles. With `outputs`, also
  /// the step's scratch field `outputField` (the controller's output,
  /// "spring.act") as the step from each requested state computed it (the
  /// last state, which no step leaves, repeats the step before); left empty
  /// when the module has no such scratch buffer.
  std::vector<std::vector<double>> trajectory(Population &pop, int r, const RolloutConfig &cfg,
                                              const std::string &field,
                                              const std::vector<int64_t> &times,
                                              std::vector<std::vector<double>> *outputs = nullptr,
                                              const std::string &outputField = "");

private:
  void prepare(Population &pop, int r, const RolloutConfig &cfg, bool backward);
  /// The forward pass, the loss and (when `backward`) the sweep, for the
  /// lanes_ episodes of cfgs_ (one, for run()).
  std::vector<RolloutOutcome> sweep(bool backward);
  /// After the forward steps: the final states out, the window reductions
  /// into the loss kernels' buffer, the loss kernels, and each lane's loss
  /// and terms into `outs`.
  void lossesAfterForward(std::vector<RolloutOutcome> &outs);
  /// The first lane whose gradient has a NaN or infinite entry, or -1.
  int nonFiniteGradientLane();
  /// Robot r_'s persistent arena, or in lanes mode the workspace's own
  /// per-lane Grad and Output arenas.
  std::byte *arena(Arena a);
  std::byte *buffer(int b) { return arena(info_.arena[b]) + L_->offset[b]; }
  /// Elements of state field f in a snapshot (all lanes).
  int64_t fieldElems(int f) const;
  /// Writes x[0] of every lane into `x`: the start state or the body's.
  void startStates(std::byte *x);
  /// Lane l's part of a snapshot of the wide layout, into / from one of the
  /// robot's own layout.
  void gatherLane(std::byte *dst, const std::byte *wide, int l) const;
  void scatterLane(std::byte *wide, const std::byte *src, int l) const;
  /// copy(offset in the wide snapshot, offset in the robot's, bytes) for
  /// every state element of lane l.
  template <class Copy> void forLaneElements(int l, Copy copy) const;
  std::byte *slot(int64_t t) { return bytesOf(ring_) + (t % ringSize_) * sb_; }
  std::byte *adjAt(int64_t t) { return bytesOf(adjRing_) + (t % adjSize_) * sb_; }
  /// The kept temporaries of step t (the ring's slot of state t).
  std::byte *tapeAt(int64_t t) { return bytesOf(tape_) + (t % ringSize_) * tb_; }
  /// Kernel k's call at step t: binds its buffers (fixed_, else bindAt),
  /// zeroes its scratch, runs it.
  void call(int k, int64_t t, std::byte *cur, std::byte *next, std::byte *adjCur,
            std::byte *adjNext);
  /// The places that stay for the whole rollout of the current robot
  /// (arenas, scratch): fixed_ and zeroBytes_, after prepare's allocations.
  void bindFixed();
  /// Where buffer b of kernel k lies at step t when its place is not one
  /// of the call's own (Place::Other): a command row, a state (or adjoint)
  /// at an offset in the ring, or a pinned one.
  std::byte *bindAt(int k, int b, int64_t t);
  /// Buffer b of kernel k in the state (or adjoint) snapshot `base`.
  std::byte *stateAt(int k, int b, std::byte *base) const;
  void stepForward(int64_t t, std::byte *cur, std::byte *next);
  /// False (with the field, the offending value and its lane) when a state
  /// value is NaN, infinite or of magnitude above `limit`.
  bool boundedState(const std::byte *s, double limit, std::string &where, double &value,
                    int &lane) const;
  bool lossStepAt(int k, int64_t t) const;
  std::byte *pinnedState(int64_t t);
  std::byte *pinnedAdj(int64_t t);
  void forwardLossSteps(int64_t t, std::byte *x);
  void backwardLossSteps(int64_t t, const std::vector<double> &windowAdj);
  /// Zeroes the Output adjoints, then sets element `index` of `buffer` (if >= 0).
  void seedOutputAdj(int buffer, int64_t index, double value);
  /// The same with one value per lane.
  void seedOutputAdj(int buffer, int64_t index, const std::vector<double> &values);
  /// The module's window products (ir::WindowProduct) over steps [lo, hi):
  /// grad += rows^T x, one matrix product per ring run of at most
  /// kProductRun steps.
  void windowProducts(int64_t lo, int64_t hi);
  static constexpr int64_t kProductRun = 32;
  /// Makes the ring hold the states [need, ...] by recomputing from a checkpoint.
  void recomputeFrom(int64_t need);
  static std::byte *bytesOf(AlignedDoubles &v) { return reinterpret_cast<std::byte *>(v.data()); }

  const ModuleInfo &info_;
  const codegen::Executable &exe_;
  int lanes_ = 1;
  std::vector<void *> ptrs_;
  std::vector<std::byte *> fixed_; // per buffer: its place for this robot, or null (bindAt)
  std::vector<int64_t> zeroBytes_; // per buffer: scratch bytes (zeroed before a call of a
                                   // kernel that reads them unwritten: scratchZero)
  std::vector<std::pair<int64_t, int64_t>> tapeZero_; // (offset, bytes) in a tape block:
                                                      // keptZero's buffers
  bool poison_ = false;                               // poisonUnzeroedScratch
  /// Where a buffer lies in a call: fixed_, the call's current or next state
  /// or adjoint, step t's kept temporaries, or elsewhere (bindAt).
  // Cur .. AdjNext in the order of call()'s state arguments.
  enum class Place : uint8_t { Fixed, Cur, Next, AdjCur, AdjNext, Tape, Other };
  std::vector<Place> place_; // per buffer
  // Module facts.
  int64_t maxOffset_ = 0; // largest -offset of a state a LossStep kernel reads
  bool readsCommands_ = false;
  int sampleBuf_ = -1, windowBuf_ = -1, windowAdj_ = -1, sampleAdj_ = -1, termsBuf_ = -1;
  int windowSlots_ = 0;
  std::vector<ir::WindowReduce> slotReduce_; // per window slot
  // Current robot.
  Population *pop_ = nullptr;
  int r_ = -1;
  const RobotLayout *L_ = nullptr; // the robot's layout, or wide_ in lanes mode
  const RolloutConfig *cfg_ = nullptr;
  const RolloutConfig *cfgs_ = nullptr; // one per lane (cfg_ is the first)
  int firstName_ = 0;                   // lanes mode: lane l is "robot firstName_ + l" in errors
  RobotLayout wide_;                    // lanes mode: every per-episode buffer lanes_ times
  AlignedDoubles gradW_, outW_;         // lanes mode: the Grad and Output arenas
  AlignedDoubles laneState_;            // lanes mode: one lane's snapshot
  int64_t T_ = 0, K_ = 1, windows_ = 1;
  int64_t ringSize_ = 2, adjSize_ = 2, offsetSpan_ = 0; // offsetSpan_: maxOffset_ rounded up to K
  int64_t ringLo_ = 0; // the ring holds the states ringLo_ .. ringHi_
  int64_t ringHi_ = -1;
  // Window reductions (forward), per slot and lane (slot * lanes_ + lane):
  // value, the time of the extreme, samples seen.
  std::vector<double> redValue_;
  std::vector<int64_t> redArg_, redCount_;
  std::vector<double> seeds_; // backwardLossSteps: one window seed per lane
  // Workspace (grown as needed, reused across robots), 64-byte aligned.
  AlignedDoubles temp_, tempAdj_, bodyAdj_, outAdj_;
  AlignedDoubles ckpt_, ring_, adjRing_, pinned_, pinnedAdj_, cmd_, tape_, scratchState_;
  std::vector<int64_t> pinnedTimes_;
  std::vector<int64_t> tapeStep_; // per ring slot: the step whose kept temps it holds, -1 none
  int64_t sb_ = 0;                // state bytes, rounded to a multiple of 64
  int64_t tb_ = 0;                // kept-temporary bytes of one step, rounded to 64
};

} // namespace evoc::runtime
