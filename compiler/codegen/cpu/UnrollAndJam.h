// Which loop nests the CPU lowering may unroll and jam (LowerToLLVM.cpp), for
// one episode or episodes in lanes.
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

/// The target's vector registers, as far as choosing a block size goes.
struct RegisterFile {
  int vectorBytes = 64; // bytes per vector register
  int vectors = 32;     // vector registers
  int masks = 7;        // mask registers usable by masked ops (AVX-512: k1-k7; 0: none)
};

/// How the lowering unrolls and jams: `rows` per block (0: jamRows'
/// choice for each nest, 1: no unroll and jam).
struct JamOptions {
  int rows = 1;
  RegisterFile regs;
};

/// Rows per block for the nest of jammableInner (inner loop at `inner` of
/// `loop`'s body) when a float value is `lanes` elements of `elemBytes`: the
/// most, up to 8, whose values held across the inner loop (each row's
/// accumulators and the inputs of its inner body that do not change with
/// the inner index, masks included) stay in registers. Eight rows give
/// eight independent chains of FMAs and read each inner input once per
/// eight rows; one more row than fits spills in every inner iteration (with
/// 16 lanes of doubles, AVX-512's seven mask registers hold three rows of a
/// guarded adjoint `x.adj[i] += c ? 0 : W[u, i] * y.adj[u]`).
int jamRows(const ir::Inst &loop, size_t inner, int lanes, int elemBytes, const RegisterFile &regs);

} // namespace evoc::codegen::cpu
