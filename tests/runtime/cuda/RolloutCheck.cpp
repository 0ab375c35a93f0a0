// Shared by the CUDA rollout tests: a differentiated ELDiR module and a check
// of CudaRollout against per-robot reference rollouts.
#include "RolloutCheck.h"

#include <catch2/catch.hpp>

#include <cmath>

#include "autodiff/Differentiate.h"
#include "cuda/CudaRollout.h"
#include "opt/Passes.h"

namespace evoc::test {
namespace {

double relDiff(const std::vector<char> &a, const std::vector<char> &b) {
  REQUIRE(a.size() == b.size());
  const double *x = reinterpret_cast<const double *>(a.data());
  const double *y = reinterpret_cast<const double *>(b.data());
  // Relative to the largest entry, or to 1e-12 where every entry is
  // smaller: a buffer that is exactly zero on one side and 1e-19 on the
  // other (another summation order) agrees.
  double scale = 1e-12, diff = 0;
  for (size_t i = 0; i < a.size() / 8; ++i) {
    scale = std::max(scale, std::fabs(x[i]));
    diff = std::max(diff, std::fabs(x[i] - y[i]));
  }
  return diff / scale;
}

} // namespace

DifferentiatedModule differentiatedModule(ir::Precision p) {
  DifferentiatedModule r;
  r.m = makeMassSpringModule(r.d, p, true);
  r.m.kernels.pop_back(); // the adjoint-shapes kernel
  autodiff::differentiate(r.m);
  opt::runPasses(r.m);
  for (const char *n : {"mlp.w1.adj", "mlp.b1.adj", "mlp.w2.adj", "mlp.b2.adj"}) {
    r.params.push_back(r.m.findBuffer(n));
    REQUIRE(r.params.back() >= 0);
  }
  return r;
}

/// CudaRollout of `robots` on `exe` against per-robot reference rollouts
/// through `ref`: loss, last state and every parameter gradient.
void checkRollout(const codegen::cuda::CudaExecutable &exe, const ir::Module &m,
                  const MassSpringIds &d, const std::vector<int> &params,
                  const std::vector<MassSpringRobot> &robots, int64_t T, const RunFn &ref,
                  double tol) {
  std::vector<RobotBuffers> rbs;
  std::vector<int64_t> sizes;
  for (auto &r : robots) {
    rbs.push_back(makeBuffers(m, d, r));
    sizes.insert(sizes.end(), rbs.back().sizes.begin(), rbs.back().sizes.end());
  }
  cuda::CudaRollout ro(exe, m, static_cast<int>(robots.size()), sizes.data(), T);
  // Bodies and states robot by robot, parameters all robots at once.
  for (size_t r = 0; r < robots.size(); ++r)
    for (int b : {d.x, d.v, d.sa, d.sb, d.rest, d.stiff, d.actu})
      ro.upload(b, static_cast<int>(r), rbs[r].data[b].data());
  for (int b : {d.w1, d.b1, d.w2, d.b2}) {
    std::vector<const void *> host;
    for (auto &rb : rbs)
      host.push_back(rb.data[b].data());
    ro.uploadAll(b, host.data());
  }
  std::vector<Reference> refs;
  for (size_t r = 0; r < robots.size(); ++r)
    refs.push_back(referenceRollout(m, d, rbs[r], T, params, ref));
  for (int pass = 0; pass < 2; ++pass) { // twice: buffers are reset correctly
    ro.zeroGradients();
    ro.forward();
    ro.backward();
    for (size_t r = 0; r < robots.size(); ++r) {
      INFO("robot " << r << " pass " << pass);
      const Reference &rf = refs[r];
      double loss = 0;
      ro.download(d.loss, static_cast<int>(r), &loss);
      CHECK(std::fabs(loss - rf.loss) <= tol * std::fabs(rf.loss));
      std::vector<char> lastX(rf.lastX.size());
      ro.download(d.x, static_cast<int>(r), lastX.data());
      CHECK(relDiff(rf.lastX, lastX) <= tol);
      for (size_t i = 0; i < params.size(); ++i) {
        INFO(m.buffers[params[i]].name);
        std::vector<char> g(rf.grads[i].size());
        if (pass == 0) {
          ro.download(params[i], static_cast<int>(r), g.data());
        } else { // the whole population's gradient in one copy
          std::vector<std::vector<char>> all(robots.size());
          std::vector<void *> host;
          for (size_t q = 0; q < robots.size(); ++q) {
            all[q].resize(refs[q].grads[i].size());
            host.push_back(all[q].data());
          }
          ro.downloadAll(params[i], host.data());
          g = all[r];
        }
        CHECK(relDiff(rf.grads[i], g) <= 100 * tol);
      }
    }
  }
  CHECK(ro.deviceBytes() > 0);
}

} // namespace evoc::test
