// The one analysis of buffer indices: which element of a buffer an index
// value reaches relative to a loop's element (its own, a slice of its own, a
// scaled or offset copy), shared by loop fusion (opt/FuseLoops.cpp), the CUDA
// plan (codegen/cuda/KernelPlan.cpp) and CPU loop fission
// (codegen/cpu/LoopFission.cpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "ir/IR.h"

namespace evoc::ir {

/// A symbolic positive integer: c * the product of the sizes of `sets`
/// (sorted; sizes >= 1 assumed).
struct Extent {
  int64_t c = 1;
  std::vector<int> sets;
  Extent operator*(const Extent &o) const;
  bool operator==(const Extent &o) const { return c == o.c && sets == o.sets; }
  /// this <= o for every size assignment.
  bool leq(const Extent &o) const { return sets == o.sets && c <= o.c; }
};

/// Index facts about the int values of one block (a kernel's body, or one
/// loop's body: values defined outside the block are then opaque
/// invariants). Pure analysis of the IR it was built on.
class IndexAnalysis {
public:
  explicit IndexAnalysis(const Block &scope);

  /// The instruction defining v in the scope, or null (defined outside it,
  /// or a loop's element index).
  const Inst *def(ValueId v) const;
  /// The set of the loop whose element index v is, if it is one.
  std::optional<int> loopSet(ValueId v) const;

  /// The value of v as a symbolic extent (constants >= 1, sizes, products),
  /// for use as a multiplier.
  std::optional<Extent> multiplier(ValueId v) const;
  /// B with 0 <= v < B, if provable.
  std::optional<Extent> bound(ValueId v) const;
  /// Slice size S when index v lies in [e * S, e * S + S) for the element e
  /// of a loop: v = ((e * M1 + r1) * M2 + r2)... with every r in [0, M).
  std::optional<Extent> ownedSlice(ValueId v, ValueId e) const;
  /// Whether v is the iteration's own element of a buffer of `comps` entries
  /// per element: the slice of e of size exactly `comps` (e, e * comps + c).
  bool ownElement(ValueId v, ValueId e, int comps) const;
  /// Whether index v is injective in the pair (e, j) of a loop element and
  /// the element of a loop nested in it: e's slice times M plus a part owned
  /// by j below M (w1.adj[u * nin + i]), possibly scaled and offset.
  bool ownedByPair(ValueId v, ValueId e, ValueId j) const;
  /// Whether v is an affine function of the element index e and of values
  /// the scope does not define (constants, sizes, +, -, *): no index loaded
  /// from memory.
  bool affine(ValueId v, ValueId e) const;
  /// Whether v is the same at every step of a rollout of module m: loop
  /// elements, constants, sizes, int arithmetic and loads of int Body
  /// buffers (spring endpoints) at such indices.
  bool bodyInvariant(const Module &m, ValueId v) const;

private:
  template <class Fn> std::optional<Extent> scaled(ValueId mulv, ValueId r, Fn f) const;
  bool affine(ValueId v, ValueId e, int depth) const;

  std::unordered_map<ValueId, const Inst *> def_;
  std::map<ValueId, int> loopSet_;
};

} // namespace evoc::ir
