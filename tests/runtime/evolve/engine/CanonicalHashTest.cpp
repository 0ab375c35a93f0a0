// The canonical key: invariant to point labels, spring order, spring
// endpoint order and translation; different for mirror images and changed
// spring attributes; equal bytes if and only if equal hashes.
#include "evolve/engine/CanonicalHash.h"
#include "evolve/bodies/Lattice.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>

using namespace evoc::evolve;
using evoc::runtime::Robot;
using evoc::runtime::Spring;

namespace {

// An asymmetric 2D robot: a triangle with a tail.
Robot sampleRobot() {
  Robot r;
  r.dim = 2;
  r.points = {0.0, 0.1, 0.1, 0.1, 0.05, 0.18, 0.3, 0.12};
  r.springs = {
      {0, 1, 0.1, 3e4, 0.1}, {1, 2, 0.1, 3e4, 0}, {0, 2, 0.1, 3e4, 0}, {1, 3, 0.2, 2e4, 0.05}};
  return r;
}

// The same robot with its points relabelled by `perm` (new = perm[old]).
Robot relabel(const Robot &r, const std::vector<int> &perm) {
  Robot o = r;
  for (int i = 0; i < r.numPoints(); ++i)
    for (int c = 0; c < r.dim; ++c)
      o.points[size_t(perm[size_t(i)] * r.dim + c)] = r.points[size_t(i * r.dim + c)];
  for (auto &s : o.springs) {
    s.a = perm[size_t(s.a)];
    s.b = perm[size_t(s.b)];
  }
  return o;
}

} // namespace

TEST_CASE("canonical key: invariant to labels, spring order and translation", "[hash]") {
  const Robot r = sampleRobot();
  const CanonicalKey k = canonicalKey(r);
  CHECK(k.hex().size() == 32);
  CHECK(canonicalKey(relabel(r, {2, 0, 3, 1})) == k);
  CHECK(canonicalKey(relabel(r, {2, 0, 3, 1})).hex() == k.hex());
  Robot shuffled = r;
  std::reverse(shuffled.springs.begin(), shuffled.springs.end());
  CHECK(canonicalKey(shuffled).hex() == k.hex());
  Robot swapped = r;
  for (auto &s : swapped.springs)
    std::swap(s.a, s.b);
  CHECK(canonicalKey(swapped).hex() == k.hex());
  Robot moved = r;
  for (int i = 0; i < moved.numPoints(); ++i) {
    moved.points[size_t(2 * i)] += 1.25;
    moved.points[size_t(2 * i + 1)] -= 0.0375;
  }
  CHECK(canonicalKey(moved).hex() == k.hex());
  CHECK(canonicalKey(moved).bytes == k.bytes);
}

TEST_CASE("canonical key: mirror images and changed springs differ", "[hash]") {
  const Robot r = sampleRobot();
  const CanonicalKey k = canonicalKey(r);
  Robot mirror = r;
  for (int i = 0; i < mirror.numPoints(); ++i)
    mirror.points[size_t(2 * i)] = -mirror.points[size_t(2 * i)];
  CHECK_FALSE(canonicalKey(mirror) == k);
  CHECK(canonicalKey(mirror).hex() != k.hex());
  Robot stiffer = r;
  stiffer.springs[1].stiffness = 3.5e4;
  CHECK(canonicalKey(stiffer).hex() != k.hex());
  Robot actuated = r;
  actuated.springs[1].actuation = 0.1;
  CHECK(canonicalKey(actuated).hex() != k.hex());
  Robot rest = r;
  rest.springs[3].rest = 0.21;
  CHECK(canonicalKey(rest).hex() != k.hex());
  Robot fewer = r;
  fewer.springs.pop_back();
  CHECK(canonicalKey(fewer).hex() != k.hex());
  // Below the quantum a coordinate's noise does not matter; above it does.
  Robot noisy = r;
  noisy.points[3] += 1e-9;
  CHECK(canonicalKey(noisy).hex() == k.hex());
  noisy.points[3] += 1e-5;
  CHECK(canonicalKey(noisy).hex() != k.hex());
}

TEST_CASE("canonical key: equal bytes if and only if equal hashes", "[hash]") {
  // Many random lattice robots, with many repeats (a 2 x 3 lattice has few
  // shapes): the hash partitions them exactly as the bytes do.
  LatticeBody b({2, 3});
  EvoRng rng(17);
  std::map<std::string, std::string> byHex, byBytes;
  int repeats = 0;
  for (int i = 0; i < 2000; ++i) {
    CanonicalKey k = canonicalKey(b.express(b.sample(rng)));
    auto [it, fresh] = byHex.emplace(k.hex(), k.bytes);
    repeats += !fresh;
    CHECK(it->second == k.bytes); // same hash -> same bytes
    auto [jt, freshBytes] = byBytes.emplace(k.bytes, k.hex());
    CHECK(jt->second == k.hex()); // same bytes -> same hash
    CHECK(fresh == freshBytes);
  }
  CHECK(repeats > 100);
  CHECK(byHex.size() > 20);
}

TEST_CASE("canonical key: a translated lattice mask is the same robot", "[hash]") {
  LatticeBody b({2, 6});
  LatticeGenome g{std::vector<uint8_t>(12, 0),
                  std::vector<uint8_t>(size_t(b.geometry().numEdges()), 1)};
  LatticeGenome t = g;
  g.mask[0] = g.mask[1] = 1; // triangles (0, 0), (1, 0)
  t.mask[2] = t.mask[3] = 1; // their translate by two columns
  CHECK(canonicalKey(b.express(g)).hex() == canonicalKey(b.express(t)).hex());
  LatticeGenome other = g;
  other.mask[1] = 0;
  other.mask[6] = 1; // (0, 0) and (0, 1): another shape
  CHECK(canonicalKey(b.express(other)).hex() != canonicalKey(b.express(g)).hex());
}
