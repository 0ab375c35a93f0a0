// An f32 module runs every kernel, its adjoints included, in float on the
// interpreter, and agrees with the f64 module to float accuracy.
#include <catch2/catch.hpp>

#include <cmath>

#include "EldirFixture.h"
#include "autodiff/Differentiate.h"
#include "ir/Interpreter.h"

using namespace evoc;
using namespace evoc::ir;

TEST_CASE("f32 modules: step and step.adj agree with f64", "[autodiff][f32]") {
  test::EldirOptions o;
  Module m64 = test::eldirModule(o);
  autodiff::differentiate(m64);
  Module m32 = test::eldirModule(o);
  m32.precision = Precision::F32;
  autodiff::differentiate(m32);
  std::mt19937 rng(5);
  test::Data d = test::eldirRobot(m64, 6, 0.1005, rng);
  std::uniform_real_distribution<double> u(-1, 1);
  for (double &v : d.F("point.v"))
    v = u(rng);
  for (double &v : d.F("point.x.next.adj"))
    v = u(rng);
  for (double &v : d.F("point.v.next.adj"))
    v = u(rng);
  // Float copies of every buffer, same layout.
  std::vector<std::vector<float>> f32(d.f.size());
  std::vector<void *> p32(d.f.size());
  for (size_t b = 0; b < d.f.size(); ++b) {
    f32[b].assign(d.f[b].begin(), d.f[b].end());
    p32[b] = m32.buffers[b].elem == Type::F ? static_cast<void *>(f32[b].data())
                                            : static_cast<void *>(d.i[b].data());
  }
  for (const char *k : {"step", "step.adj"}) {
    // The contract: temps and their adjoints are zero before every call.
    d.zero(Role::Temp);
    d.zeroAdjointsOf(Role::Temp);
    for (size_t b = 0; b < d.f.size(); ++b) {
      const Buffer &buf = m32.buffers[b];
      bool temp = buf.role == Role::Temp ||
                  (buf.role == Role::Adjoint && m32.buffers[buf.primal].role == Role::Temp);
      if (temp)
        std::fill(f32[b].begin(), f32[b].end(), 0.0f);
    }
    d.run(m64.findKernel(k), 4);
    interpret(m32, m32.findKernel(k), p32.data(), d.sizes.data(), 4);
  }
  for (const char *b :
       {"point.x.next", "point.v.next", "point.x.adj", "point.v.adj", "mlp.w1.adj", "mlp.b2.adj"}) {
    INFO(b);
    int bi = m64.findBuffer(b);
    double largest = 0, worst = 0;
    for (size_t e = 0; e < d.f[bi].size(); ++e) {
      largest = std::max(largest, std::fabs(d.f[bi][e]));
      worst = std::max(worst, std::fabs(d.f[bi][e] - f32[bi][e]));
    }
    CHECK(largest > 0);
    CHECK(worst <= 1e-3 * largest);
  }
}
