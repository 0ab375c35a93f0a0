// The 3D walker grammar (stdlib/grammars/walker3d.evo) as examples/walker3d.evo
// declares it, through the real checker: random bodies and their mutations
// are valid, within the limits, rest on the ground, are mirror symmetric
// across the body's long axis (tied legs in 3D), and every part keeps the
// world's orientation (`turn = 0`): each cube's vertical edges stand
// upright, so legs hang straight down. The stdlib 3D parts check.
#include "StdlibBodies.h"

#include "evolve/bodies/GrammarBody.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

using namespace evoc;
using namespace evoc::evolve;

namespace {

/// Points quantised to 1e-9, as a set (for symmetry tests).
std::set<std::array<long long, 3>> pointSet(const runtime::Robot &r, bool mirrorY, double ySum) {
  std::set<std::array<long long, 3>> out;
  for (int i = 0; i < r.numPoints(); ++i) {
    double x = r.points[size_t(3 * i)], y = r.points[size_t(3 * i + 1)],
           z = r.points[size_t(3 * i + 2)];
    if (mirrorY)
      y = ySum - y;
    out.insert({std::llround(x * 1e9), std::llround(y * 1e9), std::llround(z * 1e9)});
  }
  return out;
}

/// Empty if `ph` is a walker as the grammar means it, else why not.
std::string walkerProblem(const Phenotype &ph, const body::GrammarBodySpec &spec) {
  const runtime::Robot &r = ph.robot;
  if (!ph.valid)
    return "invalid: " + ph.reason;
  if (r.dim != 3)
    return "not 3D";
  if (r.numPoints() > spec.maxPoints || r.numSprings() > spec.maxSprings)
    return "over the limits";
  double zlo = 1e300, ylo = 1e300, yhi = -1e300;
  for (int i = 0; i < r.numPoints(); ++i) {
    zlo = std::min(zlo, r.points[size_t(3 * i + 2)]);
    ylo = std::min(ylo, r.points[size_t(3 * i + 1)]);
    yhi = std::max(yhi, r.points[size_t(3 * i + 1)]);
  }
  if (std::fabs(zlo - spec.groundY) > 1e-12)
    return "not resting on the ground";
  if (pointSet(r, false, 0) != pointSet(r, true, ylo + yhi))
    return "not mirror symmetric across y";
  // Every part is a union of upright boxes: local points 0 and 1 of each
  // part (its corner a and the one above it) share x and y, 1 above 0.
  for (const auto &o : ph.outlines) {
    if (o.points.size() < 2)
      return "part " + o.part + " has no outline";
    const int a = o.points[0], b = o.points[1];
    for (int c = 0; c < 2; ++c)
      if (std::fabs(r.points[size_t(3 * a + c)] - r.points[size_t(3 * b + c)]) > 1e-12)
        return "part " + o.part + " is not upright";
    if (!(r.points[size_t(3 * b + 2)] > r.points[size_t(3 * a + 2)]))
      return "part " + o.part + " is upside down";
  }
  return "";
}

} // namespace

TEST_CASE("walker3d: random bodies and mutations are upright, mirrored walkers on the ground",
          "[grammar][stdlib][3d]") {
  test::CheckedBody body =
      test::checkGrammarBody(test::sourceFile("examples/walker3d.evo"), "examples/walker3d.evo");
  REQUIRE(body.spec.dim == 3);
  GrammarBody b(body.spec, body.mutation);
  EvoRng rng(2024);
  std::map<std::string, int> parts;
  int legged = 0, chained = 0;
  GenomePtr donor = b.sample(rng);
  for (int i = 0; i < 300; ++i) {
    GenomePtr g = b.sample(rng);
    for (int m = 0; m < 4; ++m) {
      Phenotype ph = b.express(*g);
      INFO("body " << i << " mutation " << m);
      CHECK(walkerProblem(ph, body.spec) == "");
      int pelvis = 0, legs = 0;
      for (const auto &o : ph.outlines) {
        ++parts[o.part];
        pelvis += o.part == "pelvis";
        legs += o.part == "segment3" || o.part == "leg_cube";
      }
      legged += legs > 0;
      chained += pelvis > 1;
      g = b.vary(*g, {donor.get()}, rng).genome;
    }
  }
  // Every part of the grammar appears, and so do legs and chains.
  for (const char *p : {"pelvis", "cube", "segment3", "leg_cube"}) {
    INFO(p);
    CHECK(parts[p] > 0);
  }
  CHECK(legged > 300);
  CHECK(chained > 100);
}
