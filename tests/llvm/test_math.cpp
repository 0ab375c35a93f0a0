// Accuracy of the CPU back end's inline (vectorised) math against libm.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "codegen/llvm/CpuBackend.h"
#include "ir/Builder.h"

using namespace evoc;

TEST_CASE("inline tanh of the fast mode agrees with libm to 1e-15 relative", "[llvm][math]") {
  for (ir::Precision prec : {ir::Precision::F64, ir::Precision::F32}) {
    const bool f64 = prec == ir::Precision::F64;
    ir::Module m;
    m.name = "tanh";
    m.precision = prec;
    int set = ir::addSet(m, "point");
    ir::Buffer in, out;
    in.name = "in";
    in.sets = {set};
    in.role = ir::Role::State;
    out = in;
    out.name = "out";
    out.role = ir::Role::NextState;
    int bi = ir::addBuffer(m, in), bo = ir::addBuffer(m, out);
    m.kernels.resize(1);
    m.kernels[0].name = "tanh";
    {
      ir::Builder b(m, m.kernels[0]);
      ir::ValueId i = b.beginLoop(set);
      b.store(bo, i, b.op(ir::Op::Tanh, {b.load(bi, i)}));
      b.endLoop();
    }
    codegen::CompileOptions opts;
    opts.useCache = false;
    auto exe = codegen::cpu::compileCpu(m, opts);
    // Dense sweep of [-25, 25], tiny values, both branch boundaries, specials.
    std::vector<double> xs;
    for (int k = -250000; k <= 250000; ++k)
      xs.push_back(k * 1e-4);
    for (double t = 1e-300; t < 1; t *= 3.7)
      xs.insert(xs.end(), {t, -t});
    for (double c : {0.625, -0.625, std::nextafter(0.625, 0.0), 20.0, 40.0, 400.0, -1e308})
      xs.push_back(c);
    xs.insert(xs.end(), {0.0, -0.0, INFINITY, -INFINITY, NAN});
    const int64_t n = int64_t(xs.size());
    double worst = 0;
    if (f64) {
      std::vector<double> got(xs.size());
      void *bufs[] = {xs.data(), got.data()};
      exe->run(0, bufs, &n, 0);
      for (size_t k = 0; k < xs.size(); ++k) {
        double ref = std::tanh(xs[k]);
        if (std::isnan(ref)) {
          CHECK(std::isnan(got[k]));
          continue;
        }
        CHECK(std::signbit(got[k]) == std::signbit(ref));
        worst = std::max(worst, ref == 0 ? std::fabs(got[k]) : std::fabs(got[k] / ref - 1));
      }
      INFO("largest relative difference from libm tanh (f64): " << worst);
      CHECK(worst < 1e-15);
    } else {
      std::vector<float> fx(xs.begin(), xs.end()), got(xs.size());
      void *bufs[] = {fx.data(), got.data()};
      exe->run(0, bufs, &n, 0);
      for (size_t k = 0; k < xs.size(); ++k) {
        float ref = std::tanh(fx[k]);
        if (std::isnan(ref))
          continue;
        worst = std::max(worst, ref == 0 ? double(std::fabs(got[k]))
                                         : std::fabs(double(got[k]) / ref - 1));
      }
      INFO("largest relative difference from libm tanhf (f32): " << worst);
      CHECK(worst < 1e-6);
    }
  }
}
