// Grammar bodies, unit by unit: geometry (fits, eigen, penetration),
// placement of known configurations to exact coordinates, loop closing by
// merging, overlap pruning written back, lift, mirrored tied pairs, angle
// genes, JSON round trips and the errors of fromJson.
#include "GrammarFixtures.h"

#include "evolve/bodies/Geometry.h"
#include "evolve/bodies/GrammarBody.h"
#include "support/Error.h"

#include <catch2/catch.hpp>

#include <cmath>

using namespace evoc;
using namespace evoc::evolve;
using Catch::Matchers::Contains;

namespace {

const double kH = std::sqrt(3.0) / 2;

/// A node of `symbol` by alternative `alt` with default parameters, genes
/// off and empty slots.
std::unique_ptr<GrammarNode> node(const GrammarBody &b, GrammarGenome &g, int symbol, int alt = 0) {
  auto n = std::make_unique<GrammarNode>();
  const auto &a = b.spec().grammar.symbols[symbol].alternatives[alt];
  const auto &p = b.spec().grammar.parts[a.part];
  n->id = g.nextId++;
  n->symbol = symbol, n->alt = alt;
  for (const auto &pa : p.params)
    n->params.push_back(pa.init);
  n->genes.assign(p.genes.size(), 0);
  n->children.resize(a.bindings.size());
  return n;
}

GrammarGenome rootOnly(const GrammarBody &b) {
  GrammarGenome g;
  g.root = std::move(*node(b, g, b.spec().grammar.start));
  return g;
}

void checkPoint(const runtime::Robot &r, int i, double x, double y) {
  INFO("point " << i);
  CHECK(r.points[i * 2] == Approx(x).margin(1e-12));
  CHECK(r.points[i * 2 + 1] == Approx(y).margin(1e-12));
}

/// A chain of `n` cells around the root's vertex 1, each on the previous e1.
GrammarGenome fan(const GrammarBody &b, int n) {
  GrammarGenome g = rootOnly(b);
  GrammarNode *cur = &g.root;
  int slot = 1; // the root's e1 binding; a cell's e1 binding is slot 0
  for (int i = 0; i < n; ++i) {
    cur->children[slot] = node(b, g, 1);
    cur = cur->children[slot].get();
    slot = 0;
  }
  return g;
}

} // namespace

TEST_CASE("geometry: 2D fit is exact for a rotated, translated triangle", "[grammar][geometry]") {
  double src[] = {0, 0, 1, 0, 0.5, 0.8};
  double th = 0.7, dst[6];
  for (int i = 0; i < 3; ++i) {
    dst[i * 2] = std::cos(th) * src[i * 2] - std::sin(th) * src[i * 2 + 1] + 3;
    dst[i * 2 + 1] = std::sin(th) * src[i * 2] + std::cos(th) * src[i * 2 + 1] - 1;
  }
  double res = 1;
  auto a = geom::fit(2, src, dst, 3, 1, &res);
  CHECK(res < 1e-12);
  CHECK(geom::det(a) == Approx(1));
  CHECK(a.t[0] == Approx(3));
  // The reflecting fit of a mirrored set has determinant -1.
  double mir[6] = {-0.0, 0, -1, 0, -0.5, 0.8};
  auto m = geom::fit(2, src, mir, 3, -1, &res);
  CHECK(res < 1e-12);
  CHECK(geom::det(m) == Approx(-1));
}

TEST_CASE("geometry: Horn's method recovers a 3D rotation; Jacobi eigenpairs",
          "[grammar][geometry]") {
  double u[3] = {1 / std::sqrt(3.0), 1 / std::sqrt(3.0), 1 / std::sqrt(3.0)};
  auto r = geom::axisRotation(u, 1.1);
  r.t = {0.5, -2, 1};
  double src[12] = {0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3}, dst[12];
  for (int i = 0; i < 4; ++i)
    geom::apply(r, src + i * 3, dst + i * 3);
  double res = 1;
  auto f = geom::fit(3, src, dst, 4, 1, &res);
  CHECK(res < 1e-9);
  for (int i = 0; i < 9; ++i)
    CHECK(f.m[i] == Approx(r.m[i]).margin(1e-9));
  double a[9] = {2, 1, 0, 1, 2, 0, 0, 0, 5}, vals[3], vecs[9];
  geom::symmetricEigen(3, a, vals, vecs);
  std::vector<double> v(vals, vals + 3);
  std::sort(v.begin(), v.end());
  CHECK(v[0] == Approx(1));
  CHECK(v[1] == Approx(3));
  CHECK(v[2] == Approx(5));
}

