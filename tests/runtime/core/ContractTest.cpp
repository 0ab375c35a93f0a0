// The rollout contract (ir/Contract.h) on the differentiated spring ladder:
// what it finds, the errors it gives, and that ModuleInfo is that contract.
#include <catch2/catch.hpp>

#include <algorithm>

#include "ChainFixture.h"
#include "autodiff/Differentiate.h"
#include "core/Layout.h"
#include "ir/Contract.h"
#include "support/Error.h"

using namespace evoc;

namespace {

int kernelOf(const ir::Module &m, ir::KernelKind kind) {
  for (size_t k = 0; k < m.kernels.size(); ++k)
    if (m.kernels[k].kind == kind)
      return int(k);
  return -1;
}

} // namespace

TEST_CASE("contract: kernels, fields, adjoints and kept temps of the ladder", "[contract]") {
  test::ChainOptions o;
  o.lossStep = true;
  o.carryField = true;
  const ir::Module m = test::chainModuleWithAdjoints(o);
  const ir::RolloutContract c = ir::rolloutContract(m);

  CHECK(c.step == kernelOf(m, ir::KernelKind::Step));
  CHECK(c.stepAdj == kernelOf(m, ir::KernelKind::StepAdj));
  REQUIRE(c.loss.size() == 1);
  REQUIRE(c.lossAdj.size() == 1);
  CHECK(m.kernels[c.lossAdj[0]].primal == c.loss[0]);
  REQUIRE(c.lossStep.size() == 1);
  REQUIRE(c.lossStepAdj.size() == 1);
  CHECK(m.kernels[c.lossStepAdj[0]].primal == c.lossStep[0]);
  REQUIRE(c.used.size() == m.kernels.size());
  for (const auto &u : c.used)
    CHECK(std::is_sorted(u.begin(), u.end()));

  REQUIRE(c.pointX >= 0);
  CHECK(c.fields[c.pointX].name == "point.x");
  int taped = 0;
  for (size_t f = 0; f < c.fields.size(); ++f) {
    const ir::StateField &F = c.fields[f];
    INFO("field " << F.name);
    REQUIRE(F.taped()); // the step reads every field of the ladder
    taped += F.stepWrites < 0 ? 0 : 1;
    CHECK(F.tape() == (F.stepReads >= 0 ? F.stepReads : F.stepWrites));
    CHECK(c.fieldOf[F.tape()] == int(f));
    if (F.stepWrites >= 0) {
      CHECK(m.buffers[F.stepWrites].role == ir::Role::NextState);
      REQUIRE(F.adjWrites >= 0);
      CHECK(m.buffers[F.adjWrites].primal == F.stepWrites);
      CHECK(c.fieldOf[F.adjWrites] == int(f));
    }
    if (F.stepReads >= 0) {
      CHECK(m.buffers[F.stepReads].time == ir::TimeRef::Current);
      REQUIRE(F.adjReads >= 0);
      CHECK(m.buffers[F.adjReads].primal == F.stepReads);
    }
  }
  CHECK(taped == 2); // point.x, point.v; the carried field is read, never written
  CHECK(c.fields.size() == 3);

  REQUIRE(c.lossOutput >= 0);
  CHECK(m.buffers[c.lossOutput].name == "loss");
  REQUIRE(c.lossOutputAdj >= 0);
  CHECK(m.buffers[c.lossOutputAdj].primal == c.lossOutput);
  CHECK_FALSE(c.readsCommands);
  // The zero lists: scratch a kernel uses (Temps not kept, Temps'
  // adjoints), and kept Temps.
  REQUIRE(c.scratchZero.size() == m.kernels.size());
  for (size_t k = 0; k < m.kernels.size(); ++k) {
    CHECK(std::is_sorted(c.scratchZero[k].begin(), c.scratchZero[k].end()));
    for (int b : c.scratchZero[k]) {
      CHECK(std::binary_search(c.used[k].begin(), c.used[k].end(), b));
      const ir::Buffer &B = m.buffers[size_t(b)];
      CHECK(!B.tape);
      CHECK((B.role == ir::Role::Temp ||
             (B.role == ir::Role::Adjoint && m.buffers[size_t(B.primal)].role == ir::Role::Temp)));
    }
  }
  for (int b : c.keptZero)
    CHECK(std::find(c.kept.begin(), c.kept.end(), b) != c.kept.end());
  CHECK(c.adjSlots == 2); // no loss reads x[t - d]

  // ModuleInfo is the contract, with the runtime's arenas on top.
  const runtime::ModuleInfo info(m);
  CHECK(info.step == c.step);
  CHECK(info.used == c.used);
  CHECK(info.fieldOf == c.fieldOf);
  CHECK(info.kept == c.kept);
  CHECK(info.differentiable());
  for (int b : c.kept)
    CHECK(info.arena[b] == runtime::Arena::Tape);
}

TEST_CASE("contract: modules that break it are clear errors", "[contract]") {
  SECTION("two Step kernels") {
    ir::Module m = test::chainModule();
    const int step = kernelOf(m, ir::KernelKind::Step);
    ir::Kernel twin;
    twin.name = "step2";
    twin.kind = ir::KernelKind::Step;
    m.kernels.push_back(std::move(twin));
    CHECK_THROWS_WITH(ir::rolloutContract(m),
                      Catch::Contains("two Step kernels") && Catch::Contains(m.kernels[step].name));
  }
  SECTION("an adjoint without a valid primal") {
    ir::Module m = test::chainModuleWithAdjoints();
    for (ir::Buffer &b : m.buffers)
      if (b.role == ir::Role::Adjoint) {
        b.primal = int(m.buffers.size()) + 3;
        break;
      }
    CHECK_THROWS_WITH(ir::rolloutContract(m), Catch::Contains("has no valid primal buffer"));
  }
  SECTION("state buffers of one field that disagree") {
    ir::Module m = test::chainModule();
    for (ir::Buffer &b : m.buffers)
      if (b.role == ir::Role::NextState) {
        b.comps += 1;
        break;
      }
    CHECK_THROWS_WITH(ir::rolloutContract(m), Catch::Contains("disagree on type or shape"));
  }
  SECTION("no Step kernel: a contract, but nothing the runtime can simulate") {
    ir::Module m = test::chainModule();
    m.kernels[size_t(kernelOf(m, ir::KernelKind::Step))].kind = ir::KernelKind::Init;
    CHECK(ir::rolloutContract(m).step == -1);
    CHECK_THROWS_WITH(runtime::ModuleInfo(m), Catch::Contains("no Step kernel"));
  }
}

TEST_CASE("contract: the window products' row factors and inputs are kept", "[contract]") {
  ir::Module m = test::chainModule();
  autodiff::differentiate(m, autodiff::Tape::Products);
  REQUIRE_FALSE(m.products.empty());
  const ir::RolloutContract c = ir::rolloutContract(m);
  auto kept = [&](int b) { return std::find(c.kept.begin(), c.kept.end(), b) != c.kept.end(); };
  for (const ir::WindowProduct &p : m.products) {
    INFO(m.buffers[p.rows].name);
    // W.adj.rows is written by step.adj alone; the fused CUDA rollout binds
    // it per step through `kept`, as the CPU rollout does through its arena.
    CHECK_FALSE(std::binary_search(c.used[c.step].begin(), c.used[c.step].end(), p.rows));
    CHECK(kept(p.rows));
    CHECK(kept(p.x));
  }
  const runtime::ModuleInfo info(m);
  for (int b = 0; b < int(m.buffers.size()); ++b)
    CHECK(kept(b) == (info.arena[b] == runtime::Arena::Tape));
}
