// The behaviour descriptors a `select = map_elites(...)` grid can have
// (docs/language.md, Evolution), written once: sema checks the names, the
// evolution engine (runtime/evolve/engine/Selection.h) measures each kind, and run
// directories and reports print the names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace evoc {

/// X(Kind, name): the kinds in the order messages list them.
#define EVOC_DESCRIPTORS(X)                                                                        \
  X(Actuators, "actuators")        /* springs with a non-zero actuation */                         \
  X(Width, "width")                /* the rest pose's extent along the first axis */               \
  X(Height, "height")              /* ... along the last axis (up) */                              \
  X(Depth, "depth")                /* ... along the second axis (3D) */                            \
  X(Term, "term")                  /* a named loss term at the lowest loss's iteration */          \
  X(LearningGain, "learning_gain") /* loss[0] - min(loss) (runtime/evolve/engine/Metrics.h) */     \
  X(Monotonicity, "monotonicity")  /* the fraction of iterations whose loss fell */

enum class DescriptorKind : uint8_t {
#define EVOC_X(Kind, name) Kind,
  EVOC_DESCRIPTORS(EVOC_X)
#undef EVOC_X
};

/// Every kind's name, in the list's order (the enum's values index it).
inline const std::vector<std::string> &descriptorKindNames() {
  static const std::vector<std::string> names = {
#define EVOC_X(Kind, name) name,
      EVOC_DESCRIPTORS(EVOC_X)
#undef EVOC_X
  };
  return names;
}

/// The name a .evo file writes ("learning_gain").
inline const std::string &descriptorKindName(DescriptorKind k) {
  return descriptorKindNames()[size_t(k)];
}

/// The kind a name denotes; nullopt for any other name.
inline std::optional<DescriptorKind> parseDescriptorKind(std::string_view name) {
#define EVOC_X(Kind, text)                                                                         \
  if (name == (text))                                                                              \
    return DescriptorKind::Kind;
  EVOC_DESCRIPTORS(EVOC_X)
#undef EVOC_X
  return std::nullopt;
}

} // namespace evoc