TEST_CASE("geometry: touching cells do not penetrate, overlapping ones do", "[grammar][geometry]") {
  std::vector<std::array<double, 2>> a = {{0, 0}, {1, 0}, {1, 1}, {0, 1}};
  std::vector<std::array<double, 2>> edge = {{1, 0}, {2, 0}, {2, 1}, {1, 1}};
  std::vector<std::array<double, 2>> corner = {{1, 1}, {2, 1}, {2, 2}, {1, 2}};
  std::vector<std::array<double, 2>> over = {{0.9, 0.5}, {2, 0.5}, {2, 2}};
  CHECK_FALSE(geom::polygonsPenetrate(a, edge, 1e-9));
  CHECK_FALSE(geom::polygonsPenetrate(a, corner, 1e-9));
  CHECK(geom::polygonsPenetrate(a, over, 1e-9));
  auto cube = [](double x0, double y0, double z0) {
    std::vector<std::array<double, 3>> c;
    for (int i = 0; i < 8; ++i)
      c.push_back({x0 + (i & 1), y0 + ((i >> 1) & 1), z0 + ((i >> 2) & 1)});
    return c;
  };
  CHECK_FALSE(geom::hullsPenetrate(cube(0, 0, 0), cube(1, 0, 0), 1e-9));
  CHECK_FALSE(geom::hullsPenetrate(cube(0, 0, 0), cube(1, 1, 1), 1e-9));
  CHECK(geom::hullsPenetrate(cube(0, 0, 0), cube(0.5, 0.5, 0.2), 1e-9));
  // Separated only along an edge-edge axis: two tetrahedra crossed like an X.
  std::vector<std::array<double, 3>> t1 = {{-1, 0, 0}, {1, 0, 0}, {0, 1, 1}, {0, -1, 1}};
  std::vector<std::array<double, 3>> t2 = {{0, -1, -0.1}, {0, 1, -0.1}, {1, 0, -1}, {-1, 0, -1}};
  CHECK_FALSE(geom::hullsPenetrate(t1, t2, 1e-9));
}

TEST_CASE("grammar: a triangle and a neighbour land at exact coordinates", "[grammar]") {
  GrammarBody b(test::triangleGrammar(), {});
  GrammarGenome g = fan(b, 1);
  Phenotype ph = b.express(g);
  REQUIRE(ph.valid);
  const auto &r = ph.robot;
  REQUIRE(r.numPoints() == 4);
  REQUIRE(r.numSprings() == 5);
  double s = 0.05, y0 = 0.1;
  checkPoint(r, 0, 0, y0);
  checkPoint(r, 1, s, y0);
  checkPoint(r, 2, 0.5 * s, y0 + kH * s);
  checkPoint(r, 3, 1.5 * s, y0 + kH * s); // the child lands outside edge e1
  for (const auto &sp : r.springs)
    CHECK(sp.rest == Approx(s).margin(1e-12));
  // Provenance: the child's new point is its local point 2.
  CHECK(ph.pointKeys[3] == ((g.root.children[1]->id << 20) | 2));
  CHECK(ph.outlines.size() == 2);
}

TEST_CASE("grammar: six triangles around a vertex close the hexagon by merging", "[grammar]") {
  GrammarBody b(test::triangleGrammar(), {});
  Phenotype ph = b.express(fan(b, 5));
  REQUIRE(ph.valid);
  CHECK(ph.robot.numPoints() == 7);   // without merging the last point would be an 8th
  CHECK(ph.robot.numSprings() == 12); // 6 spokes + 6 rim edges, the closing spoke collapsed
}

TEST_CASE("grammar: an overlapping optional cell is pruned and written back", "[grammar]") {
  auto spec = test::triangleGrammar();
  GrammarBody b(spec, {});
  GrammarGenome g = fan(b, 6); // the 7th triangle lies exactly on the root
  GrammarGenome p = b.prune(g);
  const GrammarNode *n = &p.root;
  n = n->children[1].get();
  for (int i = 0; i < 4; ++i)
    n = n->children[0].get();
  REQUIRE(n);
  CHECK(n->children[0] == nullptr); // the 6th cell lost its child
  CHECK(b.check(p).empty());
  Phenotype ph = b.express(g);
  REQUIRE(ph.valid);
  CHECK(ph.robot.numPoints() == 7);
  CHECK_FALSE(b.expressExact(g).valid);
  spec.overlap = body::Overlap::Reject;
  GrammarBody rej(spec, {});
  Phenotype pr = rej.express(g);
  CHECK_FALSE(pr.valid);
  CHECK_THAT(pr.reason, Contains("penetrates"));
}

TEST_CASE("grammar: walker legs are mirror images; lift puts the body on the ground", "[grammar]") {
  GrammarBody b(test::walkerGrammar(), {});
  GrammarGenome g = rootOnly(b);
  g.root.children[1] = node(b, g, 2); // the tied pair of legs
  Phenotype ph = b.express(g);
  REQUIRE(ph.valid);
  const auto &r = ph.robot;
  REQUIRE(r.numPoints() == 10);
  double s = 0.05, y0 = 0.1 + 1 * s; // the legs hang 1 below the trunk
  checkPoint(r, 0, 0, y0);
  checkPoint(r, 6, 0.5 * s, y0 - s); // left leg's far corners
  checkPoint(r, 7, 0, y0 - s);
  checkPoint(r, 8, 1.5 * s, y0 - s); // mirror image about x = 1
  checkPoint(r, 9, 2 * s, y0 - s);
  // The mirrored copy has its own provenance keys (copy bit 12).
  uint64_t id = g.root.children[1]->id;
  CHECK(ph.pointKeys[6] == ((id << 20) | 2));
  CHECK(ph.pointKeys[8] == ((id << 20) | (1 << 12) | 2));
  double minY = 1e9, minX = 1e9;
  for (int i = 0; i < r.numPoints(); ++i)
    minX = std::min(minX, r.points[i * 2]), minY = std::min(minY, r.points[i * 2 + 1]);
  CHECK(minX == 0);
  CHECK(minY == Approx(0.1).margin(1e-15));
}

