// Which loop nests the lanes lowering may unroll and jam (LowerToLLVM.cpp).
#pragma once

#include <cstddef>
#include <optional>

#include "ir/IR.h"

namespace evoc::codegen::cpu {

/// For a loop `for u: { prefix; for i: { inner }; suffix }` (one inner loop,
/// no other loop in either body), the position of the inner loop in the
/// outer body when B consecutive iterations u0 .. u0+B-1 may run as
///
///   prefix(u0) .. prefix(u0+B-1)
///   for i: { inner(u0, i) .. inner(u0+B-1, i) }
///   suffix(u0) .. suffix(u0+B-1)
///
/// with every buffer element and accumulator local seeing the same
/// operations in the same order as in the loop (so the results are the same
/// bit for bit): no buffer written in one of the three parts is accessed in
/// another; the inner body writes buffers only at its own element i and
/// never reads them; the locals it updates are declared inside the outer
/// loop (each of the B copies has its own), and a local declared outside is
/// updated in one part only. With episodes in lanes, each inner row `x.adj[i]
/// += W[u, i] * y.adj[u]` then reads and writes x.adj once per B rows, and a
/// row of a matrix-vector product `acc_u += W[u, i] * x[i]` reads x[i] once
/// per B rows into B independent chains. nullopt when the loop is not so.
std::optional<size_t> jammableInner(const ir::Inst &loop);

} // namespace evoc::codegen::cpu
