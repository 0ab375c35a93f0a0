// Population memory: set sizes, ragged packing, body filling, initial
// state, parameter initialisation and exchange.
#include <catch2/catch.hpp>

#include <cmath>

#include "ChainFixture.h"
#include "core/Population.h"
#include "support/Error.h"

using namespace evoc;
using namespace evoc::runtime;
using evoc::test::chainModule;
using evoc::test::ladderRobot;

TEST_CASE("Set sizes come from the body and derived terms", "[population]") {
  ir::Module m = chainModule();
  Robot r = ladderRobot(3);
  auto sizes = setSizes(m, r);
  CHECK(sizes[0] == 6);              // point
  CHECK(sizes[1] == r.numSprings()); // spring
  CHECK(sizes[2] == 2 + 2 * 6);      // input
  m.sets.push_back({"robot", true, 0, {}});
  CHECK_THROWS_AS(setSizes(m, r), Error);
}

TEST_CASE("Ragged robots are packed without padding to the largest", "[population]") {
  ir::Module m = chainModule();
  ModuleInfo info(m);
  std::vector<Robot> robots = {ladderRobot(2), ladderRobot(9), ladderRobot(4)};
  Population pop(info, robots);
  REQUIRE(pop.size() == 3);
  int64_t total = 0;
  for (int r = 0; r < 3; ++r) {
    const auto &L = pop.layout(r);
    int64_t springs = robots[r].numSprings(), inputs = 2 + 2 * robots[r].numPoints();
    CHECK(L.paramCount == springs * inputs + springs);
    total += L.paramCount;
    // Blocks follow each other, each no larger than its own robot needs.
    if (r > 0) {
      auto gap = pop.arena(r, Arena::Param) - pop.arena(r - 1, Arena::Param);
      CHECK(gap == (pop.layout(r - 1).paramCount * 8 + 63) / 64 * 64);
    }
  }
  CHECK(pop.bytes() < 4 * (total * 8) + 4096);
  // Body buffers: endpoints as int32, floats as double.
  int sa = m.findBuffer("spring.a"), rest = m.findBuffer("spring.rest");
  for (int r = 0; r < 3; ++r)
    for (int s = 0; s < robots[r].numSprings(); ++s) {
      CHECK(reinterpret_cast<int32_t *>(pop.buffer(r, sa))[s] == robots[r].springs[s].a);
      CHECK(reinterpret_cast<double *>(pop.buffer(r, rest))[s] == robots[r].springs[s].rest);
    }
}

TEST_CASE("Initial state lifts the body above the ground", "[population]") {
  ir::Module m = chainModule();
  ModuleInfo info(m);
  Population pop(info, {ladderRobot(3, 100, -0.25), ladderRobot(3, 100, 0.5)});
  for (int r = 0; r < 2; ++r) {
    std::vector<double> snap(pop.layout(r).stateBytes() / 8, 7.0);
    pop.initialState(r, reinterpret_cast<std::byte *>(snap.data()), 0.1, 1);
    const double *x = snap.data() + pop.layout(r).fieldOffset[info.pointX] / 8;
    double lo = 1e9;
    for (int i = 0; i < 6; ++i)
      lo = std::min(lo, x[2 * i + 1]);
    CHECK(lo == Approx(r == 0 ? 0.1 : 0.5));
    CHECK(x[4] == Approx(0.1)); // x coordinates untouched
    int vf = info.fields[0].name == "point.v" ? 0 : 1;
    const double *v = snap.data() + pop.layout(r).fieldOffset[vf] / 8;
    for (int i = 0; i < 12; ++i)
      CHECK(v[i] == 0.0);
  }
}

