// Unroll and jam (codegen/cpu/UnrollAndJam.h), one episode or in lanes:
// which nests may be jammed, how many rows, and that jammed kernels compute what the
// interpreter computes lane by lane, bit for bit in strict mode, whatever
// the rows per block and however many rows are left over.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "codegen/cpu/CpuBackend.h"
#include "codegen/cpu/UnrollAndJam.h"
#include "ir/Builder.h"
#include "ir/Interpreter.h"

using namespace evoc;
using ir::Op;
using ir::ValueId;

namespace {

/// Two nests as autodiff and irgen write them, over rows `unit` and columns
/// `input`:
///   adjoint: for u: { g = gy[u]; b.adj[u] += g;
///                     for i: x.adj[i] += g == 0 ? 0 : w[u, i] * g }
///   forward: for u: { acc = 0; for i: acc += w[u, i] * x[i]; y[u] = acc + b[u] }
/// and, when `blocked`, an inner loop that reads what it writes at another
/// element (which must not be jammed).
struct Nests {
  ir::Module m;
  int unit = -1, input = -1;
  int w = -1, b = -1, x = -1, gy = -1, y = -1, badj = -1, xadj = -1, z = -1;
};

Nests nests(bool blocked) {
  Nests n;
  ir::Module &m = n.m;
  m.name = "nests";
  n.unit = ir::addSet(m, "unit");
  n.input = ir::addSet(m, "input");
  auto buf = [&](const char *name, ir::Role r, std::vector<int> sets, int primal = -1) {
    ir::Buffer bf;
    bf.name = name;
    bf.role = r;
    bf.sets = std::move(sets);
    bf.primal = primal;
    return ir::addBuffer(m, bf);
  };
  n.w = buf("w", ir::Role::Param, {n.unit, n.input});
  n.b = buf("b", ir::Role::Param, {n.unit});
  n.x = buf("x", ir::Role::State, {n.input});
  n.y = buf("y", ir::Role::NextState, {n.unit});
  n.gy = buf("gy", ir::Role::Adjoint, {n.unit}, n.y);
  n.badj = buf("b.adj", ir::Role::Adjoint, {n.unit}, n.b);
  n.xadj = buf("x.adj", ir::Role::Adjoint, {n.input}, n.x);
  n.z = buf("z", ir::Role::Adjoint, {n.input}, n.x);
  m.kernels.resize(1);
  m.kernels[0].name = "nests";
  ir::Builder bd(m, m.kernels[0]);
  ValueId zero = bd.constF(0.0);
  auto row = [&](ValueId u, ValueId i) {
    return bd.load(n.w, bd.op(Op::IAdd, {bd.op(Op::IMul, {u, bd.size(n.input)}), i}));
  };
  {
    ValueId u = bd.beginLoop(n.unit);
    ValueId g = bd.load(n.gy, u);
    bd.accAdd(n.badj, u, g);
    ValueId i = bd.beginLoop(n.input);
    ValueId t = bd.mul(row(u, i), g);
    bd.accAdd(n.xadj, i, bd.op(Op::Select, {bd.op(Op::Eq, {g, zero}), zero, t}));
    bd.endLoop();
    bd.endLoop();
  }
  {
    ValueId u = bd.beginLoop(n.unit);
    ValueId acc = bd.local();
    ValueId i = bd.beginLoop(n.input);
    bd.localUpdate(Op::LocalAdd, acc, bd.mul(row(u, i), bd.load(n.x, i)));
    bd.endLoop();
    bd.store(n.y, u, bd.add(bd.localGet(acc), bd.load(n.b, u)));
    bd.endLoop();
  }
  if (blocked) {
    ValueId u = bd.beginLoop(n.unit);
    ValueId i = bd.beginLoop(n.input);
    bd.accAdd(n.z, i, bd.mul(row(u, i), bd.load(n.z, bd.constI(0))));
    bd.endLoop();
    bd.endLoop();
  }
  return n;
}

/// Runs kernel 0 on U rows and I columns, once through the interpreter per
/// lane and once through `exe` with `lanes` lanes, and returns the largest
/// difference over the per-episode buffers relative to each one's largest
/// magnitude (0: bit for bit; infinity: a NaN or inf where the other has none).
double worstLane(const Nests &n, const codegen::Executable &exe, int lanes, int64_t U, int64_t I,
                 uint64_t seed) {
  const ir::Module &m = n.m;
  std::mt19937_64 g(seed);
  // Magnitudes over six decades, so a sum in another order rounds otherwise.
  auto value = [&] {
    return std::uniform_real_distribution<double>(-1, 1)(g) *
           std::pow(10.0, std::uniform_int_distribution<int>(-3, 3)(g));
  };
  const size_t nb = m.buffers.size();
  std::vector<int64_t> sizes(m.sets.size());
  sizes[size_t(n.unit)] = U;
  sizes[size_t(n.input)] = I;
  auto count = [&](int b) {
    int64_t c = 1;
    for (int s : m.buffers[size_t(b)].sets)
      c *= sizes[size_t(s)];
    return c;
  };
  auto shared = [&](int b) { return m.buffers[size_t(b)].role == ir::Role::Param; };
  std::vector<std::vector<std::vector<double>>> one(static_cast<size_t>(lanes)); // [lane][buffer]
  std::vector<std::vector<double>> wide(nb);
  for (int b = 0; b < int(nb); ++b) {
    const int64_t c = count(b);
    if (shared(b)) {
      wide[size_t(b)].resize(size_t(c) + 1);
      for (double &v : wide[size_t(b)])
        v = value();
      if (b == n.w && c > 2) // a weight the guard must keep out of x.adj
        wide[size_t(b)][1] = std::numeric_limits<double>::infinity();
      for (auto &l : one)
        l.push_back(wide[size_t(b)]);
      continue;
    }
    wide[size_t(b)].assign(size_t(c * lanes) + 1, 0.0);
    for (int l = 0; l < lanes; ++l) {
      std::vector<double> v(size_t(c) + 1, 0.0);
      for (int64_t e = 0; e < c; ++e) {
        // A third of gy's rows and lanes are 0: the guard decides lane by lane.
        const bool guarded = b == n.gy && (e + l) % 3 == 0;
        v[size_t(e)] = guarded ? 0.0 : value();
        wide[size_t(b)][size_t(e * lanes + l)] = v[size_t(e)];
      }
      one[size_t(l)].push_back(std::move(v));
    }
  }
  std::vector<void *> ptrs(nb);
  for (int l = 0; l < lanes; ++l) {
    for (size_t b = 0; b < nb; ++b)
      ptrs[b] = one[size_t(l)][b].data();
    ir::interpret(m, 0, ptrs.data(), sizes.data(), 0);
  }
  for (size_t b = 0; b < nb; ++b)
    ptrs[b] = wide[b].data();
  exe.run(0, ptrs.data(), sizes.data(), 0);
  double worst = 0;
  for (int b = 0; b < int(nb); ++b) {
    if (shared(b))
      continue;
    double scale = 0, diff = 0;
    for (int64_t e = 0; e < count(b); ++e)
      for (int l = 0; l < lanes; ++l) {
        const double a = one[size_t(l)][size_t(b)][size_t(e)];
        const double c = wide[size_t(b)][size_t(e * lanes + l)];
        if (std::isfinite(a))
          scale = std::max(scale, std::fabs(a));
        if (std::memcmp(&a, &c, sizeof a) != 0)
          diff = std::max(diff, std::isfinite(a) && std::isfinite(c) ? std::fabs(a - c) : INFINITY);
      }
    if (diff > 0)
      worst = std::max(worst, scale > 0 ? diff / scale : INFINITY);
  }
  return worst;
}

} // namespace

