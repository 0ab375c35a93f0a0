// Lattice bodies: geometry counts, the phenotype mapping, repair, mutation,
// and agreement with the shared reference robots (exact doubles).
#include "evolve/bodies/Lattice.h"
#include "core/RobotJson.h"

#include "evolve/record/RunDir.h"
#include "support/Error.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <set>

using namespace evoc::evolve;
using evoc::runtime::robotToJson;

static LatticeGenome full(const LatticeBody &b) {
  return {std::vector<uint8_t>(b.geometry().numTriangles(), 1),
          std::vector<uint8_t>(b.geometry().numEdges(), 0)};
}

static LatticeGenome only(const LatticeBody &b, std::set<std::pair<int, int>> cells) {
  LatticeGenome g = full(b);
  for (int t = 0; t < b.geometry().numTriangles(); ++t)
    g.mask[t] = cells.count({t % b.geometry().cols(), t / b.geometry().cols()});
  return g;
}

TEST_CASE("lattice: counts of a full lattice", "[lattice]") {
  LatticeBody b6({6, 10});
  // 7 node rows of 6 nodes; per triangle row 2C + 1 edges, C/2 shared
  // horizontals between rows: 6 * 21 - 5 * 5 = 101 (Euler: 42 - 101 + 60 = 1).
  CHECK(b6.geometry().numTriangles() == 60);
  CHECK(b6.geometry().numEdges() == 101);
  auto r6 = b6.express(full(b6));
  CHECK(r6.numPoints() == 42);
  CHECK(r6.numSprings() == 101);
  // The paper's 13 x 22 lattice: "up to 453 springs".
  LatticeBody b13({13, 22});
  auto r13 = b13.express(full(b13));
  CHECK(r13.numSprings() == 453);
  CHECK(r13.numPoints() == 14 * 12);
  // Every spring of a full lattice has the rest length as its length.
  for (const auto &s : r13.springs) {
    double dx = r13.points[2 * s.a] - r13.points[2 * s.b];
    double dy = r13.points[2 * s.a + 1] - r13.points[2 * s.b + 1];
    CHECK(std::hypot(dx, dy) == Approx(0.05).epsilon(1e-12));
  }
}

TEST_CASE("lattice: triangle orientation and corners", "[lattice]") {
  LatticeGeometry g(2, 3);
  CHECK_FALSE(g.pointsUp(0)); // x + y = 0: down
  CHECK(g.pointsUp(1));       // x + y = 1: up
  CHECK(g.pointsUp(3));       // (0, 1)
  auto corner = [&](int t, int k) { return g.node(g.corners(t)[k]); };
  CHECK(corner(0, 0) == Node{0, 0});
  CHECK(corner(0, 1) == Node{-1, 1});
  CHECK(corner(0, 2) == Node{1, 1});
  CHECK(corner(1, 0) == Node{0, 0});
  CHECK(corner(1, 1) == Node{2, 0});
  CHECK(corner(1, 2) == Node{1, 1});
  // Edge numbers follow sorted node pairs.
  for (int e = 1; e < g.numEdges(); ++e)
    CHECK(g.edge(e - 1) < g.edge(e));
}

TEST_CASE("lattice: one triangle by hand", "[lattice]") {
  LatticeBody b({6, 10});
  // Triangle (0, 0) points down: corners (0,0), (-1,1), (1,1). Node order
  // (x, then y): (-1,1), (0,0), (1,1).
  auto r = b.express(only(b, {{0, 0}}));
  REQUIRE(r.numPoints() == 3);
  // ELDiR's formula (docs/evolution.md, "Lattice bodies"), evaluated in its
  // own order (2 * 0.025 + 0.025 is 0.07500000000000001 in doubles, as in the
  // reference robots).
  const double h = 1 * std::sqrt(3.0) * 0.025 + 0.1;
  CHECK(r.points ==
        std::vector<double>{0 * 0.025 + 0.025, h, 1 * 0.025 + 0.025, 0.1, 2 * 0.025 + 0.025, h});
  REQUIRE(r.numSprings() == 3);
  int pairs[3][2] = {{0, 1}, {0, 2}, {1, 2}};
  for (int i = 0; i < 3; ++i) {
    CHECK(r.springs[i].a == pairs[i][0]);
    CHECK(r.springs[i].b == pairs[i][1]);
    CHECK(r.springs[i].rest == 0.05);
    CHECK(r.springs[i].stiffness == 3e4);
    CHECK(r.springs[i].actuation == 0);
  }
  // Actuation bits are per lattice edge: set all of triangle (0,0)'s.
  LatticeGenome g = only(b, {{0, 0}});
  for (int e : b.geometry().triangleEdges(0))
    g.actuation[e] = 1;
  for (const auto &s : b.express(g).springs)
    CHECK(s.actuation == 0.1);
}

