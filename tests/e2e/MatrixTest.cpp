// Small matrices (docs/language.md, "Matrices"): every matrix operation's
// value on the CPU back end and the interpreter against the same arithmetic
// written here, and its gradient against central differences; the polar
// rotation at F = I (where the naive derivative of an SVD divides by zero)
// and at random F.
#include "Close.h"
#include "FixedBody.h"
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

using namespace evoc;
using namespace evoc::runtime;

namespace {

using Mat = std::vector<double>; // entries by rows, or a vector

Mat product(const Mat &a, const Mat &b, int w) {
  const int cols = int(b.size()) / w;
  Mat r(size_t(w * cols), 0.0);
  for (int i = 0; i < w; ++i)
    for (int j = 0; j < cols; ++j)
      for (int k = 0; k < w; ++k)
        r[size_t(i * cols + j)] += a[size_t(i * w + k)] * b[size_t(k * cols + j)];
  return r;
}

Mat transposed(const Mat &a, int w) {
  Mat r(a.size());
  for (int i = 0; i < w; ++i)
    for (int j = 0; j < w; ++j)
      r[size_t(j * w + i)] = a[size_t(i * w + j)];
  return r;
}

Mat outerOf(const Mat &u, const Mat &v) {
  Mat r;
  for (double x : u)
    for (double y : v)
      r.push_back(x * y);
  return r;
}

Mat axpy(double s, const Mat &a, double t, const Mat &b) {
  Mat r(a.size());
  for (size_t i = 0; i < a.size(); ++i)
    r[i] = s * a[i] + t * b[i];
  return r;
}

double det3(const Mat &a) {
  return a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6]) +
         a[2] * (a[3] * a[7] - a[4] * a[6]);
}

/// A parameter set of one element per named value.
ParamSet paramsOf(const std::vector<std::pair<std::string, Mat>> &named) {
  ParamSet p;
  for (const auto &[name, v] : named)
    p[name] = ParamTensor{{1, int64_t(v.size())}, v};
  return p;
}

/// Checks `field` after one step (CPU and interpreter) against `want`, and
/// the loss's gradient against central differences on the CPU back end.
struct MatrixProgram {
  app::CompiledFile c;
  std::vector<std::pair<std::string, Mat>> params;

  void checkState(const std::string &field, const Mat &want) {
    for (auto kind : {codegen::BackendKind::Cpu, codegen::BackendKind::Interp}) {
      auto exe = codegen::compile(c.module, kind);
      INFO(field << " on " << (kind == codegen::BackendKind::Cpu ? "the CPU" : "the interpreter"));
      const std::vector<double> got = test::stateAt(c, *exe, paramsOf(params), "point." + field, 1);
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < want.size(); ++i) {
        INFO("entry " << i << ": " << got[i] << ", want " << want[i]);
        CHECK(test::close(got[i], want[i], 1e-14, 1e-15));
      }
    }
  }

  void checkGradient() {
    auto cpu = codegen::compile(c.module, codegen::BackendKind::Cpu);
    auto interp = codegen::compile(c.module, codegen::BackendKind::Interp);
    const test::FixedResult r = test::simulateFixed(c, *cpu, paramsOf(params));
    const test::FixedResult ri = test::simulateFixed(c, *interp, paramsOf(params));
    REQUIRE(r.valid);
    REQUIRE(ri.valid);
    CHECK(test::close(r.loss, ri.loss, 1e-14, 1e-15)); // the CPU may contract to FMAs
    const double h = 1e-6;
    for (size_t p = 0; p < params.size(); ++p)
      for (size_t k = 0; k < params[p].second.size(); ++k) {
        auto shifted = [&](double by) {
          auto q = params;
          q[p].second[k] += by;
          return test::simulateFixed(c, *cpu, paramsOf(q), false).loss;
        };
        const double fd = (shifted(h) - shifted(-h)) / (2 * h);
        const double g = r.grad.at(params[p].first).data.at(k);
        INFO(params[p].first << "[" << k << "]: adjoint " << g << ", central difference " << fd);
        CHECK(test::close(g, fd, 1e-7, 1e-8));
      }
  }
};

} // namespace

