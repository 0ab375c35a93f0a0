// Weight inheritance (docs/evolution.md, "Inheriting what was learned"): a child's
// initial controller parameters copied from its parent's trained ones
// wherever the rows and columns belong to body elements both share.
#pragma once

#include <cstdint>
#include <vector>

#include "core/Layout.h"
#include "core/ParamSet.h"

namespace evoc::runtime {

/// Where a robot's elements came from: one provenance key per point and per
/// spring (evolve::Phenotype::pointKeys / springKeys). A parent's and a
/// child's elements with equal keys are the same element.
struct ElementKeys {
  std::vector<uint64_t> points, springs;
};

/// What inheritParams did, for tests and the log.
struct InheritStats {
  int64_t copied = 0; ///< parameter scalars taken from the parent
  int64_t total = 0;  ///< parameter scalars of the child
};

/// The child's initial parameters: `seeded` (its freshly initialised ones)
/// with every entry whose indices all map to elements the child shares with
/// its parent replaced by the parent's trained value. Per dimension of a
/// parameter: a body set (point, spring) maps element by element through the
/// keys (a key the parent lacks, or holds twice, maps nowhere); a set with
/// a layout (ir::ElementSet::layout, the controller's input) maps its fixed
/// entries one to one and its per-element entries through their element; a
/// fixed set (hidden units) and the components map one to one; a derived set
/// without a layout maps nowhere (its order is unknown). Set sizes come from
/// the keys. Throws evoc::Error when a ParamSet does not have the module's
/// fields with the shapes the keys imply, or the module has a body set other
/// than point and spring.
ParamSet inheritParams(const ModuleInfo &info, const ParamSet &parent,
                       const ElementKeys &parentKeys, const ElementKeys &childKeys, ParamSet seeded,
                       InheritStats *stats = nullptr);

} // namespace evoc::runtime