TEST_CASE("lattice: body settings reach the phenotype", "[lattice]") {
  LatticeSpec spec{6, 10};
  spec.edge = 0.1;
  spec.stiffness = 1e3;
  spec.actuation = 0.3;
  LatticeBody b(spec);
  LatticeGenome g = only(b, {{3, 2}}); // up: (2,2), (4,2), (3,3)
  for (auto &a : g.actuation)
    a = 1;
  auto r = b.express(g);
  CHECK(r.points == std::vector<double>{0 * 0.05 + 0.05, 0.1, 1 * 0.05 + 0.05,
                                        1 * std::sqrt(3.0) * 0.05 + 0.1, 2 * 0.05 + 0.05, 0.1});
  for (const auto &s : r.springs) {
    CHECK(s.rest == 0.1);
    CHECK(s.stiffness == 1e3);
    CHECK(s.actuation == 0.3);
  }
}

TEST_CASE("lattice: repair fills holes before keeping the largest component", "[lattice]") {
  LatticeBody b({6, 10});
  // (2,0), (1,1), (3,1) hold all three edges of (2,1), but are pairwise not
  // 4-connected: fill-holes adds (2,1), which joins them into one body.
  LatticeGenome g = only(b, {{2, 0}, {1, 1}, {3, 1}});
  b.repair(g);
  CHECK(g == only(b, {{2, 0}, {1, 1}, {3, 1}, {2, 1}}));

  // Without fill-holes they stay apart and the first in row-major order wins.
  LatticeSpec noFill{6, 10};
  noFill.fillHoles = false;
  LatticeBody nb(noFill);
  LatticeGenome h = only(nb, {{2, 0}, {1, 1}, {3, 1}});
  nb.repair(h);
  CHECK(h == only(nb, {{2, 0}}));
}

TEST_CASE("lattice: largest 4-connected component", "[lattice]") {
  LatticeBody b({6, 10});
  // A column (vertical neighbours are 4-connected) beats a lone triangle;
  // diagonal neighbours are not connected.
  LatticeGenome g = only(b, {{0, 0}, {9, 3}, {9, 4}, {5, 5}, {4, 4}});
  b.repair(g);
  CHECK(g == only(b, {{9, 3}, {9, 4}}));
  // Equal sizes: the component met first in row-major order stays.
  LatticeGenome t = only(b, {{7, 0}, {8, 0}, {0, 2}, {0, 3}});
  b.repair(t);
  CHECK(t == only(b, {{7, 0}, {8, 0}}));
  // Repair is idempotent and a full lattice is already repaired.
  LatticeGenome f = full(b);
  b.repair(f);
  CHECK(f == full(b));
}

TEST_CASE("lattice: sampling is repaired, non-empty and reproducible", "[lattice]") {
  LatticeBody b({13, 22});
  EvoRng r1(42), r2(42);
  for (int i = 0; i < 20; ++i) {
    LatticeGenome g = b.sample(r1);
    CHECK(g == b.sample(r2));
    CHECK_FALSE(LatticeBody::empty(g));
    LatticeGenome again = g;
    b.repair(again);
    CHECK(again == g);
  }
}

