// RobotBuffers and the rollout schedule shared by the CUDA tests.
#include "Harness.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "codegen/cuda/CudaBackend.h"
#include "ir/Interpreter.h"

namespace evoc::test {

size_t RobotBuffers::length(int b) const {
  return data[b].size() / (f64 ? 8 : 4); // int buffers are int32: 4 bytes
}

double RobotBuffers::get(int b, size_t i) const {
  if (f64) {
    double v;
    std::memcpy(&v, data[b].data() + i * 8, 8);
    return v;
  }
  float v;
  std::memcpy(&v, data[b].data() + i * 4, 4);
  return v;
}

void RobotBuffers::set(int b, size_t i, double v) {
  if (f64) {
    std::memcpy(data[b].data() + i * 8, &v, 8);
  } else {
    float f = static_cast<float>(v);
    std::memcpy(data[b].data() + i * 4, &f, 4);
  }
}

void RobotBuffers::zero(int b) { std::fill(data[b].begin(), data[b].end(), 0); }

RobotBuffers makeBuffers(const ir::Module &m, const MassSpringIds &d, const MassSpringRobot &r) {
  RobotBuffers rb;
  rb.f64 = m.precision == ir::Precision::F64;
  rb.sizes.assign(m.sets.size(), 0);
  rb.sizes[d.point] = r.nPoints;
  rb.sizes[d.spring] = r.nSprings;
  rb.sizes[d.unit] = 32;
  rb.sizes[d.input] = 12 + 4 * r.nPoints;
  rb.sizes[d.wave] = 10;
  for (size_t b = 0; b < m.buffers.size(); ++b) {
    int64_t n = ir::bufferLength(m, static_cast<int>(b), rb.sizes.data());
    size_t es = m.buffers[b].elem == ir::Type::I ? 4 : (rb.f64 ? 8 : 4);
    rb.data.emplace_back(static_cast<size_t>(n) * es, 0);
  }
  auto fill = [&](int b, const std::vector<double> &v) {
    for (size_t i = 0; i < v.size(); ++i)
      rb.set(b, i, v[i]);
  };
  fill(d.x, r.x0);
  fill(d.xFirst, r.x0);
  fill(d.v, r.v0);
  std::memcpy(rb.data[d.sa].data(), r.a.data(), r.a.size() * 4);
  std::memcpy(rb.data[d.sb].data(), r.b.data(), r.b.size() * 4);
  fill(d.rest, r.rest);
  fill(d.stiff, r.stiff);
  fill(d.actu, r.actu);
  fill(d.w1, r.w1);
  fill(d.b1, r.b1);
  fill(d.w2, r.w2);
  fill(d.b2, r.b2);
  for (size_t i = 0; i < rb.length(d.hidAdj); ++i)
    rb.set(d.hidAdj, i, std::sin(1.0 + 0.37 * double(i)));
  for (size_t i = 0; i < rb.length(d.chain); ++i)
    rb.set(d.chain, i, std::cos(0.5 + 0.11 * double(i)));
  for (size_t i = 0; i < rb.length(d.in); ++i)
    rb.set(d.in, i, 0.01 * std::sin(0.3 * double(i)));
  for (size_t i = 0; i < rb.length(d.hid); ++i)
    rb.set(d.hid, i, std::tanh(std::cos(0.7 * double(i))));
  for (auto &v : rb.data)
    rb.ptrs.push_back(v.data());
  // The adjoint reads the forward's temporaries of the last step.
  rb.ptrs[d.hidSaved] = rb.data[d.hid].data();
  rb.ptrs[d.inSaved] = rb.data[d.in].data();
  return rb;
}

namespace {

/// Binds state t to x/v and state t+1 to x1/v1; zeroes the step's temps.
void prepareStep(const MassSpringIds &d, RobotBuffers &rb, int64_t t) {
  int cur = t % 2 ? d.x1 : d.x, nxt = t % 2 ? d.x : d.x1;
  int curV = t % 2 ? d.v1 : d.v, nxtV = t % 2 ? d.v : d.v1;
  rb.ptrs[d.x] = rb.data[cur].data();
  rb.ptrs[d.v] = rb.data[curV].data();
  rb.ptrs[d.x1] = rb.data[nxt].data();
  rb.ptrs[d.v1] = rb.data[nxtV].data();
  for (int b : {d.in, d.hid, d.act, d.vinc})
    rb.zero(b);
}

/// After the rollout: x/v point at the last state, xLast too; temps zeroed.
void prepareTail(const MassSpringIds &d, RobotBuffers &rb, int64_t T) {
  int last = (T - 1) % 2 ? d.x1 : d.x;
  rb.ptrs[d.xLast] = rb.data[last].data();
  rb.ptrs[d.x] = rb.data[last].data();
  for (int b : {d.b1Adj, d.w1Adj, d.inAdj, d.cAdj, d.stats})
    rb.zero(b);
}

} // namespace

void rollout(const ir::Module &m, const MassSpringIds &d, RobotBuffers &rb, int64_t T,
             const RunFn &run) {
  for (int64_t t = 0; t + 1 < T; ++t) {
    prepareStep(d, rb, t);
    run(d.step, rb.ptrs.data(), rb.sizes.data(), t);
  }
  prepareTail(d, rb, T);
  run(d.lossK, rb.ptrs.data(), rb.sizes.data(), T - 1);
  run(d.adj, rb.ptrs.data(), rb.sizes.data(), T - 1);
  (void)m;
}

void rolloutBatch(const ir::Module &m, const MassSpringIds &d, std::vector<RobotBuffers> &rbs,
                  int64_t T, const BatchFn &run) {
  size_t nS = m.sets.size();
  std::vector<int64_t> sizes;
  for (auto &rb : rbs)
    sizes.insert(sizes.end(), rb.sizes.begin(), rb.sizes.end());
  auto call = [&](int k, int64_t t) {
    std::vector<void *const *> tables;
    for (auto &rb : rbs)
      tables.push_back(rb.ptrs.data());
    run(k, static_cast<int>(rbs.size()), tables.data(), sizes.data(), t);
  };
  for (int64_t t = 0; t + 1 < T; ++t) {
    for (auto &rb : rbs)
      prepareStep(d, rb, t);
    call(d.step, t);
  }
  for (auto &rb : rbs)
    prepareTail(d, rb, T);
  call(d.lossK, T - 1);
  call(d.adj, T - 1);
  (void)nS;
}

Reference referenceRollout(const ir::Module &m, const MassSpringIds &d, RobotBuffers rb, int64_t T,
                           const std::vector<int> &params, const RunFn &run) {
  auto id = [&](const char *n) { return m.findBuffer(n); };
  int xAdj = id("point.x.adj"), vAdj = id("point.v.adj"), x1Adj = id("point.x.next.adj"),
      v1Adj = id("point.v.next.adj"), lastAdj = id("point.x.last.adj"), lossAdj = id("loss.adj");
  if (xAdj < 0 || vAdj < 0 || x1Adj < 0 || v1Adj < 0 || lastAdj < 0 || lossAdj < 0)
    throw std::runtime_error("referenceRollout: the module lacks the expected adjoint buffers");
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
    run(d.step, rb.ptrs.data(), rb.sizes.data(), t);
  }
  rb.ptrs[d.xFirst] = xs[0].data();
  rb.ptrs[d.xLast] = xs[T - 1].data();
  zeroTemps();
  rb.zero(d.loss);
  run(d.lossK, rb.ptrs.data(), rb.sizes.data(), T - 1);
  Reference r;
  r.loss = rb.get(d.loss, 0);
  r.lastX = xs[T - 1];
  zeroTemps();
  rb.zero(lossAdj);
  rb.set(lossAdj, 0, 1.0);
  rb.ptrs[lastAdj] = ax[T - 1].data();
  run(m.findKernel("loss.adj"), rb.ptrs.data(), rb.sizes.data(), T - 1);
  for (int64_t t = T - 2; t >= 0; --t) {
    rb.ptrs[d.x] = xs[t].data(), rb.ptrs[d.v] = vs[t].data();
    rb.ptrs[x1Adj] = ax[t + 1].data(), rb.ptrs[v1Adj] = av[t + 1].data();
    rb.ptrs[xAdj] = ax[t].data(), rb.ptrs[vAdj] = av[t].data();
    zeroTemps();
    run(m.findKernel("step.adj"), rb.ptrs.data(), rb.sizes.data(), t);
  }
  for (int b : params)
    r.grads.push_back(rb.data[b]);
  return r;
}