TEST_CASE("Parameter init: xavier statistics, zeros, per-robot streams", "[population]") {
  ir::Module m = chainModule();
  ModuleInfo info(m);
  Robot big = ladderRobot(40);
  Population pop(info, {big, big, ladderRobot(3)});
  pop.initParams(0, 5, 11);
  pop.initParams(1, 5, 11);
  pop.initParams(2, 5, 12);
  auto p0 = pop.params(0), p1 = pop.params(1);
  CHECK(p0.at("w").data == p1.at("w").data); // same (seed, id): same numbers
  const auto &w = p0.at("w");
  double fanOut = double(w.shape[0]), fanIn = double(w.shape[1]);
  double sd = 1.5 * std::sqrt(2.0 / (fanIn + fanOut)), s2 = 0;
  for (double x : w.data)
    s2 += x * x;
  CHECK(std::sqrt(s2 / double(w.data.size())) == Approx(sd).epsilon(0.03));
  for (double x : p0.at("b").data)
    CHECK(x == 0.0);
  pop.initParams(1, 5, 12);
  CHECK(pop.params(1).at("w").data != w.data); // another id: another stream
  // "constant" fills with the gain.
  ir::Module mc = chainModule();
  mc.buffers[mc.findBuffer("ctrl.b")].init = "constant";
  mc.buffers[mc.findBuffer("ctrl.b")].initGain = 0.25;
  ModuleInfo infoc(mc);
  Population popc(infoc, {ladderRobot(2)});
  popc.initParams(0, 1, 1);
  ParamSet pc = popc.params(0);
  for (double x : pc.at("b").data)
    CHECK(x == 0.25);
  mc.buffers[mc.findBuffer("ctrl.b")].init = "uniform";
  CHECK_THROWS_WITH(popc.initParams(0, 1, 1), Catch::Contains("'uniform'"));
  // A robot's stream does not depend on its neighbours or its size.
  Population other(info, {ladderRobot(3)});
  other.initParams(0, 5, 12);
  CHECK(other.params(0).at("w").data == pop.params(2).at("w").data);
}

TEST_CASE("Parameter exchange checks fields and shapes", "[population]") {
  ir::Module m = chainModule();
  ModuleInfo info(m);
  Population pop(info, {ladderRobot(2), ladderRobot(3)});
  pop.initParams(1, 1, 1);
  ParamSet p = pop.params(1);
  Population pop2(info, {ladderRobot(2), ladderRobot(3)});
  pop2.setParams(1, p);
  CHECK(pop2.params(1).at("w").data == p.at("w").data);
  try {
    pop2.setParams(0, p);
    FAIL("shape mismatch not detected");
  } catch (const Error &e) {
    CHECK(std::string(e.what()).find("robot 0, field 'w'") != std::string::npos);
  }
  ParamSet missing = p;
  missing.erase("b");
  CHECK_THROWS_WITH(pop2.checkParams(1, missing), Catch::Contains("lack field 'b'"));
  ParamSet extra = p;
  extra["w3"] = {{1}, {0.0}};
  CHECK_THROWS_WITH(pop2.checkParams(1, extra), Catch::Contains("field 'w3'"));
}

TEST_CASE("Module contract violations are clear errors", "[population]") {
  ir::Module m = chainModule();
  m.buffers[m.findBuffer("spring.rest")].field = "spring.length";
  ModuleInfo info(m);
  CHECK_THROWS_WITH(Population(info, {ladderRobot(2)}),
                    Catch::Contains("does not know how to fill body buffer"));
  ir::Module none = chainModule();
  none.kernels[0].kind = ir::KernelKind::Init;
  CHECK_THROWS_WITH(ModuleInfo(none), Catch::Contains("no Step kernel"));
  Robot r3 = ladderRobot(2);
  r3.dim = 3;
  ir::Module ok = chainModule();
  ModuleInfo info3(ok);
  CHECK_THROWS_WITH(Population(info3, {r3}), Catch::Contains("not a multiple"));
  r3.points.resize(12); // 4 points of 3 coordinates: valid springs, wrong dimension
  CHECK_THROWS_WITH(Population(info3, {r3}), Catch::Contains("3-dimensional"));
  Robot badSpring = ladderRobot(2);
  badSpring.springs[1].b = 4;
  CHECK_THROWS_WITH(Population(info3, {ladderRobot(2), badSpring}),
                    Catch::Contains("robot 1, spring 1 connects points"));
}