TEST_CASE("lattice: mutation until changed, actuation rates", "[lattice]") {
  LatticeBody b({6, 10});
  EvoRng rng(3);
  LatticeGenome parent = b.sample(rng);
  LatticeMutation m = defaultMutation(b.geometry());
  CHECK(m.cellRate == Approx(1.0 / 60));
  CHECK(m.actuatorRate == Approx(1.0 / 101));
  // A tiny rate still changes the body: the rate grows until it does.
  m.cellRate = 1e-12;
  m.actuatorRate = 0;
  for (int i = 0; i < 50; ++i) {
    LatticeGenome c = b.mutate(parent, m, rng);
    CHECK(c.mask != parent.mask);
    CHECK(c.actuation == parent.actuation);
    CHECK_FALSE(LatticeBody::empty(c));
    LatticeGenome again = c;
    b.repair(again);
    CHECK(again == c);
  }
  // Actuation rate 1 flips every bit.
  m.actuatorRate = 1;
  LatticeGenome c = b.mutate(parent, m, rng);
  for (size_t e = 0; e < c.actuation.size(); ++e)
    CHECK(c.actuation[e] == (parent.actuation[e] ^ 1));
  // p = 1/#edges flips one bit per child on average.
  m = defaultMutation(b.geometry());
  double flips = 0;
  const int trials = 3000;
  for (int i = 0; i < trials; ++i) {
    LatticeGenome k = b.mutate(parent, m, rng);
    for (size_t e = 0; e < k.actuation.size(); ++e)
      flips += k.actuation[e] != parent.actuation[e];
  }
  CHECK(flips / trials == Approx(1.0).margin(0.08));
  // The same seed replays the same mutations.
  EvoRng a(9), z(9);
  for (int i = 0; i < 10; ++i)
    CHECK(b.mutate(parent, m, a) == b.mutate(parent, m, z));
}

TEST_CASE("lattice: until changed means a new shape, not a translated one", "[lattice]") {
  // One row of four triangles; the parent is the single triangle (0, 0),
  // whose translate (2, 0) has the very same phenotype.
  LatticeBody b({1, 4});
  LatticeGenome parent = only(b, {{0, 0}});
  LatticeGenome translate = only(b, {{2, 0}});
  REQUIRE(robotToJson(b.express(parent)) == robotToJson(b.express(translate)));
  LatticeMutation m = defaultMutation(b.geometry());
  m.actuatorRate = 0;
  EvoRng rng(1);
  for (int i = 0; i < 300; ++i) {
    LatticeGenome c = b.mutate(parent, m, rng);
    CHECK(robotToJson(b.express(c)) != robotToJson(b.express(parent)));
  }
}

TEST_CASE("lattice: genome JSON round trip and errors", "[lattice]") {
  LatticeBody b({6, 10});
  EvoRng rng(5);
  LatticeGenome g = b.sample(rng);
  auto j = b.toJson(g);
  CHECK(j["rows"].size() == 6);
  CHECK(j["actuation"].get<std::string>().size() == 101);
  CHECK(b.fromJson(j) == g);
  j["rows"][2] = "01x0000000";
  CHECK_THROWS_AS(b.fromJson(j), evoc::Error);
  CHECK_THROWS_AS(LatticeBody({0, 10}), evoc::Error);
}

// The shared reference robots are 6 x 10 lattice robots: recover a genome
// for each and check that express() gives exactly the same doubles.
TEST_CASE("lattice: matches the reference robots bit for bit", "[lattice]") {
  auto robots = nlohmann::json::parse(
      readTextFile(EVOC_SHARED_DIR "/testdata/eldir-vectors/robots.json"))["robots"];
  LatticeBody b({6, 10});
  const auto &geom = b.geometry();
  for (const auto &rj : robots) {
    // Robot-relative lattice coordinates of points and springs.
    std::vector<Node> nodes;
    for (const auto &p : rj["points"])
      nodes.push_back({int(std::lround((p[0].get<double>() - 0.025) / 0.025)),
                       int(std::lround((p[1].get<double>() - 0.1) / (std::sqrt(3.0) * 0.025)))});
    std::set<std::pair<Node, Node>> springs;
    for (const auto &s : rj["springs"])
      springs.insert({nodes[s[0].get<size_t>()], nodes[s[1].get<size_t>()]});
    bool matched = false;
    for (int oy = 0; oy <= 6 && !matched; ++oy)
      for (int ox = -1; ox <= 10 && !matched; ++ox) {
        auto rel = [&](int n) { return Node{geom.node(n).x - ox, geom.node(n).y - oy}; };
        // After repair, a triangle is present exactly when its three edges are.
        LatticeGenome g = full(b);
        for (int t = 0; t < geom.numTriangles(); ++t) {
          g.mask[t] = 1;
          for (int e : geom.triangleEdges(t))
            g.mask[t] &= springs.count({rel(geom.edge(e).first), rel(geom.edge(e).second)}) > 0;
        }
        if (LatticeBody::empty(g))
          continue;
        for (size_t s = 0; s < rj["springs"].size(); ++s)
          for (int e = 0; e < geom.numEdges(); ++e)
            if (rel(geom.edge(e).first) == nodes[rj["springs"][s][0].get<size_t>()] &&
                rel(geom.edge(e).second) == nodes[rj["springs"][s][1].get<size_t>()])
              g.actuation[e] = rj["springs"][s][4].get<double>() != 0;
        matched = robotToJson(b.express(g)) ==
                  nlohmann::json({{"points", rj["points"]}, {"springs", rj["springs"]}});
      }
    CHECK(matched);
  }
}

