// CudaRollout (fused forward and backward kernels over a ragged population)
// run on the CPU emulation, against a full-tape rollout on the interpreter.
#include <catch2/catch.hpp>

#include <filesystem>
#include <unistd.h>

#include "Emulator.h"
#include "Harness.h"
#include "autodiff/Differentiate.h"
#include "codegen/cuda/CudaRollout.h"
#include "ir/Interpreter.h"
#include "opt/Passes.h"

using namespace evoc;
using namespace evoc::cudatest;
namespace fs = std::filesystem;

namespace {

struct Reference {
  double loss = 0;
  std::vector<std::vector<char>> grads; // per param adjoint buffer
  std::vector<char> lastX;
};

/// Forward over T states, the loss, its adjoint and T-1 step adjoints, with
/// every state and state adjoint kept (the protocol of docs/architecture.md).
Reference interpretRollout(const ir::Module &m, const MassSpringIds &d, RobotBuffers rb,
                           int64_t T, const std::vector<int> &params) {
  auto id = [&](const char *n) { return m.findBuffer(n); };
  int xAdj = id("point.x.adj"), vAdj = id("point.v.adj"), x1Adj = id("point.x.next.adj"),
      v1Adj = id("point.v.next.adj"), lastAdj = id("point.x.last.adj"),
      lossAdj = id("loss.adj");
  REQUIRE((xAdj >= 0 && vAdj >= 0 && x1Adj >= 0 && v1Adj >= 0 && lastAdj >= 0 && lossAdj >= 0));
  for (size_t b = 0; b < rb.data.size(); ++b) // rb is a copy: point at its own data
    rb.ptrs[b] = rb.data[b].data();
  size_t bx = rb.data[d.x].size();
  std::vector<std::vector<char>> xs(T, rb.data[d.x]), vs(T, rb.data[d.v]);
  std::vector<std::vector<char>> ax(T, std::vector<char>(bx, 0)), av = ax;
  auto zeroTemps = [&] {
    for (size_t b = 0; b < m.buffers.size(); ++b) {
      const ir::Buffer &B = m.buffers[b];
      if (B.role == ir::Role::Temp ||
          (B.role == ir::Role::Adjoint && m.buffers[B.primal].role == ir::Role::Temp))
        rb.zero(static_cast<int>(b));
    }
  };
  for (int b : params)
    rb.zero(b);
  for (int64_t t = 0; t + 1 < T; ++t) {
    rb.ptrs[d.x] = xs[t].data(), rb.ptrs[d.v] = vs[t].data();
    rb.ptrs[d.x1] = xs[t + 1].data(), rb.ptrs[d.v1] = vs[t + 1].data();
    zeroTemps();
    ir::interpret(m, d.step, rb.ptrs.data(), rb.sizes.data(), t);
  }
  rb.ptrs[d.xFirst] = xs[0].data();
  rb.ptrs[d.xLast] = xs[T - 1].data();
  zeroTemps();
  rb.zero(d.loss);
  ir::interpret(m, d.lossK, rb.ptrs.data(), rb.sizes.data(), T - 1);
  Reference r;
  r.loss = rb.get(d.loss, 0);
  r.lastX = xs[T - 1];
  zeroTemps();
  rb.zero(lossAdj);
  rb.set(lossAdj, 0, 1.0);
  rb.ptrs[lastAdj] = ax[T - 1].data();
  ir::interpret(m, m.findKernel("loss.adj"), rb.ptrs.data(), rb.sizes.data(), T - 1);
  for (int64_t t = T - 2; t >= 0; --t) {
    rb.ptrs[d.x] = xs[t].data(), rb.ptrs[d.v] = vs[t].data();
    rb.ptrs[x1Adj] = ax[t + 1].data(), rb.ptrs[v1Adj] = av[t + 1].data();
    rb.ptrs[xAdj] = ax[t].data(), rb.ptrs[vAdj] = av[t].data();
    zeroTemps();
    ir::interpret(m, m.findKernel("step.adj"), rb.ptrs.data(), rb.sizes.data(), t);
  }
  for (int b : params)
    r.grads.push_back(rb.data[b]);
  return r;
}

double relDiff(const std::vector<char> &a, const std::vector<char> &b) {
  REQUIRE(a.size() == b.size());
  const double *x = reinterpret_cast<const double *>(a.data());
  const double *y = reinterpret_cast<const double *>(b.data());
  double scale = 1e-300, diff = 0;
  for (size_t i = 0; i < a.size() / 8; ++i) {
    scale = std::max(scale, std::fabs(x[i]));
    diff = std::max(diff, std::fabs(x[i] - y[i]));
  }
  return diff / scale;
}

} // namespace

TEST_CASE("CudaRollout (emulated): loss and gradients of a ragged population", "[cuda][rollout]") {
  MassSpringIds d;
  ir::Module m = makeMassSpringModule(d);
  m.kernels.pop_back();
  autodiff::differentiate(m);
  opt::runPasses(m);
  std::vector<int> params;
  for (const char *n : {"mlp.w1.adj", "mlp.b1.adj", "mlp.w2.adj", "mlp.b2.adj"}) {
    params.push_back(m.findBuffer(n));
    REQUIRE(params.back() >= 0);
  }
  fs::path dir = fs::temp_directory_path() / ("evoc-cuda-rollout-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  EmulatedExecutable emu(m, dir.string());
  std::mt19937_64 rng(21);
  std::vector<MassSpringRobot> robots = {makeRandomRobot(rng, 9, 16), makeRandomRobot(rng, 3, 4)};
  const int64_t T = 7;
  std::vector<RobotBuffers> rbs;
  std::vector<int64_t> sizes;
  for (auto &r : robots) {
    rbs.push_back(makeBuffers(m, d, r));
    sizes.insert(sizes.end(), rbs.back().sizes.begin(), rbs.back().sizes.end());
  }
  codegen::cuda::CudaRollout ro(emu, m, static_cast<int>(robots.size()), sizes.data(), T);
  for (size_t r = 0; r < robots.size(); ++r)
    for (int b : {d.x, d.v, d.sa, d.sb, d.rest, d.stiff, d.actu, d.w1, d.b1, d.w2, d.b2})
      ro.upload(b, static_cast<int>(r), rbs[r].data[b].data());
  for (int pass = 0; pass < 2; ++pass) { // twice: buffers are reset correctly
    ro.zeroGradients();
    ro.forward();
    ro.backward();
    for (size_t r = 0; r < robots.size(); ++r) {
      INFO("robot " << r << " pass " << pass);
      Reference ref = interpretRollout(m, d, rbs[r], T, params);
      double loss = 0;
      ro.download(d.loss, static_cast<int>(r), &loss);
      CHECK(std::fabs(loss - ref.loss) <= 1e-12 * std::fabs(ref.loss));
      std::vector<char> lastX(ref.lastX.size());
      ro.download(d.x, static_cast<int>(r), lastX.data());
      CHECK(relDiff(ref.lastX, lastX) <= 1e-12);
      for (size_t i = 0; i < params.size(); ++i) {
        INFO(m.buffers[params[i]].name);
        std::vector<char> g(ref.grads[i].size());
        ro.download(params[i], static_cast<int>(r), g.data());
        CHECK(relDiff(ref.grads[i], g) <= 1e-10);
      }
    }
  }
  CHECK(ro.deviceBytes() > 0);
  fs::remove_all(dir);
}
