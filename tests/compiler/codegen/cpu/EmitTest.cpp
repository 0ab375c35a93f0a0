// `evoc compile --emit llvm`: excerpts of the LLVM IR the CPU back end emits.
#include <catch2/catch.hpp>

#include <regex>

#include "MassSpring.h"
#include "codegen/cpu/CpuBackend.h"
#include "ir/Builder.h"

using namespace evoc;
using ir::Op;

namespace {

/// y[i] = a[i] * s + y0[i] over a set, and dot = sum_i a[i] * b[i].
ir::Module makeAxpyDot() {
  ir::Module m;
  m.name = "axpy";
  int set = ir::addSet(m, "point");
  auto buf = [&](const char *n, ir::Role r, std::vector<int> sets) {
    return ir::addBuffer(m, n, r, std::move(sets));
  };
  int a = buf("a", ir::Role::State, {set}), y0 = buf("y0", ir::Role::State, {set});
  int y = buf("y", ir::Role::NextState, {set}), out = buf("dot", ir::Role::Output, {});
  m.kernels.resize(2);
  m.kernels[0].name = "axpy";
  {
    ir::Builder b(m, m.kernels[0]);
    ir::ValueId i = b.beginLoop(set);
    b.store(y, i, b.add(b.mul(b.load(a, i), b.constF(2.5)), b.load(y0, i)));
    b.endLoop();
  }
  m.kernels[1].name = "dot";
  {
    ir::Builder b(m, m.kernels[1]);
    ir::ValueId s = b.local();
    ir::ValueId i = b.beginLoop(set);
    b.localUpdate(Op::LocalAdd, s, b.mul(b.load(a, i), b.load(y0, i)));
    b.endLoop();
    b.store(out, b.constI(0), b.localGet(s));
  }
  return m;
}

bool has(const std::string &text, const std::string &re) {
  return std::regex_search(text, std::regex(re));
}

} // namespace

TEST_CASE("--emit llvm: unoptimised IR has the ABI, noalias bodies and loop metadata",
          "[llvm][emit]") {
  test::MassSpringIds ids;
  ir::Module m = test::makeMassSpringModule(ids);
  std::string text = codegen::cpu::emitLLVM(m, 0);
  CHECK(has(text, R"(define void @evoc_kernel_0\(ptr %buffers, ptr %sizes, i64 %t\))"));
  CHECK(has(text, R"(define void @evoc_kernel_1\()"));
  CHECK(has(text, R"(define internal void @evoc\.body\.step\(ptr noalias nocapture %point\.x,)"));
  CHECK_FALSE(has(text, R"(@tanh)")); // fast mode: tanh is inline, vectorisable
  CHECK(has(codegen::cpu::emitLLVM(m, 0, codegen::cpu::FpMode::Strict),
            R"(call [a-z ]*double @tanh\(double)"));
  CHECK(has(text, R"(llvm\.sin\.f64)"));
  CHECK(has(text, R"(!llvm\.loop)"));
  CHECK(has(text, R"(load i32, ptr)")); // index buffers are int32
}

TEST_CASE("--emit llvm: optimised loops over elements vectorise", "[llvm][emit]") {
  ir::Module m = makeAxpyDot();
  std::string text = codegen::cpu::emitLLVM(m, 3);
  INFO(text);
  // The body is inlined into the exported function and the loop vectorised.
  CHECK_FALSE(has(text, R"(define internal)"));
  CHECK(has(text, R"(store <[0-9]+ x double>)"));
  // Fast fp: the dot product is a vector reduction; strict keeps it scalar.
  CHECK(has(text, R"(fadd reassoc[a-z ]*<[0-9]+ x double>)"));
  std::string strict = codegen::cpu::emitLLVM(m, 3, codegen::cpu::FpMode::Strict);
  const std::string dotFn = strict.substr(strict.find("@evoc_kernel_1"));
  CHECK_FALSE(has(dotFn.substr(0, dotFn.find("\n}")), R"(fadd[a-z ]*<[0-9]+ x double>)"));
}
