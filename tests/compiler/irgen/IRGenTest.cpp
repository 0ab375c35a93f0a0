// irgen: the stdlib and examples lower to verified IR with the buffer layout
// the runtime relies on; small programs print the IR excerpts that matter.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "irgen/IRGen.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

using namespace evoc;

namespace {

struct Lowered {
  std::optional<ir::Module> module;
  std::string errors;
};

Lowered lowerFile(const std::string &path,
                  std::vector<std::pair<std::string, std::string>> overrides = {}) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  sema::CheckOptions opts;
  opts.ignoreEnv = true;
  opts.overrides = std::move(overrides);
  Lowered out;
  auto prog = sema::checkFile(path, opts, sources, diags);
  if (prog)
    out.module = irgen::lowerProgram(*prog, sources, diags);
  std::ostringstream ss;
  diags.flush(ss);
  out.errors = ss.str();
  return out;
}

/// Writes `text` to a temporary .evo file beside the stdlib-importing tests.
std::string writeTemp(const std::string &name, const std::string &text) {
  auto dir = std::filesystem::temp_directory_path() / "evoc-irgen-test";
  std::filesystem::create_directories(dir);
  auto path = (dir / name).string();
  std::ofstream(path) << text;
  return path;
}

const std::string kHeader = R"(
import "physics/mass_spring.evo";
import "controllers/mlp.evo";
world { dim = 2; dt = 0.004; steps = 50; gravity = -4.8; damping = 15;
        ground = flat(height = 0.1, friction = 1.0); physics = mass_spring_friction; }
)";

} // namespace

TEST_CASE("examples lower to verified IR with the runtime's layout", "[irgen]") {
  for (const char *ex : {"eldir.evo", "eldir_small.evo", "jump.evo"}) {
    INFO(ex);
    auto l = lowerFile(std::string(EVOC_SOURCE_DIR) + "/examples/" + ex);
    INFO(l.errors);
    REQUIRE(l.module);
    const ir::Module &m = *l.module;
    CHECK(ir::verify(m).empty());
    REQUIRE(m.findKernel("step") >= 0);
    REQUIRE(m.findKernel("loss") >= 0);
    CHECK(m.kernels[m.findKernel("step")].kind == ir::KernelKind::Step);
    CHECK(m.sets[m.findSet("point")].fromBody);
    CHECK(m.sets[m.findSet("spring")].fromBody);
    // The MLP's input vector: 10 sines + 2 constants, 4 per point.
    const ir::ElementSet &in = m.sets[m.findSet("input")];
    CHECK(in.base == 12);
    REQUIRE(in.terms.size() == 1);
    CHECK(in.terms[0] == std::make_pair(m.findSet("point"), int64_t(4)));
    // ... in the order the inputs are stored: sines, per point, constants.
    using Seg = std::pair<int, int64_t>;
    CHECK(in.layout == std::vector<Seg>{{-1, 10}, {m.findSet("point"), 4}, {-1, 2}});
    CHECK(m.sets[m.findSet("unit")].base == 32);
    // Weights as PARAMS.json lays them out.
    int w1 = m.findBuffer("mlp.w1"), w2 = m.findBuffer("mlp.w2");
    REQUIRE(w1 >= 0);
    REQUIRE(w2 >= 0);
    CHECK(m.buffers[w1].role == ir::Role::Param);
    CHECK(m.buffers[w1].field == "w1");
    CHECK(m.buffers[w1].sets == std::vector<int>{m.findSet("unit"), m.findSet("input")});
    CHECK(m.buffers[w1].initGain == 2.0);
    CHECK(m.buffers[w2].sets == std::vector<int>{m.findSet("spring"), m.findSet("unit")});
    CHECK(m.buffers[w2].initGain == 3.0);
    // States at t and t+1, endpoints as int indices, states at 0 and T for the loss.
    CHECK(m.buffers[m.findBuffer("point.x")].role == ir::Role::State);
    CHECK(m.buffers[m.findBuffer("point.x")].comps == 2);
    CHECK(m.buffers[m.findBuffer("point.x.next")].role == ir::Role::NextState);
    CHECK(m.buffers[m.findBuffer("spring.a")].elem == ir::Type::I);
    CHECK(m.buffers[m.findBuffer("point.x@0")].time == ir::TimeRef::First);
    CHECK(m.buffers[m.findBuffer("point.x@T")].time == ir::TimeRef::Last);
    CHECK(m.buffers[m.findBuffer("loss")].role == ir::Role::Output);
  }
}

TEST_CASE("spring impulses lower to gathers and scatter-adds", "[irgen]") {
  auto l = lowerFile(std::string(EVOC_SOURCE_DIR) + "/examples/eldir_small.evo");
  REQUIRE(l.module);
  std::ostringstream ss;
  ir::printKernel(*l.module, l.module->kernels[l.module->findKernel("step")], ss);
  std::string text = ss.str();
  // Endpoint gathers, and the impulse scattered into both endpoints' dv.
  CHECK(text.find("load spring.a[") != std::string::npos);
  CHECK(text.find("load spring.b[") != std::string::npos);
  CHECK(text.find("accadd point.dv[") != std::string::npos);
  // The next state is stored, never the current one.
  CHECK(text.find("store point.x.next[") != std::string::npos);
  CHECK(text.find("store point.x[") == std::string::npos);
  // The controller's hidden layer: a reduction over the inputs.
  CHECK(text.find("loop input") != std::string::npos);
  CHECK(text.find("local.add") != std::string::npos);
}