TEST_CASE("unroll and jam: which nests, and how many rows", "[llvm][lanes][jam]") {
  Nests n = nests(true);
  const ir::Block &body = n.m.kernels[0].body;
  std::vector<const ir::Inst *> loops;
  for (const auto &in : body.insts)
    if (in->op == Op::Loop)
      loops.push_back(in.get());
  REQUIRE(loops.size() == 3);
  CHECK(codegen::cpu::jammableInner(*loops[0]) == size_t(2)); // adjoint: after the load and add
  CHECK(codegen::cpu::jammableInner(*loops[1]) == size_t(1)); // forward: after the local
  CHECK(!codegen::cpu::jammableInner(*loops[2]));             // reads z[0], which it writes

  // AVX-512, 16 lanes of doubles: a guarded row holds y.adj[u] (2 vectors)
  // and its mask (2 of the 7 mask registers), a forward row its accumulator.
  const codegen::cpu::RegisterFile avx512{64, 32, 7}, avx2{32, 16, 0};
  CHECK(codegen::cpu::jamRows(*loops[0], 2, 16, 8, avx512) == 3);
  CHECK(codegen::cpu::jamRows(*loops[1], 1, 16, 8, avx512) == 8);
  CHECK(codegen::cpu::jamRows(*loops[0], 2, 8, 8, avx512) == 7);
  CHECK(codegen::cpu::jamRows(*loops[0], 2, 32, 8, avx512) == 1);
  CHECK(codegen::cpu::jamRows(*loops[1], 1, 16, 8, avx2) == 1);
  CHECK(codegen::cpu::jamRows(*loops[1], 1, 8, 8, avx2) == 5);
  // One episode: LLVM vectorises the inner loop, so a row's values are
  // vectors of a register's width (8 doubles, 4 with AVX2).
  CHECK(codegen::cpu::jamRows(*loops[0], 2, 1, 8, avx512) ==
        codegen::cpu::jamRows(*loops[0], 2, 8, 8, avx512));
  CHECK(codegen::cpu::jamRows(*loops[1], 1, 1, 8, avx512) == 8);
  CHECK(codegen::cpu::jamRows(*loops[1], 1, 1, 8, avx2) ==
        codegen::cpu::jamRows(*loops[1], 1, 4, 8, avx2));
}

