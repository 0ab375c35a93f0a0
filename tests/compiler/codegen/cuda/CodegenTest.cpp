// The CUDA emitter and kernel planner: golden excerpts of generated source
// (#line, block reductions, recorded scatter-adds) and the plan's decisions.
#include <catch2/catch.hpp>

#include <algorithm>
#include <regex>
#include <set>

#include "MassSpring.h"
#include "codegen/cuda/CudaBackend.h"
#include "codegen/cuda/KernelPlan.h"
#include "ir/Verifier.h"

using namespace evoc;
using namespace evoc::test;
using codegen::cuda::LoopPlan;

namespace {

/// The text of kernel `k` in generated source: from its comment to the next.
std::string kernelText(const std::string &src, int k) {
  auto b = src.find("// kernel " + std::to_string(k) + ":");
  REQUIRE(b != std::string::npos);
  auto e = src.find("// kernel " + std::to_string(k + 1) + ":", b);
  return src.substr(b, e == std::string::npos ? std::string::npos : e - b);
}

std::vector<const ir::Inst *> topLoops(const ir::Kernel &k) {
  std::vector<const ir::Inst *> r;
  for (const auto &ip : k.body.insts)
    if (ip->op == ir::Op::Loop)
      r.push_back(ip.get());
  return r;
}

} // namespace

TEST_CASE("the hand-built test module is valid IR", "[cuda]") {
  MassSpringIds d;
  ir::Module m = makeMassSpringModule(d, ir::Precision::F64, true);
  auto errs = ir::verify(m);
  INFO((errs.empty() ? std::string() : errs.front()));
  CHECK(errs.empty());
}

TEST_CASE("planner: parallel loops, reductions, owned and deferred scatter-adds", "[cuda]") {
  MassSpringIds d;
  ir::Module m = makeMassSpringModule(d, ir::Precision::F64, true);
  // step: centre, waves, inputs, hidden, act, springs, integrate.
  auto step = codegen::cuda::planKernel(m, m.kernels[d.step]);
  auto loops = topLoops(m.kernels[d.step]);
  REQUIRE(loops.size() == 7);
  for (auto *l : loops)
    CHECK(step.loops.at(l).mode == LoopPlan::Mode::Parallel);
  CHECK(step.loops.at(loops[0]).reduced.size() == 2);  // sx, sy
  CHECK(step.loops.at(loops[5]).deferred.size() == 4); // vinc at both endpoints
  CHECK(step.sites.size() == 4);
  CHECK(step.loops.at(loops[3]).reduced.empty()); // the unit's own local
  // Inner products (hidden = W1 in, act = W2 hidden) may run a warp per element.
  REQUIRE(step.loops.at(loops[3]).split.size() == 1);
  CHECK(step.loops.at(loops[3]).split.begin()->second.size() == 1);
  CHECK(step.loops.at(loops[4]).split.size() == 1);
  CHECK(step.loops.at(loops[5]).split.empty()); // springs: no inner loop
  // The adjoint-shapes kernel's unit loop scatters inside its inner loop to
  // w1.adj[u * nin + i] (owned by the pair) and to records: still split.
  auto adjPlan = codegen::cuda::planKernel(m, m.kernels[d.adj]);
  CHECK(adjPlan.loops.at(topLoops(m.kernels[d.adj])[0]).split.size() == 1);

  auto adj = codegen::cuda::planKernel(m, m.kernels[d.adj]);
  auto al = topLoops(m.kernels[d.adj]);
  REQUIRE(al.size() == 3);
  const LoopPlan &units = adj.loops.at(al[0]);
  CHECK(units.mode == LoopPlan::Mode::Parallel);
  // b1.adj[u] and w1.adj[u * nin + i] are owned by the unit; in.adj[i] is shared.
  REQUIRE(units.deferred.size() == 1);
  CHECK((*units.deferred.begin())->buffer == d.inAdj);
  // ... owned by the inner loop's element: replayed in parallel over inputs.
  CHECK(units.transposed.size() == 1);
  CHECK(step.loops.at(loops[5]).transposed.empty()); // endpoints: no such owner
  const LoopPlan &points = adj.loops.at(al[1]);
  CHECK(points.deferred.size() == 2); // both into centre.adj
  CHECK(points.reduced.size() == 3);
  std::multiset<ir::Op> ops;
  for (const auto &[slot, op] : points.reduced)
    ops.insert(op);
  CHECK(ops == std::multiset<ir::Op>{ir::Op::LocalAdd, ir::Op::LocalMax, ir::Op::LocalMin});
  CHECK(adj.loops.at(al[2]).mode == LoopPlan::Mode::Serial); // reads what it scatters
  CHECK(adj.sites.size() == 3);
}