TEST_CASE("a loss with a time window becomes a LossStep kernel", "[irgen]") {
  auto path = writeTemp("window.evo", kHeader + R"(
loss lift = -mean(t in 10..T: mean(point.x[t].y)) + 0.5 * mean(point.x[T].x - point.x[0].x);
)");
  auto l = lowerFile(path);
  INFO(l.errors);
  REQUIRE(l.module);
  const ir::Module &m = *l.module;
  CHECK(ir::verify(m).empty());
  int w = m.findKernel("loss.w0");
  REQUIRE(w >= 0);
  CHECK(m.kernels[w].kind == ir::KernelKind::LossStep);
  CHECK(m.kernels[w].windowBegin == 10);
  CHECK(m.kernels[w].windowEnd == 49);
  CHECK(m.findKernel("loss") >= 0);
}

TEST_CASE("a window in a non-linear position is reduced by the runtime", "[irgen]") {
  auto path = writeTemp("window_nonlinear.evo", kHeader + R"(
loss l = sqrt(mean(t in 0..T: mean(point.x[t].y))) + max(t in 5..T: min(point.x[t].y));
)");
  auto l = lowerFile(path);
  REQUIRE(l.module);
  const ir::Module &m = *l.module;
  CHECK(ir::verify(m).empty());
  int r0 = m.findKernel("loss.r0"), r1 = m.findKernel("loss.r1");
  REQUIRE(r0 >= 0);
  REQUIRE(r1 >= 0);
  CHECK(m.kernels[r0].windowReduce == ir::WindowReduce::Mean);
  CHECK(m.kernels[r1].windowReduce == ir::WindowReduce::Max);
  CHECK(m.kernels[r1].windowBegin == 5);
  CHECK(m.findBuffer("loss.window") >= 0);
  CHECK(m.findKernel("loss") >= 0);
}

TEST_CASE("a window inside another window is reported, not miscompiled", "[irgen]") {
  auto path = writeTemp("window_bad.evo", kHeader + R"(
loss bad = sum(t in 0..T: max(s in 0..T: mean(point.x[s].y)));
)");
  auto l = lowerFile(path);
  CHECK_FALSE(l.module);
  CHECK(l.errors.find("window_bad.evo:") != std::string::npos);
  CHECK(l.errors.find("outside other windows") != std::string::npos);
}

namespace {

/// Instructions of a block and the loops in it.
size_t instructionCount(const ir::Block &b) {
  size_t n = 0;
  for (const auto &i : b.insts)
    n += 1 + (i->body ? instructionCount(*i->body) : 0);
  return n;
}

/// fns f0 .. fN, each calling the previous twice, `a` and `b` its two
/// arguments (in terms of x), and a loss calling fN on the last line.
std::string nestedFns(int n, const std::string &a, const std::string &b) {
  std::string t = kHeader + "fn f0(x: scalar) -> scalar { return 0.5 * x + 1; }\n";
  for (int k = 1; k <= n; ++k) {
    const std::string prev = "f" + std::to_string(k - 1);
    t += "fn f" + std::to_string(k) + "(x: scalar) -> scalar { return " + prev + "(" + a + ") + " +
         prev + "(" + b + "); }\n";
  }
  t += "loss l = f" + std::to_string(n) + "(mean(point.x[T].x - point.x[0].x));\n";
  return t;
}

size_t lossInstructions(const ir::Module &m) {
  return instructionCount(m.kernels[size_t(m.findKernel("loss"))].body);
}

} // namespace

TEST_CASE("nested fn calls with equal arguments are inlined once each", "[irgen][fn]") {
  // 30 fns, each calling the previous twice: 2^30 inlined copies without
  // sharing, one per fn with it.
  auto l = lowerFile(writeTemp("nested_same.evo", nestedFns(30, "x", "x")));
  INFO(l.errors);
  REQUIRE(l.module);
  CHECK(ir::verify(*l.module).empty());
  const size_t n30 = lossInstructions(*l.module);
  auto l5 = lowerFile(writeTemp("nested_same5.evo", nestedFns(5, "x", "x")));
  REQUIRE(l5.module);
  const size_t n5 = lossInstructions(*l5.module);
  // Linear in the nesting: the same few instructions per extra fn.
  CHECK((n30 - n5) % 25 == 0);
  CHECK((n30 - n5) / 25 <= 4);
  CHECK(n30 < 200);
  // Equal by value, not by spelling: f(x) + f(2 * x) reaches 2^k x along
  // every path, so each fn is inlined once per power of two (n^2 / 2).
  auto sc = lowerFile(writeTemp("nested_scaled.evo", nestedFns(30, "x", "2 * x")));
  INFO(sc.errors);
  REQUIRE(sc.module);
  CHECK(ir::verify(*sc.module).empty());
  CHECK(lossInstructions(*sc.module) < 5000);
}

TEST_CASE("nested fn calls that expand past the limit are refused where they start",
          "[irgen][fn]") {
  // f(2 * x) + f(x + 1) at every level: the 2^30 paths give 2^30 different
  // arguments, so the expansion really is exponential.
  const std::string text = nestedFns(30, "2 * x", "x + 1");
  auto l = lowerFile(writeTemp("nested_affine.evo", text));
  CHECK_FALSE(l.module);
  INFO(l.errors);
  const int line = int(std::count(text.begin(), text.end(), '\n')); // the loss, last line
  CHECK(l.errors.find("nested_affine.evo:" + std::to_string(line) +
                      ":10: error: this call of 'f30' expands to more than " +
                      std::to_string(irgen::kMaxKernelInstructions) +
                      " IR instructions in kernel 'loss'") != std::string::npos);
  CHECK(l.errors.find("with a let") != std::string::npos);
  // The same shape below the limit compiles (2^8 copies).
  auto ok = lowerFile(writeTemp("nested_affine8.evo", nestedFns(8, "2 * x", "x + 1")));
  INFO(ok.errors);
  REQUIRE(ok.module);
  CHECK(lossInstructions(*ok.module) > 256);
}