TEST_CASE("unroll and jam: a part that touches what another writes is not jammed",
          "[llvm][lanes][jam]") {
  // for u: { for i: x.adj[i] += w[u, i]; y[u] = x.adj[0] } reads in the suffix
  // what the inner loop writes; a local declared outside the nest and
  // updated in its inner loop would be updated in another order.
  for (int variant = 0; variant < 3; ++variant) {
    Nests n = nests(false);
    ir::Kernel &k = n.m.kernels[0];
    k.body.insts.clear();
    ir::Builder bd(n.m, k);
    ValueId outer = variant == 1 ? bd.local() : 0;
    ValueId u = bd.beginLoop(n.unit);
    if (variant == 2)
      bd.accAdd(n.xadj, bd.constI(0), bd.load(n.b, u)); // the prefix writes x.adj too
    ValueId i = bd.beginLoop(n.input);
    ValueId w = bd.load(n.w, bd.op(Op::IAdd, {bd.op(Op::IMul, {u, bd.size(n.input)}), i}));
    if (variant == 1)
      bd.localUpdate(Op::LocalAdd, outer, w);
    else
      bd.accAdd(n.xadj, i, w);
    bd.endLoop();
    if (variant == 0)
      bd.store(n.y, u, bd.load(n.xadj, bd.constI(0)));
    bd.endLoop();
    const ir::Inst *loop = nullptr;
    for (const auto &in : k.body.insts)
      if (in->op == Op::Loop)
        loop = in.get();
    INFO("variant " << variant);
    REQUIRE(loop);
    CHECK(!codegen::cpu::jammableInner(*loop));
  }
}

TEST_CASE("jammed kernels (one episode or lanes) are the interpreter's lane by lane, rows left "
          "over or not",
          "[llvm][lanes][jam]") {
  Nests n = nests(true);
  codegen::CompileOptions co;
  co.useCache = false;
  const struct {
    int lanes, jam;
  } cases[] = {{1, 0}, {1, 3}, {1, 8}, {4, 0}, {4, 2}, {4, 3}, {8, 4}, {8, 8}, {16, 0}, {16, 5}};
  for (auto [lanes, jam] : cases) {
    co.lanes = lanes;
    co.lanesJam = jam;
    auto strict = codegen::cpu::compileCpu(n.m, co, codegen::cpu::FpMode::Strict);
    auto fast = codegen::cpu::compileCpu(n.m, co, codegen::cpu::FpMode::Fast);
    for (int64_t U : {0, 1, 2, 3, 7, 8, 13})
      for (int64_t I : {0, 1, 5, 17}) {
        INFO(lanes << " lanes, " << jam << " rows per block, " << U << " x " << I);
        CHECK(worstLane(n, *strict, lanes, U, I, uint64_t(U * 100 + I)) == 0.0);
        CHECK(worstLane(n, *fast, lanes, U, I, uint64_t(U * 100 + I)) <= 1e-12);
      }
  }
}