TEST_CASE("grammar: a one-point port places by translation and the angle gene", "[grammar]") {
  GrammarBody b(test::walkerGrammar(), {});
  GrammarGenome g = rootOnly(b);
  g.root.children[1] = node(b, g, 2);
  g.root.children[1]->children[1] = node(b, g, 3); // a foot at the tip
  for (double angle : {0.0, 30.0}) {
    g.root.children[1]->children[1]->angle = angle;
    Phenotype ph = b.express(g);
    REQUIRE(ph.valid);
    // Points: trunk 6, leg 2, foot 2, mirrored leg 2, mirrored foot 2.
    REQUIRE(ph.robot.numPoints() == 14);
    const auto &r = ph.robot;
    double a = angle * M_PI / 180;
    // The foot's point 1, (0.4, -0.3) turned by angle, from the tip (0.5, -1).
    double fx = 0.5 + std::cos(a) * 0.4 + std::sin(a) * 0.3;
    double fy = -1 + std::sin(a) * 0.4 - std::cos(a) * 0.3;
    double lowest = std::min(-1.0, std::min(fy, -1 + std::sin(a) * -0.1 - std::cos(a) * 0.3));
    double lift = 0.1 - lowest * 0.05;
    checkPoint(r, 10, fx * 0.05, fy * 0.05 + lift);
    // The mirrored foot: reflected about x = 1 (the trunk's mirror).
    checkPoint(r, 12, (2 - fx) * 0.05, fy * 0.05 + lift);
  }
}

TEST_CASE("grammar: JSON round trip gives the same bytes", "[grammar]") {
  for (auto &[name, spec] : test::allGrammars()) {
    GrammarBody b(spec, test::mixedMutation());
    EvoRng rng(7);
    for (int i = 0; i < 20; ++i) {
      GenomePtr g = b.sample(rng);
      std::string once = b.toJson(*g).dump();
      std::string twice = b.toJson(*b.fromJson(nlohmann::json::parse(once))).dump();
      INFO(name);
      CHECK(once == twice);
    }
  }
}

TEST_CASE("grammar: fromJson names what is wrong", "[grammar]") {
  GrammarBody b(test::walkerGrammar(), {});
  GrammarGenome g = rootOnly(b);
  g.root.children[1] = node(b, g, 2);
  nlohmann::json good = b.toJson(g);
  CHECK_NOTHROW(b.fromJson(good));
  auto expectError = [&](const std::function<void(nlohmann::json &)> &edit, const char *text) {
    nlohmann::json j = good;
    edit(j);
    INFO(j.dump());
    CHECK_THROWS_WITH(b.fromJson(j), Contains(text));
  };
  expectError([](auto &j) { j["root"]["symbol"] = "Tail"; }, "'Tail' is not a symbol");
  expectError([](auto &j) { j["root"]["alt"] = 3; }, "alternative 3 out of range");
  expectError([](auto &j) { j["root"]["children"][1]["genes"].push_back(1); }, "actuation genes");
  expectError([](auto &j) { j["root"]["children"][1]["params"][0] = 7.0; }, "param len = 7");
  expectError([](auto &j) { j["root"]["children"][1]["symbol"] = "Trunk"; },
              "the binding wants Leg");
  expectError([](auto &j) { j["root"].erase("turn"); }, "no field 'turn'");
  expectError([](auto &j) { j["next_id"] = 1; }, "not below next_id");
  expectError([](auto &j) { j["root"]["children"][1]["children"][0] = j["root"]["children"][1]; },
              "used twice");
  expectError(
      [](auto &j) {
        nlohmann::json leg = j["root"]["children"][1];
        for (int i = 0; i < 8; ++i) {
          nlohmann::json outer = leg;
          outer["children"][0] = leg;
          leg = outer;
        }
        j["root"]["children"][1] = leg;
      },
      "deeper than");
}

TEST_CASE("grammar: a spec that cannot finish or fit is refused", "[grammar]") {
  auto spec = test::limbGrammar();
  spec.grammar.symbols[1].alternatives.pop_back();                      // Limb only recursive...
  spec.grammar.symbols[1].alternatives[0].bindings[0].optional = false; // ...and required
  CHECK_THROWS_WITH(GrammarBody(spec, {}), Contains("can never finish"));
  auto small = test::walkerGrammar();
  small.maxPoints = 3;
  CHECK_THROWS_WITH(GrammarBody(small, {}), Contains("exceeds the limits"));
}
