// Accuracy of the CPU back end's inline (vectorised) math against libm.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "codegen/cpu/CpuBackend.h"
#include "ir/Builder.h"

using namespace evoc;

namespace {

/// out[i] = op(in[i]) (tanh, sin, cos) over one set, compiled for the CPU in fast mode.
std::unique_ptr<codegen::cpu::CpuExecutable> unaryKernel(ir::Precision prec, ir::Op op) {
  ir::Module m;
  m.name = "unary";
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
  ir::addKernel(m, "f");
  {
    ir::Builder b(m, m.kernels[0]);
    ir::ValueId i = b.beginLoop(set);
    b.store(bo, i, b.op(op, {b.load(bi, i)}));
    b.endLoop();
  }
  codegen::CompileOptions opts;
  opts.useCache = false;
  return codegen::cpu::compileCpu(m, opts);
}

} // namespace

TEST_CASE("inline tanh of the fast mode agrees with libm to 1e-15 relative", "[llvm][math]") {
  for (ir::Precision prec : {ir::Precision::F64, ir::Precision::F32}) {
    const bool f64 = prec == ir::Precision::F64;
    auto exe = unaryKernel(prec, ir::Op::Tanh);
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

TEST_CASE("inline sin and cos of the fast mode agree with libm", "[llvm][math]") {
  // Dense sweep of [-40, 40], a sparse one to 2^21 (the inline range), tiny
  // values, multiples of pi/2 (where the reduction cancels), beyond the
  // inline range (libm's lanes) and specials.
  std::vector<double> xs;
  for (int k = -400000; k <= 400000; ++k)
    xs.push_back(k * 1e-4);
  for (double x = 40; x < 2.2e6; x *= 1.0001)
    xs.insert(xs.end(), {x, -x});
  for (double t = 1e-300; t < 1; t *= 3.7)
    xs.insert(xs.end(), {t, -t});
  for (int k = -2000; k <= 2000; ++k)
    xs.push_back(k * 1.5707963267948966);
  for (double c : {2097152.0, std::nextafter(2097152.0, 3e6), 3e6, 1e22, -1e300, 1e308})
    xs.push_back(c);
  xs.insert(xs.end(), {0.0, -0.0, INFINITY, -INFINITY, NAN});
  const int64_t n = int64_t(xs.size());
  for (ir::Op op : {ir::Op::Sin, ir::Op::Cos}) {
    const bool cosine = op == ir::Op::Cos;
    INFO((cosine ? "cos" : "sin"));
    // f64: within 4e-16 of libm relative to max(|libm|, 2^-30) -- near a zero
    // of sin at large x the result is tiny and both are only that good
    // relative to the input's ulp.
    auto exe = unaryKernel(ir::Precision::F64, op);
    std::vector<double> got(xs.size());
    {
      void *bufs[] = {xs.data(), got.data()};
      exe->run(0, bufs, &n, 0);
    }
    double worst = 0, worstAt = 0;
    for (size_t k = 0; k < xs.size(); ++k) {
      double ref = cosine ? std::cos(xs[k]) : std::sin(xs[k]);
      if (std::isnan(ref)) {
        CHECK(std::isnan(got[k]));
        continue;
      }
      if (ref == 0 || std::fabs(xs[k]) < 1e-8)
        CHECK(std::signbit(got[k]) == std::signbit(ref));
      double e = std::fabs(got[k] - ref) / std::max(std::fabs(ref), 0x1p-30);
      if (e > worst)
        worst = e, worstAt = xs[k];
      if (std::fabs(xs[k]) > 2097152.0 || !std::isfinite(xs[k]))
        CHECK(got[k] == ref); // libm's lane
    }
    INFO("largest difference from libm (f64): " << worst << " at x = " << worstAt);
    CHECK(worst < 4e-16);
    // Each element's result depends on it alone: one at a time (scalar
    // code, or a vector with one live lane) gives the same bits as the sweep.
    int64_t one = 1;
    for (size_t k = 0; k < xs.size(); k += 997) {
      double x = xs[k], y = 0;
      void *bufs[] = {&x, &y};
      exe->run(0, bufs, &one, 0);
      CHECK((std::isnan(y) ? std::isnan(got[k]) : y == got[k]));
    }
    // f32: computed in f64, so within an ulp of sinf/cosf.
    auto exe32 = unaryKernel(ir::Precision::F32, op);
    std::vector<float> fx(xs.begin(), xs.end()), got32(xs.size());
    {
      void *bufs[] = {fx.data(), got32.data()};
      exe32->run(0, bufs, &n, 0);
    }
    double worst32 = 0;
    for (size_t k = 0; k < xs.size(); ++k) {
      float ref = cosine ? std::cos(fx[k]) : std::sin(fx[k]);
      if (std::isnan(ref))
        continue;
      worst32 = std::max(worst32, std::fabs(double(got32[k]) - ref) /
                                      std::max(std::fabs(double(ref)), 0x1p-20));
    }
    INFO("largest difference from libm (f32): " << worst32);
    CHECK(worst32 < 2e-7);
  }
}
