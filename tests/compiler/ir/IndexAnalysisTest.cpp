// The index analysis shared by fusion, the CUDA plan and CPU loop fission.
#include <catch2/catch.hpp>

#include "ir/Builder.h"
#include "ir/IndexAnalysis.h"

using namespace evoc::ir;

TEST_CASE("index analysis: own elements, slices, pairs, affinity", "[ir][index]") {
  Module m;
  int point = addSet(m, "point"), unit = addSet(m, "unit");
  Buffer nbr;
  nbr.name = "point.nbr";
  nbr.elem = Type::I;
  nbr.role = Role::Body;
  nbr.sets = {point};
  int nb = addBuffer(m, nbr);
  m.kernels.emplace_back();
  Builder b(m, m.kernels[0]);
  ValueId two = b.constI(2), one = b.constI(1), n = b.size(unit), t = b.time();
  ValueId i = b.beginLoop(point);
  ValueId i2 = b.op(Op::IMul, {i, two});
  ValueId own1 = b.op(Op::IAdd, {i2, one}); // i * 2 + 1
  ValueId past = b.op(Op::IAdd, {i2, two}); // i * 2 + 2: the next element's
  ValueId next = b.op(Op::IAdd, {i, one});  // i + 1
  ValueId gathered = b.load(nb, i);         // nbr[i]
  ValueId viaGather = b.op(Op::IMul, {gathered, two});
  ValueId u = b.beginLoop(unit);
  ValueId pair = b.op(Op::IAdd, {b.op(Op::IMul, {i, n}), u}); // i * |unit| + u
  b.endLoop();
  b.endLoop();
  IndexAnalysis ix(m.kernels[0].body);

  CHECK(ix.loopSet(i) == point);
  CHECK(ix.ownElement(i, i, 1));
  CHECK_FALSE(ix.ownElement(i, i, 2));
  CHECK(ix.ownElement(i2, i, 2));
  CHECK(ix.ownElement(own1, i, 2));
  CHECK_FALSE(ix.ownElement(past, i, 2));
  CHECK_FALSE(ix.ownElement(next, i, 1));
  CHECK_FALSE(ix.ownElement(viaGather, i, 2));
  REQUIRE(ix.ownedSlice(pair, i));
  CHECK(*ix.ownedSlice(pair, i) == Extent{1, {unit}});
  CHECK(ix.ownedByPair(pair, i, u));
  CHECK_FALSE(ix.ownedByPair(pair, u, i));
  CHECK(ix.bound(u) == Extent{1, {unit}});
  CHECK(ix.affine(next, i));
  CHECK(ix.affine(pair, i)); // u is not defined by an instruction: opaque
  CHECK_FALSE(ix.affine(viaGather, i));
  CHECK(ix.bodyInvariant(m, viaGather)); // an int Body buffer: the same at every step
  CHECK(ix.bodyInvariant(m, pair));
  CHECK_FALSE(ix.bodyInvariant(m, t)); // the step changes
}
