// The memory an evolution run needs at its peak, estimated before anything is
// allocated, and the memory this process may still take; `evoc run` refuses
// a population that cannot fit (docs/evolution.md, "memory").
#pragma once

#include <cstdint>

#include "core/Layout.h"
#include "evolve/engine/Evolution.h"

namespace evoc::evolve {

/// A run's estimated peak, from one sampled design of its body model.
struct RunMemory {
  int64_t designs = 0;   ///< designs held at once: the parents and a generation's children
  int64_t perDesign = 0; ///< bytes each holds: trained weights (kept and as JSON), its robot
  int64_t training = 0;  ///< bytes of the trainer's largest slice (runtime::train)
  int64_t total() const { return designs * perDesign + training; }
};

/// The estimate for `config` trained with the module `info`, in slices of
/// `sliceBytes` (runtime::TrainOptions::sliceBytes).
RunMemory estimateRunMemory(const EvolutionConfig &config, const runtime::ModuleInfo &info,
                            int64_t sliceBytes);

/// The bytes this process can still allocate: the smaller of what its
/// address-space limit (RLIMIT_AS) leaves and the machine's available memory
/// and free swap (/proc/meminfo); -1 when neither is known.
int64_t availableMemory();

} // namespace evoc::evolve