TEST_CASE("generated CUDA: #line, block reductions, replays, precision", "[cuda]") {
  MassSpringIds d;
  ir::Module m = makeMassSpringModule(d, ir::Precision::F64, true);
  std::string src = codegen::cuda::emitCuda(m);
  CHECK(src == codegen::cuda::emitCuda(m)); // deterministic

  CHECK(src.find("typedef double F;") != std::string::npos);
  CHECK(src.find("extern \"C\" __global__ void __launch_bounds__(EVOC_BLOCK)\nevoc_k0(") !=
        std::string::npos);
  // #line points at the .evo files, and the generated file resumes after.
  CHECK(src.find("#line 10 \"stdlib/physics/mass_spring.evo\"") != std::string::npos);
  CHECK(src.find("#line 21 \"stdlib/controllers/mlp.evo\"") != std::string::npos);
  CHECK(src.find("#line 42 \"stdlib/physics/mass_spring.evo\"") != std::string::npos);
  CHECK(std::regex_search(src, std::regex("#line [0-9]+ \"evoc_mass_spring.cu\"\n}")));
  // ... with the right number: the line after the directive is line N.
  std::regex back("#line ([0-9]+) \"evoc_mass_spring.cu\"\n");
  int resets = 0;
  for (auto it = std::sregex_iterator(src.begin(), src.end(), back); it != std::sregex_iterator();
       ++it, ++resets) {
    size_t after = static_cast<size_t>(it->position(0) + it->length(0));
    long physical = std::count(src.begin(), src.begin() + static_cast<long>(after), '\n') + 1;
    CHECK(physical == std::stol((*it)[1].str()));
  }
  CHECK(resets >= 2); // step and adjoint_shapes (the loss has no locations)

  std::string step = kernelText(src, d.step);
  // The centre: per-thread partials, strided loop, fixed-order tree reduction.
  CHECK(std::regex_search(step, std::regex("F p[0-9]+ = \\(0\\.0\\);")));
  CHECK(step.find("+= EVOC_BLOCK) {") != std::string::npos);
  CHECK(std::regex_search(
      step,
      std::regex("l([0-9]+) = evoc_combine<0>\\(l\\1, evoc_reduce<0>\\(p\\1, evoc_sh\\)\\);")));
  // Spring impulses: recorded, then replayed by thread 0 in loop order.
  CHECK(std::regex_search(step,
                          std::regex("r0i\\[v[0-9]+\\] = v[0-9]+; r0v\\[v[0-9]+\\] = v[0-9]+;")));
  // ... through per-target incidence lists sorted into the interpreter's order.
  CHECK(step.find("{ // ordered parallel replay into point.vinc: per-target incidence lists") !=
        std::string::npos);
  CHECK(step.find("const long long *ri[4] = {r0i, r1i, r2i, r3i};") != std::string::npos);
  CHECK(step.find("evoc_scan(cnt, start, n, (int *)evoc_sh);") != std::string::npos);
  // Endpoints come from the body: lists are built once per rollout launch.
  CHECK(step.find("if (evoc_first) { // lists depend on the body only") != std::string::npos);
  CHECK(src.find("evoc_body0(evoc_ptrs, sizes, scratch, t, evoc_sh, t == evoc_a);") !=
        std::string::npos); // the fused forward rollout passes "first step of the launch"
  // Integer atomics build the lists; no float is ever added atomically.
  CHECK_FALSE(std::regex_search(step, std::regex("atomic[A-Za-z]*\\(&?b[0-9]")));
  CHECK(step.find("tanh(") != std::string::npos);
  CHECK(step.find("] >= 32) { // few elements, long inner loop: a warp per element") !=
        std::string::npos);
  CHECK(std::regex_search(
      step, std::regex(
                "l([0-9]+) = evoc_combine<0>\\(l\\1, evoc_warp_reduce<0>\\(q\\1, evoc_sh\\)\\);")));
  CHECK(std::regex_search(step,
                          std::regex("if \\(lane == 0\\) \\{ b" + std::to_string(d.hid) + "\\[")));
  // Int index buffers are int32 in memory, widened on load.
  CHECK(std::regex_search(step, std::regex("const int \\*__restrict__ b[0-9]+ = \\(const int "
                                           "\\*\\)buffers\\[[0-9]+\\]; // spring.a")));

  std::string adj = kernelText(src, d.adj);
  CHECK(adj.find("(serial: cross-iteration dependence)") != std::string::npos);
  CHECK(std::regex_search(adj, std::regex("for \\(long long (v[0-9]+) = tid; \\1 < sizes\\[" +
                                          std::to_string(d.input) +
                                          "\\]; \\1 \\+= EVOC_BLOCK\\) \\{\n"
                                          " *for \\(long long v[0-9]+ = 0; v[0-9]+ < sizes\\[" +
                                          std::to_string(d.unit) + "\\]; \\+\\+v[0-9]+\\) \\{")));
  CHECK(std::regex_search(adj, std::regex("evoc_reduce<1>")));
  CHECK(std::regex_search(adj, std::regex("evoc_reduce<2>")));
  CHECK(std::regex_search(adj, std::regex("= evoc_broadcast\\(l")) == false); // updated locals only
  // Owned scatter-adds stay direct.
  CHECK(std::regex_search(
      adj, std::regex("b" + std::to_string(d.w1Adj) + "\\[v[0-9]+\\] \\+= v[0-9]+;")));
  // Top-level stores: by thread 0.
  CHECK(std::regex_search(adj, std::regex("if \\(tid == 0\\) b" + std::to_string(d.stats) +
                                          "\\[v[0-9]+\\] = v[0-9]+;")));

  ir::Module m32 = makeMassSpringModule(d, ir::Precision::F32, true);
  std::string s32 = codegen::cuda::emitCuda(m32);
  CHECK(s32.find("typedef float F;") != std::string::npos);
  CHECK(s32.find("tanhf(") != std::string::npos);
  CHECK(s32.find("expf(") != std::string::npos);
  CHECK(std::regex_search(s32, std::regex("\\(\\(F\\)0.0040000000000000001\\)")));
}

TEST_CASE("EVOC_CUDA_REPLAY=serial: thread 0 replays scatter-adds in loop order", "[cuda]") {
  MassSpringIds d;
  ir::Module m = makeMassSpringModule(d, ir::Precision::F64, true);
  ::setenv("EVOC_CUDA_REPLAY", "serial", 1);
  std::string src = codegen::cuda::emitCuda(m);
  auto plan = codegen::cuda::planKernel(m, m.kernels[d.step]);
  ::unsetenv("EVOC_CUDA_REPLAY");
  std::string step = kernelText(src, d.step);
  CHECK(step.find("if (tid == 0) { // replay deferred scatter-adds in loop order") !=
        std::string::npos);
  CHECK(
      std::regex_search(step, std::regex("b[0-9]+\\[r3i\\[v[0-9]+\\]\\] \\+= r3v\\[v[0-9]+\\];")));
  CHECK(step.find("atomic") == std::string::npos);
  CHECK(plan.groups.empty());
}
