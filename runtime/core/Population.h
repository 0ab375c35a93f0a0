// Batched, ragged population memory: per robot its set sizes and every
// persistent buffer (body, parameters, gradients, outputs) packed by role
// into one array per role, with per-robot offsets and no padding to the
// largest robot.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/Aligned.h"
#include "core/Layout.h"
#include "core/ParamSet.h"
#include "core/Robot.h"

namespace evoc::runtime {

/// Reads / writes float element i of a buffer stored in the module's precision.
inline double loadF(const std::byte *p, int64_t i, bool f32) {
  return f32 ? double(reinterpret_cast<const float *>(p)[i])
             : reinterpret_cast<const double *>(p)[i];
}
inline void storeF(std::byte *p, int64_t i, double v, bool f32) {
  if (f32)
    reinterpret_cast<float *>(p)[i] = float(v);
  else
    reinterpret_cast<double *>(p)[i] = v;
}

/// Persistent memory of a batch of robots for one module.
class Population {
public:
  /// Lays out and allocates every robot, and fills its Body buffers from
  /// the robot ("spring.a", "spring.b", "spring.rest", "spring.stiffness",
  /// "spring.actuation"). Parameters start at zero. Throws evoc::Error when
  /// a body buffer is unknown, a spring endpoint is out of range, or a robot
  /// does not fit the module (dim).
  Population(const ModuleInfo &info, std::vector<Robot> robots);

  int size() const { return int(robots_.size()); }
  const ModuleInfo &info() const { return *info_; }
  const RobotLayout &layout(int r) const { return layouts_[r]; }
  const Robot &robot(int r) const { return robots_[r]; }
  bool f32() const { return f32_; }

  /// Robot r's block of a persistent arena (Body, Param, Grad, Output).
  std::byte *arena(int r, Arena a);
  const std::byte *arena(int r, Arena a) const;
  /// Robot r's copy of a persistent buffer.
  std::byte *buffer(int r, int b) { return arena(r, info_->arena[b]) + layouts_[r].offset[b]; }

  /// Initialises robot r's parameters from Buffer::init ("zeros",
  /// "constant" = initGain, "xavier_normal" with its gain), from a stream derived from (seed, id)
  /// and the buffer index: the same numbers whatever the batch or thread.
  void initParams(int r, uint64_t seed, uint64_t robotId);
  /// Checks that `p` has exactly the module's parameter fields with robot
  /// r's shapes; throws evoc::Error naming the robot and field otherwise.
  void checkParams(int r, const ParamSet &p) const;
  /// Copies `p` into robot r's parameters (checkParams first).
  void setParams(int r, const ParamSet &p);
  /// Robot r's parameters / gradient as tensors keyed like PARAMS.json.
  ParamSet params(int r) const;
  ParamSet grads(int r) const;

  /// Writes robot r's initial state into a snapshot of layout(r).stateBytes():
  /// point.x from the robot's points, lifted along `upAxis` so that no point
  /// is below `groundHeight` (or the terrain), then out of the scene's boxes
  /// (docs/language.md, "Scenes"); every other field zero.
  void initialState(int r, std::byte *snapshot, double groundHeight, int upAxis,
                    const GroundShape *terrain = nullptr) const;

  /// Bytes held by the population's packed arrays.
  int64_t bytes() const;

private:
  ParamSet tensors(int r, Arena a) const;

  const ModuleInfo *info_;
  bool f32_;
  std::vector<Robot> robots_;
  std::vector<RobotLayout> layouts_;
  // One packed array per persistent arena (64-byte aligned base);
  // offsets_[a][r] is robot r's block, a multiple of 64 bytes.
  static constexpr int kPersistent = 4; // Body, Param, Grad, Output
  AlignedDoubles store_[kPersistent];
  std::vector<int64_t> offsets_[kPersistent];
};

} // namespace evoc::runtime