RunFn interpreter(const ir::Module &m) {
  return [&m](int k, void *const *b, const int64_t *s, int64_t t) { ir::interpret(m, k, b, s, t); };
}

double maxRelDiff(const RobotBuffers &ref, const RobotBuffers &got, int b) {
  // Relative to the largest entry, or to 1e-12 where every entry is
  // smaller: a buffer that is exactly zero on one side and 1e-19 on the
  // other (another summation order) agrees.
  double scale = 1e-12, diff = 0;
  const char *pr = static_cast<const char *>(ref.ptrs[b]);
  const char *pg = static_cast<const char *>(got.ptrs[b]);
  // Compare what the pointers show (x/v may point at either state buffer).
  size_t es = ref.f64 ? 8 : 4, n = ref.data[b].size() / es;
  for (size_t i = 0; i < n; ++i) {
    double r, g;
    if (ref.f64) {
      std::memcpy(&r, pr + i * 8, 8);
      std::memcpy(&g, pg + i * 8, 8);
    } else {
      float rf, gf;
      std::memcpy(&rf, pr + i * 4, 4);
      std::memcpy(&gf, pg + i * 4, 4);
      r = rf, g = gf;
    }
    scale = std::max(scale, std::fabs(r));
    diff = std::max(diff, std::fabs(r - g));
    if (std::isnan(r) != std::isnan(g))
      return INFINITY;
  }
  return diff / scale;
}

bool gpuOrSkip() {
  std::string why;
  if (codegen::cuda::cudaAvailable(&why))
    return true;
  WARN("skipped, no GPU: " << why);
  return false;
}

} // namespace evoc::test
