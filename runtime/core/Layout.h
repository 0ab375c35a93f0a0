// What the runtime needs to know about a compiled module (which kernel runs
// when, which buffers form the state) and where each buffer of one robot
// lives in memory. Buffers are grouped into arenas by role.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/Robot.h"
#include "ir/Contract.h"
#include "ir/IR.h"

namespace evoc::runtime {

/// The memory arena a buffer lives in (per robot).
enum class Arena : uint8_t {
  Body,      // Role::Body, persistent (Population)
  Param,     // Role::Param, persistent (Population)
  Grad,      // adjoint of a Param: same offsets as Param (Population)
  Output,    // Role::Output, persistent (Population)
  Temp,      // Role::Temp, zeroed before each kernel call (workspace)
  TempAdj,   // adjoint of a Temp, zeroed before each call (workspace)
  BodyAdj,   // adjoint of a Body buffer (workspace, discarded)
  OutputAdj, // adjoint of an Output (workspace; "loss.adj" is seeded with 1)
  State,     // State / NextState: one field of a state snapshot
  StateAdj,  // adjoint of a State / NextState buffer: field of an adjoint snapshot
  Command,   // Role::Command: a slice of the episode's command row at some time
  Tape,      // Role::Temp kept per step (Buffer::tape): one block per step, held by the rollout
};
inline constexpr int kArenas = int(Arena::Tape) + 1;

/// One state field ("point.x"): ir/Contract.h.
using ir::StateField;

/// Module-level facts, computed once per module: the rollout contract of
/// the IR (ir/Contract.h, which the CUDA back end reads too) and the arena
/// of every buffer. The constructor checks what the runtime relies on and
/// throws evoc::Error when it is broken. It keeps a pointer to the module,
/// which must outlive it.
struct ModuleInfo : ir::RolloutContract {
  explicit ModuleInfo(const ir::Module &m);

  const ir::Module *module;
  std::vector<Arena> arena;        // per buffer
  int elemBytes(int buffer) const; // bytes per element of a buffer
  /// Whether backward sweeps are possible (all adjoint kernels present).
  bool differentiable() const {
    return stepAdj >= 0 && lossAdj.size() == loss.size() && lossStepAdj.size() == lossStep.size();
  }
  /// The JSON key of a Param buffer ("w1"): its field, else its name.
  std::string paramKey(int buffer) const;
};

/// Sizes and offsets of one robot's buffers.
struct RobotLayout {
  std::vector<int64_t> sizes;       // per element set
  std::vector<int64_t> count;       // per buffer: number of elements
  std::vector<int64_t> offset;      // per buffer: byte offset inside its arena block
  int64_t arenaBytes[kArenas] = {}; // per Arena: bytes of this robot's block
  int64_t paramCount = 0;           // number of parameter scalars (of one episode)
  int lanes = 1;                    // episodes per snapshot (layoutRobot's `lanes`)
  std::vector<int64_t> fieldOffset; // per state field: byte offset in a snapshot
  int64_t stateBytes() const { return arenaBytes[int(Arena::State)]; }
  int64_t tapeBytes() const { return arenaBytes[int(Arena::Tape)]; } // one step's kept temps
};

/// The element-set sizes of a robot (points, springs from the body; derived
/// sets as base + sum(coef * size)). Throws evoc::Error for unknown body sets.
std::vector<int64_t> setSizes(const ir::Module &m, const Robot &r);

/// Lays out every buffer of the module for a robot with these set sizes.
/// With `lanes` > 1, for that many episodes in lanes (docs/architecture.md,
/// "Episodes in lanes"): every buffer but the Body and Param ones holds
/// `lanes` times its elements, interleaved (element i of lane l at
/// i * lanes + l), the Grad arena the Param arena's scalars so interleaved,
/// and a state snapshot every field so.
RobotLayout layoutRobot(const ModuleInfo &info, std::vector<int64_t> sizes, int lanes = 1);

/// Shape of a buffer for one robot: the sizes of its sets, then comps if > 1.
std::vector<int64_t> bufferShape(const ir::Buffer &b, const std::vector<int64_t> &sizes);

} // namespace evoc::runtime