TEST_CASE("mat2: products, transpose, det, trace, outer, entries, rows, polar rotation",
          "[matrix][gradcheck]") {
  MatrixProgram m{
      test::compileText("mat2.evo", R"(
world { dim = 2; dt = 0.1; steps = 2; physics = mat2_test; grid = grid(nodes = (4, 4), dx = 1); }
body particles One { origin = (0, 0); density = 1; blocks = [(1, 1, 1, 1, -1)]; }
physics mat2_test {
  set point {
    state x: vec2;
    state ab: mat2;
    state mix: mat2;
    state uv: mat2;
    state rot: mat2;
    state rows: mat2;
    state au: vec2;
    state nums: vec2;
    state picks: vec2;
    param a: mat2;
    param b: mat2;
    param u: vec2;
  }
  step {
    for p in point {
      p.ab = p.a * p.b;
      p.mix = transpose(p.b) / 4 - 2 * p.a + (if p.u.x > 0 then -p.b else p.a);
      p.uv = outer(p.u, vec2(1, 2));
      p.rot = polar_rotation(p.a);
      p.rows = mat2(vec2(1, 2), p.u) + mat2(p.u.x, 0, 0, 3);
      p.au = p.a * p.u;
      p.nums = vec2(det(p.a), trace(p.b));
      p.picks = vec2(p.a.xy, p.b.yx);
      p.x = p.x;
    }
  }
}
fn weigh(m: mat2) -> scalar { return m.xx + 2 * m.xy - 3 * m.yx + 0.5 * m.yy; }
loss l = sum(weigh(point.ab[T]) + weigh(point.mix[T]) + weigh(point.uv[T]) +
             weigh(point.rot[T]) + weigh(point.rows[T]) + dot(point.au[T], vec2(0.3, -0.7)) +
             dot(point.nums[T], vec2(1.1, 0.9)) + dot(point.picks[T], vec2(-0.2, 0.6)));
)"),
      {{"a", {1.2, -0.3, 0.45, 0.8}}, {"b", {-0.7, 0.25, 1.1, 0.6}}, {"u", {0.4, -1.3}}}};
  const Mat a = m.params[0].second, b = m.params[1].second, u = m.params[2].second;
  m.checkState("ab", product(a, b, 2));
  m.checkState("mix", axpy(1, axpy(0.25, transposed(b, 2), -2, a), -1, b));
  m.checkState("uv", outerOf(u, {1, 2}));
  const double x = a[0] + a[3], y = a[2] - a[1], s = std::sqrt(x * x + y * y);
  m.checkState("rot", {x / s, -y / s, y / s, x / s});
  m.checkState("rows", {1 + u[0], 2, u[0], u[1] + 3});
  m.checkState("au", product(a, u, 2));
  m.checkState("nums", {a[0] * a[3] - a[1] * a[2], b[0] + b[3]});
  m.checkState("picks", {a[1], b[2]});
  m.checkGradient();
}

TEST_CASE("mat3: products, transpose, det, trace, outer, entries", "[matrix][gradcheck]") {
  MatrixProgram m{test::compileText("mat3.evo", R"(
world { dim = 3; dt = 0.1; steps = 2; physics = mat3_test; grid = grid(nodes = (4, 4, 4), dx = 1); }
body particles One { origin = (0, 0, 0); density = 1; blocks = [(1, 1, 1, 1, 1, 1, -1)]; }
physics mat3_test {
  set point {
    state x: vec3;
    state ab: mat3;
    state uw: mat3;
    state rows: mat3;
    state au: vec3;
    state nums: vec3;
    param a: mat3;
    param b: mat3;
    param u: vec3;
  }
  step {
    for p in point {
      p.ab = p.a * transpose(p.b) - p.b / 2;
      p.uw = outer(p.u, vec3(1, -2, 0.5));
      p.rows = mat3(p.u, vec3(1, 2, 3), -p.u) + mat3(1, 0, 0, 0, 1, 0, 0, 0, p.u.z);
      p.au = p.a * p.u;
      p.nums = vec3(det(p.a), trace(p.b), p.a.zx);
      p.x = p.x;
    }
  }
}
fn weigh(m: mat3) -> scalar {
  return m.xx + 2 * m.xy - 3 * m.xz + 0.5 * m.yx - m.yy + 0.25 * m.yz + 1.5 * m.zx + m.zy - 2 * m.zz;
}
loss l = sum(weigh(point.ab[T]) + weigh(point.uw[T]) + weigh(point.rows[T]) +
             dot(point.au[T], vec3(0.3, -0.7, 0.2)) + dot(point.nums[T], vec3(1.1, 0.9, -0.4)));
)"),
                  {{"a", {1.2, -0.3, 0.45, 0.8, 0.1, -0.6, 0.35, 0.7, 1.4}},
                   {"b", {-0.7, 0.25, 1.1, 0.6, -0.2, 0.9, 0.15, -1.0, 0.5}},
                   {"u", {0.4, -1.3, 0.8}}}};
  const Mat a = m.params[0].second, b = m.params[1].second, u = m.params[2].second;
  m.checkState("ab", axpy(1, product(a, transposed(b, 3), 3), -0.5, b));
  m.checkState("uw", outerOf(u, {1, -2, 0.5}));
  m.checkState("rows", {u[0] + 1, u[1], u[2], 1, 2 + 1, 3, -u[0], -u[1], -u[2] + u[2]});
  m.checkState("au", product(a, u, 3));
  m.checkState("nums", {det3(a), b[0] + b[4] + b[8], a[6]});
  m.checkGradient();
}

TEST_CASE("the polar rotation: gradient against central differences at F = I and random F",
          "[matrix][gradcheck]") {
  // One particle whose step moves it by R's entries (R of F = I + f, f the
  // particle's parameter): at F = I, where the naive derivative of an SVD
  // divides by zero, and at random F.
  for (const Mat &f : {Mat{0, 0, 0, 0}, Mat{0.31, -0.27, 0.52, 0.18}, Mat{-0.6, 0.9, -1.1, 0.05}}) {
    INFO("F - I = " << f[0] << ", " << f[1] << ", " << f[2] << ", " << f[3]);
    MatrixProgram m{test::compileText("polar.evo", R"(
world { dim = 2; dt = 0.1; steps = 3; physics = polar_test; grid = grid(nodes = (4, 4), dx = 1); }
body particles One { origin = (0, 0); density = 1; blocks = [(1, 1, 1, 1, -1)]; }
physics polar_test {
  set point {
    state x: vec2;
    param f: mat2;
  }
  step {
    for p in point {
      let r = polar_rotation(mat2(1, 0, 0, 1) + p.f);
      p.x = p.x + vec2(dot(vec2(r.xx, r.xy), vec2(0.3, 0.7)), dot(vec2(r.yx, r.yy), vec2(-0.4, 0.9)));
    }
  }
}
loss l = sum(point.x[T].x + 2 * point.x[T].y);
)"),
                    {{"f", f}}};
    m.checkGradient();
  }
}