TEST_CASE("lattice: phenotype ordering and geometry on random 13 x 22 bodies", "[lattice]") {
  LatticeBody b({13, 22});
  EvoRng rng(17);
  for (int k = 0; k < 25; ++k) {
    auto g = b.sample(rng);
    auto r = b.express(g);
    REQUIRE(r.numPoints() > 0);
    double minX = 1e9, minY = 1e9;
    for (int i = 0; i < r.numPoints(); ++i) {
      minX = std::min(minX, r.points[2 * i]);
      minY = std::min(minY, r.points[2 * i + 1]);
      if (i > 0) { // points in node order: x, then y
        auto prev = std::make_pair(r.points[2 * i - 2], r.points[2 * i - 1]);
        CHECK(prev < std::make_pair(r.points[2 * i], r.points[2 * i + 1]));
      }
    }
    CHECK(minX == 0.025);
    CHECK(minY == 0.1);
    std::vector<int> degree(r.numPoints(), 0);
    for (int s = 0; s < r.numSprings(); ++s) {
      const auto &sp = r.springs[s];
      CHECK(sp.a < sp.b);
      if (s > 0)
        CHECK(std::make_pair(r.springs[s - 1].a, r.springs[s - 1].b) < std::make_pair(sp.a, sp.b));
      double len = std::hypot(r.points[2 * sp.a] - r.points[2 * sp.b],
                              r.points[2 * sp.a + 1] - r.points[2 * sp.b + 1]);
      CHECK(len == Approx(0.05).epsilon(1e-12));
      ++degree[sp.a];
      ++degree[sp.b];
    }
    for (int d : degree)
      CHECK(d >= 2); // every point is a corner of a present triangle
  }
}

TEST_CASE("lattice: an actuation mutation that leaves no actuated spring is redrawn", "[lattice]") {
  // One row of four triangles; the parent is triangle (0, 0) with exactly
  // one of its three springs actuated. At rate 1/2 a draw leaves none with
  // probability about 1/8, so 400 children would hit it ~50 times without
  // the redraw.
  LatticeBody b({1, 4});
  LatticeGenome parent = only(b, {{0, 0}});
  parent.actuation[size_t(b.geometry().triangleEdges(0)[0])] = 1;
  REQUIRE(b.actuatedSprings(parent) == 1);
  LatticeMutation m = defaultMutation(b.geometry());
  m.actuatorRate = 0.5;
  EvoRng rng(5);
  int redrawn = 0;
  for (int i = 0; i < 400; ++i) {
    LatticeMutationReport rep;
    LatticeGenome c = b.mutate(parent, m, rng, &rep);
    CHECK(b.actuatedSprings(c) > 0);
    int act = 0;
    for (const auto &s : b.express(c).springs)
      act += s.actuation != 0;
    CHECK(act == b.actuatedSprings(c));
    redrawn += rep.actuationRedraws > 0;
  }
  CHECK(redrawn > 10);
  // A rate of 0 on a parent without actuation cannot loop: the child keeps
  // its (empty) actuation.
  parent.actuation.assign(parent.actuation.size(), 0);
  m.actuatorRate = 0;
  LatticeMutationReport rep;
  LatticeGenome c = b.mutate(parent, m, rng, &rep);
  CHECK(b.actuatedSprings(c) == 0);
  CHECK(rep.actuationRedraws == 0);
  CHECK_FALSE(rep.actuationFlipped);
}
