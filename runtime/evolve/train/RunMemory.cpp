// The memory an evolution run needs at its peak, and what is available.
#include "evolve/train/RunMemory.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/resource.h>

#include "core/Train.h"
#include "evolve/engine/EvoRng.h"
#include "evolve/engine/MapElites.h"

namespace evoc::evolve {

namespace {

// Bytes per weight of a design held at the peak, and copies of its robot
// (as vectors and as JSON): measured on examples/eldir_small.evo, whose
// peak grew by 128 KB per member of the population (parents and children,
// 6,000 weights each) from 3,000 to 9,000 members; the estimate is about
// 1.3 times the measured peak there (docs/evolution.md, "memory").
constexpr int64_t kWeightBytes = 12;
constexpr int64_t kRobotCopies = 4;

// A /proc/meminfo or /proc/self/status field in bytes; -1 if absent.
int64_t procField(const char *file, const std::string &key) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key + ":", 0) == 0) {
      std::istringstream v(line.substr(key.size() + 1));
      int64_t kb = -1;
      v >> kb;
      return kb < 0 ? -1 : kb * 1024;
    }
  return -1;
}

} // namespace

RunMemory estimateRunMemory(const EvolutionConfig &config, const runtime::ModuleInfo &info,
                            int64_t sliceBytes) {
  RunMemory m;
  const int64_t children = config.offspring > 0 ? config.offspring : config.population;
  // MAP-Elites' population is its archive, which grows to one design a cell.
  const int64_t kept =
      config.selection.kind == SelectionSpec::Kind::MapElites
          ? std::max<int64_t>(config.population, cellCount(config.selection.descriptors))
          : int64_t(config.population);
  m.designs = kept + children;
  EvoRng rng(config.seed);
  const runtime::Robot robot = config.body->express(*config.body->sample(rng)).robot;
  const runtime::RobotLayout l = layoutRobot(info, setSizes(*info.module, robot));
  const int64_t robotBytes =
      int64_t(robot.points.size()) * 8 + int64_t(robot.springs.size() * sizeof(runtime::Spring));
  m.perDesign = l.paramCount * kWeightBytes + kRobotCopies * robotBytes;
  // Inherited weights: each child's initial weights (doubles) and each
  // member's kept weights as JSON (counted from those copies, not measured).
  if (config.inheritWeights)
    m.perDesign += l.paramCount * (8 + 16);
  m.training = std::min(sliceBytes, children * runtime::trainSliceBytes(info, robot));
  return m;
}

int64_t availableMemory() {
  int64_t avail = -1;
  const int64_t mem = procField("/proc/meminfo", "MemAvailable");
  if (mem >= 0)
    avail = mem + std::max<int64_t>(0, procField("/proc/meminfo", "SwapFree"));
  rlimit lim{};
  if (::getrlimit(RLIMIT_AS, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY) {
    const int64_t used = std::max<int64_t>(0, procField("/proc/self/status", "VmSize"));
    const int64_t left = std::max<int64_t>(0, int64_t(lim.rlim_cur) - used);
    avail = avail < 0 ? left : std::min(avail, left);
  }
  return avail;
}

} // namespace evoc::evolve
