// Agreement of the adjoint kernels (after autodiff::differentiate) with the
// interpreter on every back end, at realistic mid-rollout states.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "Backends.h"
#include "MassSpring.h"
#include "autodiff/Differentiate.h"

using namespace evoc;

namespace {

/// Every buffer of the module for one robot, filled for a call of an
/// adjoint kernel: primal inputs from the robot (state after `warmup` steps),
/// seeds (adjoints of NextState / Output) random, everything accumulated or
/// temporary zero.
struct Workspace {
  std::vector<std::vector<double>> f;
  std::vector<std::vector<int32_t>> i;
  std::vector<void *> ptrs;
};

Workspace fill(const ir::Module &m, const test::MassSpringIds &ids, const test::MassSpringRobot &r,
               const std::vector<double> &x, const std::vector<double> &v,
               const std::vector<int64_t> &sizes, std::mt19937_64 &rng) {
  Workspace w;
  w.f.resize(m.buffers.size());
  w.i.resize(m.buffers.size());
  w.ptrs.resize(m.buffers.size());
  std::normal_distribution<double> g(0, 1);
  for (size_t b = 0; b < m.buffers.size(); ++b) {
    const ir::Buffer &buf = m.buffers[b];
    const auto n = static_cast<size_t>(ir::bufferLength(m, int(b), sizes.data()));
    if (buf.elem == ir::Type::I) {
      w.i[b] = int(b) == ids.sa ? r.a : r.b;
      w.ptrs[b] = w.i[b].data();
      continue;
    }
    std::vector<double> &d = w.f[b];
    d.assign(n, 0.0);
    const int p = buf.role == ir::Role::Adjoint ? buf.primal : int(b);
    const ir::Role pr = m.buffers[size_t(p)].role;
    if (buf.role == ir::Role::Adjoint) {
      if (pr == ir::Role::NextState || pr == ir::Role::Output)
        for (double &e : d)
          e = g(rng); // seeds
    } else if (int(b) == ids.x || int(b) == ids.xLast) {
      d = x;
    } else if (int(b) == ids.v) {
      d = v;
    } else if (int(b) == ids.xFirst) {
      d = r.x0;
    } else if (int(b) == ids.rest) {
      d = r.rest;
    } else if (int(b) == ids.stiff) {
      d = r.stiff;
    } else if (int(b) == ids.actu) {
      d = r.actu;
    } else if (int(b) == ids.w1) {
      d = r.w1;
    } else if (int(b) == ids.b1) {
      d = r.b1;
    } else if (int(b) == ids.w2) {
      d = r.w2;
    } else if (int(b) == ids.b2) {
      d = r.b2;
    }
    w.ptrs[b] = d.data();
  }
  return w;
}

} // namespace

TEST_CASE("adjoint kernels agree with the interpreter on every back end", "[llvm][agreement]") {
  test::MassSpringIds ids;
  ir::Module m = test::makeMassSpringModule(ids);
  autodiff::differentiate(m);
  const int stepAdj = m.findKernel("step.adj"), lossAdj = m.findKernel("loss.adj");
  REQUIRE(stepAdj >= 0);
  REQUIRE(lossAdj >= 0);
  auto backends = test::backendsUnderTest(m, 1e-12, 1e-9);
  std::mt19937_64 rng(7);
  for (int robot = 0; robot < 3; ++robot) {
    test::MassSpringRobot r = test::makeRandomRobot(rng, 3 + robot, 3 + 2 * robot);
    std::vector<int64_t> sizes(m.sets.size());
    sizes[size_t(ids.point)] = r.nPoints;
    sizes[size_t(ids.spring)] = r.nSprings;
    sizes[size_t(ids.unit)] = 32;
    sizes[size_t(ids.input)] = 12 + 4 * r.nPoints;
    sizes[size_t(ids.wave)] = 10;
    // A state in contact with the ground, mid-gait: run the forward model first.
    std::vector<double> x;
    test::rollout(m, ids, *backends[0].exe, r, 60 + 40 * robot, &x);
    std::vector<double> v(x.size());
    for (double &e : v)
      e = 0.3 * std::normal_distribution<double>(0, 1)(rng);
    for (int k : {stepAdj, lossAdj}) {
      const uint64_t seed = rng();
      std::mt19937_64 r0(seed);
      Workspace ref = fill(m, ids, r, x, v, sizes, r0);
      backends[0].exe->run(k, ref.ptrs.data(), sizes.data(), 57);
      for (auto &be : backends) {
        std::mt19937_64 r1(seed);
        Workspace got = fill(m, ids, r, x, v, sizes, r1);
        be.exe->run(k, got.ptrs.data(), sizes.data(), 57);
        for (size_t b = 0; b < m.buffers.size(); ++b) {
          if (m.buffers[b].elem != ir::Type::F)
            continue;
          double scale = 0; // adjoints compare relative to their largest entry
          for (double e : ref.f[b])
            scale = std::max(scale, std::fabs(e));
          for (size_t e = 0; e < ref.f[b].size(); ++e) {
            INFO("robot " << robot << ", kernel " << m.kernels[size_t(k)].name << ", back end "
                          << be.name << ", " << m.buffers[b].name << "[" << e
                          << "]: " << got.f[b][e] << " vs interpreter " << ref.f[b][e]);
            CHECK(test::agrees(got.f[b][e], ref.f[b][e], be.rtol, scale));
          }
        }
      }
    }
  }
}
