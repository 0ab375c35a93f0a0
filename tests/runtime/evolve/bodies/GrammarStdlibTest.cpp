// The stdlib's grammars, read by the real checker: the ELDiR lattice written
// as a triangle grammar builds the same robots as `body lattice` (random
// repaired masks and the shared reference robots), and Evolution Gym's voxel
// bodies written as a square grammar build the direct voxel-to-spring
// conversion (written here from the grid, without placement or merging).
#include "GrammarChecks.h"
#include "StdlibBodies.h"

#include "evolve/bodies/GrammarBody.h"
#include "evolve/bodies/Lattice.h"
#include "evolve/bodies/VoxelBody.h"
#include "evolve/engine/CanonicalHash.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <deque>
#include <fstream>
#include <functional>
#include <map>
#include <set>

using namespace evoc;
using namespace evoc::evolve;

namespace {

const std::string kSrc = EVOC_SOURCE_DIR;

body::GrammarBodySpec checkBody(const std::string &text) {
  return test::checkGrammarBody(text).spec;
}

/// A node of `symbol` with alternative `alt`, its child slots empty.
std::unique_ptr<GrammarNode> makeNode(const body::GrammarSpec &g, int symbol, int alt,
                                      uint64_t &nextId) {
  auto n = std::make_unique<GrammarNode>();
  n->id = nextId++;
  n->symbol = symbol;
  n->alt = alt;
  const auto &a = g.symbols[symbol].alternatives[alt];
  const auto &part = g.parts[a.part];
  for (const auto &pp : part.params)
    n->params.push_back(pp.init);
  n->genes.assign(part.genes.size(), 0);
  n->children.resize(a.bindings.size());
  if (a.hasAngle)
    n->angle = a.angleLo;
  return n;
}

// ---- the lattice ---------------------------------------------------------

const char *kLatticeBody = R"(
import "grammars/eldir_lattice.evo";
world { dim = 2; ground = flat(height = 0.1, friction = 1.0); }
body grammar G { grammar = EldirLattice; scale = 0.05; stiffness = 3e4; actuation = 0.1; max_parts = 400; }
)";

/// The lattice triangle across port `port` (0 bottom, 1 right, 2 left,
/// 3 apex) of triangle (x, y) in part orientation (see eldir_lattice.evo).
std::pair<int, int> across(int x, int y, bool up, int port) {
  switch (port) {
  case 0:
    return {x, up ? y - 1 : y + 1};
  case 1:
    return {up ? x + 1 : x - 1, y};
  case 2:
    return {up ? x - 1 : x + 1, y};
  default:
    return {x, up ? y + 1 : y - 1};
  }
}

/// A spanning-tree genome (breadth first from the first upright triangle in
/// row-major order) of a lattice genome, with the triangles' spring genes
/// copied from the lattice's actuation bits. Empty root symbol (-1) when the
/// mask has no upright triangle.
GrammarGenome latticeToGrammar(const body::GrammarBodySpec &s, const LatticeGeometry &geo,
                               const LatticeGenome &lg) {
  const auto &g = s.grammar;
  const int R = geo.rows(), C = geo.cols();
  auto present = [&](int x, int y) {
    return x >= 0 && y >= 0 && x < C && y < R && lg.mask[size_t(y * C + x)];
  };
  std::map<std::pair<int, int>, int> edgeOf; // node pair -> lattice edge
  std::map<std::pair<int, int>, int> nodeOf;
  for (int n = 0; n < geo.numNodes(); ++n)
    nodeOf[{geo.node(n).x, geo.node(n).y}] = n;
  for (int e = 0; e < geo.numEdges(); ++e)
    edgeOf[geo.edge(e)] = e;
  // Part corners of triangle (x, y): upright p0 = (x-1, y), p1 = (x+1, y),
  // p2 = (x, y+1); turned by 180: p0 = (x+1, y+1), p1 = (x-1, y+1), p2 = (x, y).
  auto corners = [](int x, int y, bool up) {
    return up ? std::array<std::pair<int, int>, 3>{{{x - 1, y}, {x + 1, y}, {x, y + 1}}}
              : std::array<std::pair<int, int>, 3>{{{x + 1, y + 1}, {x - 1, y + 1}, {x, y}}};
  };
  const int root = test::symbolIndex(g, "Root");
  const std::map<int, int> symbolOfPort = {{0, test::symbolIndex(g, "B")},
                                           {1, test::symbolIndex(g, "R")},
                                           {2, test::symbolIndex(g, "L")},
                                           {3, test::symbolIndex(g, "V")}};
  GrammarGenome out;
  out.root.symbol = -1;
  int rx = -1, ry = -1;
  for (int i = 0; i < R * C && rx < 0; ++i)
    if (lg.mask[size_t(i)] && geo.pointsUp(i))
      rx = i % C, ry = i / C;
  if (rx < 0)
    return out;
  uint64_t nextId = 1;
  std::set<std::pair<int, int>> visited{{rx, ry}};
  auto rootNode = makeNode(g, root, 0, nextId);
  std::deque<std::tuple<GrammarNode *, int, int>> queue{{rootNode.get(), rx, ry}};
  const auto &part = g.parts[g.symbols[root].alternatives[0].part];
  while (!queue.empty()) {
    auto [node, x, y] = queue.front();
    queue.pop_front();
    const bool up = geo.pointsUp(y * C + x);
    auto cs = corners(x, y, up);
    for (size_t k = 0; k < part.genes.size(); ++k) { // one gene per spring
      const auto &sp = part.springs[part.genes[k].springs.at(0)];
      auto a = nodeOf.at(cs[size_t(sp.a)]), b = nodeOf.at(cs[size_t(sp.b)]);
      node->genes[k] = lg.actuation[size_t(edgeOf.at({std::min(a, b), std::max(a, b)}))];
    }
    const auto &alt = g.symbols[node->symbol].alternatives[node->alt];
    for (size_t b = 0; b < alt.bindings.size(); ++b) {
      int port = alt.bindings[b].ports.at(0);
      auto [nx, ny] = across(x, y, up, port);
      if (!present(nx, ny) || !visited.insert({nx, ny}).second)
        continue;
      node->children[b] = makeNode(g, symbolOfPort.at(port), 0, nextId);
      queue.emplace_back(node->children[b].get(), nx, ny);
    }
  }
  out.root = std::move(*rootNode);
  out.nextId = nextId;
  return out;
}

} // namespace

TEST_CASE("stdlib grammars: the ELDiR lattice grammar builds the lattice's robots",
          "[grammar][stdlib]") {
  body::GrammarBodySpec spec = checkBody(kLatticeBody);
  GrammarBody model(spec, {});
  REQUIRE(spec.grammar.parts.size() == 1);
  REQUIRE(spec.grammar.parts[0].genes.size() == 3);
  for (auto [rows, cols] : {std::pair{6, 10}, std::pair{13, 22}}) {
    LatticeSpec ls;
    ls.rows = rows;
    ls.cols = cols;
    LatticeBody lattice(ls);
    EvoRng rng(uint64_t(rows * 1000 + cols));
    int compared = 0, skipped = 0;
    for (int i = 0; i < 1000; ++i) {
      LatticeGenome lg = lattice.sample(rng);
      GrammarGenome gg = latticeToGrammar(spec, lattice.geometry(), lg);
      if (gg.root.symbol < 0) { // a lone downward triangle: no upright root
        ++skipped;
        continue;
      }
      REQUIRE(model.check(gg).empty());
      Phenotype ph = model.expressExact(gg);
      REQUIRE(ph.valid);
      runtime::Robot want = lattice.express(lg);
      REQUIRE(ph.robot.numPoints() == want.numPoints());
      REQUIRE(ph.robot.numSprings() == want.numSprings());
      CanonicalKey a = canonicalKey(ph.robot), b = canonicalKey(want);
      REQUIRE(a.bytes == b.bytes);
      // Under the default overlap policy nothing is pruned from a lattice.
      REQUIRE(canonicalKey(model.express(gg).robot).bytes == b.bytes);
      ++compared;
    }
    INFO(rows << "x" << cols << ": " << compared << " compared, " << skipped << " skipped");
    CHECK(compared >= 990);
  }
}

TEST_CASE("stdlib grammars: the lattice grammar builds the shared reference robots",
          "[grammar][stdlib]") {
  std::ifstream in(kSrc + "/../shared/testdata/eldir-vectors/robots.json");
  REQUIRE(in.good());
  nlohmann::json j = nlohmann::json::parse(in);
  body::GrammarBodySpec spec = checkBody(kLatticeBody);
  GrammarBody model(spec, {});
  LatticeSpec ls; // the vectors' robots are 6 x 10 lattice robots
  LatticeBody lattice(ls);
  const auto &geo = lattice.geometry();
  int n = 0;
  for (const auto &rj : j.at("robots")) {
    runtime::Robot robot;
    for (const auto &p : rj.at("points"))
      robot.points.insert(robot.points.end(), {p[0].get<double>(), p[1].get<double>()});
    for (const auto &s : rj.at("springs"))
      robot.springs.push_back({s[0].get<int>(), s[1].get<int>(), s[2].get<double>(),
                               s[3].get<double>(), s[4].get<double>()});
    // Recover the mask: a triangle is present when its three edges are
    // springs; the lattice node of a point from its coordinates.
    auto nodeAt = [&](int i) {
      double x = robot.points[size_t(i * 2)], y = robot.points[size_t(i * 2 + 1)];
      return std::pair<int, int>{int(std::lround((x - 0.025) / 0.025)),
                                 int(std::lround((y - 0.1) / (std::sqrt(3.0) * 0.025)))};
    };
    int minX = 1 << 20, minY = 1 << 20;
    for (int i = 0; i < robot.numPoints(); ++i)
      minX = std::min(minX, nodeAt(i).first), minY = std::min(minY, nodeAt(i).second);
    // Place the robot's nodes at the lattice's origin (x from -1 or 0, y from
    // 0): the shift whose parity keeps upright triangles upright rebuilds it.
    LatticeGenome lg;
    bool rebuilt = false;
    for (int shift = 0; shift < 2 && !rebuilt; ++shift) {
      int dx = -1 - minX + shift, dy = -minY;
      std::map<std::pair<std::pair<int, int>, std::pair<int, int>>, double> springAct;
      for (const auto &s : robot.springs) {
        auto a = nodeAt(s.a), b = nodeAt(s.b);
        a = {a.first + dx, a.second + dy}, b = {b.first + dx, b.second + dy};
        springAct[{std::min(a, b), std::max(a, b)}] = s.actuation;
      }
      auto key = [&](int e) {
        auto [a, b] = geo.edge(e);
        std::pair<int, int> na{geo.node(a).x, geo.node(a).y}, nb{geo.node(b).x, geo.node(b).y};
        return std::pair{std::min(na, nb), std::max(na, nb)};
      };
      lg.mask.assign(size_t(geo.numTriangles()), 0);
      lg.actuation.assign(size_t(geo.numEdges()), 0);
      for (int e = 0; e < geo.numEdges(); ++e) {
        auto it = springAct.find(key(e));
        lg.actuation[size_t(e)] = it != springAct.end() && it->second > 0;
      }
      for (int t = 0; t < geo.numTriangles(); ++t) {
        bool all = true;
        for (int e : geo.triangleEdges(t))
          all = all && springAct.count(key(e));
        lg.mask[size_t(t)] = all;
      }
      rebuilt = !LatticeBody::empty(lg) &&
                canonicalKey(lattice.express(lg)).bytes == canonicalKey(robot).bytes;
    }
    REQUIRE(rebuilt);
    GrammarGenome gg = latticeToGrammar(spec, geo, lg);
    REQUIRE(gg.root.symbol >= 0);
    Phenotype ph = model.express(gg);
    REQUIRE(ph.valid);
    CHECK(canonicalKey(ph.robot).bytes == canonicalKey(robot).bytes);
    ++n;
  }
  CHECK(n == int(j.at("robots").size()));
}

// ---- Evolution Gym voxels ---------------------------------------------------

namespace {

const char *kVoxelBody = R"(
import "grammars/voxels.evo";
world { dim = 2; ground = flat(height = 0.1, friction = 1.0); }
body grammar G { grammar = Voxels; scale = 0.05; actuation = 0.1; max_parts = 25; }
)";

enum Material { Empty = 0, Rigid, Soft, HAct, VAct };

/// A random Evolution Gym style 5 x 5 body: materials drawn uniformly
/// (empty included), the largest 4-connected component kept, redrawn until
/// it has an actuator.
std::array<int, 25> randomVoxels(EvoRng &rng) {
  for (;;) {
    std::array<int, 25> m{};
    for (int &v : m)
      v = int(rng.below(5));
    std::array<int, 25> comp{};
    comp.fill(-1);
    int best = -1, bestSize = 0;
    for (int s = 0; s < 25; ++s) {
      if (m[size_t(s)] == Empty || comp[size_t(s)] >= 0)
        continue;
      int size = 0;
      std::deque<int> q{s};
      comp[size_t(s)] = s;
      while (!q.empty()) {
        int c = q.front();
        q.pop_front();
        ++size;
        int x = c % 5, y = c / 5;
        for (auto [nx, ny] : {std::pair{x + 1, y}, {x - 1, y}, {x, y + 1}, {x, y - 1}}) {
          int nb = ny * 5 + nx;
          if (nx < 0 || ny < 0 || nx >= 5 || ny >= 5 || m[size_t(nb)] == Empty ||
              comp[size_t(nb)] >= 0)
            continue;
          comp[size_t(nb)] = s;
          q.push_back(nb);
        }
      }
      if (size > bestSize)
        best = s, bestSize = size;
    }
    bool actuator = false;
    for (int c = 0; c < 25; ++c) {
      if (comp[size_t(c)] != best)
        m[size_t(c)] = Empty;
      actuator = actuator || m[size_t(c)] == HAct || m[size_t(c)] == VAct;
    }
    if (best >= 0 && actuator)
      return m;
  }
}

// Directions of a voxel's neighbours: 0 right, 1 top, 2 left, 3 bottom; the
// stdlib grammar's slot order per symbol (Root, R, U, L, D).
const std::map<std::string, std::vector<int>> kSlots = {
    {"Root", {0, 1, 2, 3}}, {"R", {0, 1, 3}}, {"U", {0, 1, 2}}, {"L", {1, 2, 3}}, {"D", {0, 2, 3}}};
const char *kSymbolOfDirection[4] = {"R", "U", "L", "D"};

/// The voxels in the grammar's placement order (breadth first from the first
/// voxel in row-major order, neighbours in slot order), with the direction
/// each was reached in (-1 for the first).
std::vector<std::pair<int, int>> placementOrder(const std::array<int, 25> &m) {
  int root = 0;
  while (m[size_t(root)] == Empty)
    ++root;
  std::vector<std::pair<int, int>> order{{root, -1}};
  std::set<int> seen{root};
  for (size_t i = 0; i < order.size(); ++i) {
    auto [c, dir] = order[i];
    int x = c % 5, y = c / 5;
    for (int d : kSlots.at(dir < 0 ? "Root" : kSymbolOfDirection[dir])) {
      int nx = x + (d == 0) - (d == 2), ny = y + (d == 1) - (d == 3);
      int nb = ny * 5 + nx;
      if (nx < 0 || ny < 0 || nx >= 5 || ny >= 5 || m[size_t(nb)] == Empty ||
          !seen.insert(nb).second)
        continue;
      order.push_back({nb, d});
    }
  }
  return order;
}

/// The direct conversion: corners on the grid, six springs per voxel (its
/// edges bottom, right, top, left and both diagonals), shared corners once,
/// a shared edge keeps the spring of the voxel placed first.
runtime::Robot directConversion(const std::array<int, 25> &m, double scale) {
  const double stiffness[5] = {0, 2e4, 5e3, 1e4, 1e4};
  std::map<std::pair<int, int>, int> points;
  runtime::Robot r;
  auto point = [&](int x, int y) {
    auto [it, fresh] = points.emplace(std::pair{x, y}, int(points.size()));
    if (fresh)
      r.points.insert(r.points.end(), {x * scale, y * scale + 0.1});
    return it->second;
  };
  std::set<std::pair<int, int>> have;
  for (auto [c, dir] : placementOrder(m)) {
    int x = c % 5, y = c / 5, mat = m[size_t(c)];
    int p[4] = {point(x, y), point(x + 1, y), point(x + 1, y + 1), point(x, y + 1)};
    const int pairs[6][2] = {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {0, 2}, {1, 3}};
    for (int s = 0; s < 6; ++s) {
      int a = p[pairs[s][0]], b = p[pairs[s][1]];
      if (!have.insert({std::min(a, b), std::max(a, b)}).second)
        continue;
      bool act = (mat == HAct && (s == 0 || s == 2)) || (mat == VAct && (s == 1 || s == 3));
      double d = std::hypot(r.points[size_t(a * 2)] - r.points[size_t(b * 2)],
                            r.points[size_t(a * 2 + 1)] - r.points[size_t(b * 2 + 1)]);
      r.springs.push_back({a, b, d, stiffness[mat], act ? 0.1 : 0.0});
    }
  }
  return r;
}

/// The same body as a genome of the stdlib voxel grammar, actuators on.
GrammarGenome voxelsToGrammar(const body::GrammarBodySpec &s, const std::array<int, 25> &m) {
  const auto &g = s.grammar;
  const char *partOf[5] = {"", "voxel_rigid", "voxel_soft", "voxel_hact", "voxel_vact"};
  auto altOf = [&](int symbol, int mat) {
    const auto &alts = g.symbols[size_t(symbol)].alternatives;
    for (size_t a = 0; a < alts.size(); ++a)
      if (g.parts[size_t(alts[a].part)].name == partOf[mat])
        return int(a);
    FAIL("no alternative for " << partOf[mat]);
    return -1;
  };
  auto order = placementOrder(m);
  uint64_t nextId = 1;
  std::map<int, GrammarNode *> nodeOf;
  auto rootNode = makeNode(g, g.start, altOf(g.start, m[size_t(order[0].first)]), nextId);
  nodeOf[order[0].first] = rootNode.get();
  // Re-run the traversal to attach each voxel under the one it was reached from.
  std::set<int> seen{order[0].first};
  for (size_t i = 0; i < order.size(); ++i) {
    auto [c, dir] = order[i];
    GrammarNode *node = nodeOf.at(c);
    for (auto &gene : node->genes)
      gene = 1;
    const auto &slots = kSlots.at(dir < 0 ? "Root" : kSymbolOfDirection[dir]);
    int x = c % 5, y = c / 5;
    for (size_t b = 0; b < slots.size(); ++b) {
      int d = slots[b];
      int nx = x + (d == 0) - (d == 2), ny = y + (d == 1) - (d == 3);
      int nb = ny * 5 + nx;
      if (nx < 0 || ny < 0 || nx >= 5 || ny >= 5 || m[size_t(nb)] == Empty ||
          !seen.insert(nb).second)
        continue;
      int sym = test::symbolIndex(g, kSymbolOfDirection[d]);
      node->children[b] = makeNode(g, sym, altOf(sym, m[size_t(nb)]), nextId);
      nodeOf[nb] = node->children[b].get();
    }
  }
  GrammarGenome out;
  out.root = std::move(*rootNode);
  out.nextId = nextId;
  return out;
}

} // namespace

TEST_CASE("stdlib grammars: the voxel grammar builds Evolution Gym's voxel bodies",
          "[grammar][stdlib]") {
  body::GrammarBodySpec spec = checkBody(kVoxelBody);
  GrammarBody model(spec, {});
  EvoRng rng(5);
  for (int i = 0; i < 1000; ++i) {
    auto m = randomVoxels(rng);
    GrammarGenome gg = voxelsToGrammar(spec, m);
    REQUIRE(model.check(gg).empty());
    Phenotype ph = model.express(gg);
    REQUIRE(ph.valid);
    runtime::Robot want = directConversion(m, 0.05);
    REQUIRE(ph.robot.numPoints() == want.numPoints());
    REQUIRE(ph.robot.numSprings() == want.numSprings());
    REQUIRE(canonicalKey(ph.robot).bytes == canonicalKey(want).bytes);
  }
}

TEST_CASE("stdlib grammars: a voxel body builds the voxel grammar's robots, numbered alike",
          "[grammar][stdlib][voxel]") {
  body::GrammarBodySpec spec = checkBody(kVoxelBody);
  GrammarBody grammar(spec, {});
  // The materials of stdlib/materials/evogym.evo, in the grid's numbering.
  body::VoxelBodySpec vs;
  vs.name = "V";
  vs.size = {5, 5};
  vs.origin = {0, 0.1};
  vs.materials = {{"rigid", 2e4, 0.1, body::CellTemplate::None, ""},
                  {"soft", 5e3, 0.1, body::CellTemplate::None, ""},
                  {"h_act", 1e4, 0.1, body::CellTemplate::Horizontal, ""},
                  {"v_act", 1e4, 0.1, body::CellTemplate::Vertical, ""}};
  vs.weights = {0.6, 0.2, 0.2, 0.2, 0.2};
  VoxelBody voxels(vs, {}, 0.1);
  EvoRng rng(11);
  for (int i = 0; i < 1000; ++i) {
    auto m = randomVoxels(rng);
    Phenotype g = grammar.express(voxelsToGrammar(spec, m));
    Phenotype v = voxels.express(*VoxelBody::make({m.begin(), m.end()}));
    REQUIRE(g.valid);
    REQUIRE(v.valid);
    const runtime::Robot &a = v.robot, &b = g.robot;
    REQUIRE(a.numPoints() == b.numPoints());
    REQUIRE(a.numSprings() == b.numSprings());
    // The grammar's root voxel sits at x = 0; the voxel body's at its column.
    const double dx = a.points[0] - b.points[0];
    for (size_t k = 0; k < a.points.size(); ++k)
      REQUIRE(std::abs(a.points[k] - b.points[k] - (k % 2 == 0 ? dx : 0)) < 1e-12);
    for (int s = 0; s < a.numSprings(); ++s) {
      const auto &x = a.springs[size_t(s)], &y = b.springs[size_t(s)];
      REQUIRE(x.a == y.a);
      REQUIRE(x.b == y.b);
      REQUIRE(x.stiffness == y.stiffness);
      REQUIRE(x.actuation == y.actuation);
      REQUIRE(std::abs(x.rest - y.rest) < 1e-12);
    }
  }
}

TEST_CASE("grammar depth and scale: Sims' recursion limit along a path and limbs that shrink "
          "per level",
          "[grammar][depth]") {
  auto checked = test::checkGrammarBody(R"(
part block {
  points = [(0, 0), (1, 0), (1, 1), (0, 1)];
  springs = [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2), (1, 3)];
  ports = top(2), right(1);
}
part rod {
  points = [(0, 0), (0.2, 1), (-0.2, 1)];
  springs = [(0, 1), (1, 2), (2, 0)];
  ports = pin(0), tip(1);
}
grammar Tree {
  start = Root;
  depth Limb = 3;
  scale Limb = 0.7;
  Root -> block(top: Limb?, right: Limb?);
  Limb -> rod<pin, angle = -40 .. 40>(tip: Limb?);
}
body grammar T { grammar = Tree; max_parts = 20; scale = 0.05; }
mutation { add p = 0.5; remove p = 0.2; perturb p = 0.3; }
)");
  GrammarBody model(checked.spec, checked.mutation);
  EvoRng rng(4);
  int deepest = 0;
  // The longest chain of Limbs under a node, and each rod's length against
  // its level: 0.05 * 0.7^level * |(0.2, 1)|.
  std::function<int(const GrammarNode &)> chain = [&](const GrammarNode &n) {
    int below = 0;
    for (const auto &c : n.children)
      if (c)
        below = std::max(below, chain(*c));
    return (n.symbol == checked.spec.grammar.start ? 0 : 1) + below;
  };
  for (int i = 0; i < 300; ++i) {
    auto g = model.sampleGenome(rng);
    REQUIRE(model.check(g).empty());
    const int d = chain(g.root);
    REQUIRE(d <= 3);
    deepest = std::max(deepest, d);
    Variation v = model.vary(g, {}, rng);
    if (!v.fallback) {
      const auto &child = dynamic_cast<const GrammarGenome &>(*v.genome);
      REQUIRE(model.check(child).empty());
      REQUIRE(chain(child.root) <= 3);
    }
  }
  CHECK(deepest == 3);
  // A chain of three rods: each 0.7 times the one it hangs from.
  GrammarGenome g;
  uint64_t next = 1;
  const int limb = test::symbolIndex(checked.spec.grammar, "Limb");
  auto root = makeNode(checked.spec.grammar, checked.spec.grammar.start, 0, next);
  root->children[0] = makeNode(checked.spec.grammar, limb, 0, next);
  root->children[0]->children[0] = makeNode(checked.spec.grammar, limb, 0, next);
  root->children[0]->children[0]->children[0] = makeNode(checked.spec.grammar, limb, 0, next);
  for (auto *n = root->children[0].get(); n; n = n->children[0].get())
    n->angle = 0;
  g.root = std::move(*root);
  g.nextId = next;
  REQUIRE(model.check(g).empty());
  Phenotype ph = model.express(g);
  REQUIRE(ph.valid);
  // Points: the block's 4, then 2 new per rod (its pin is the parent's point).
  REQUIRE(ph.robot.numPoints() == 4 + 3 * 2);
  std::vector<double> lengths;
  for (const auto &s : ph.robot.springs)
    if (s.a >= 2 &&
        std::abs(s.rest - 0.05 * std::hypot(0.2, 1) * std::pow(0.7, lengths.size() + 1)) < 1e-9)
      lengths.push_back(s.rest);
  CHECK(lengths.size() == 3);
  // A fourth level is past the depth.
  g.root.children[0]->children[0]->children[0]->children[0] =
      makeNode(checked.spec.grammar, limb, 0, g.nextId);
  CHECK(model.check(g).find("exceed its depth 3") != std::string::npos);
}

TEST_CASE("hinges: a motor spring joins the levers of a pin joint, mirrored with a tied pair",
          "[grammar][joint]") {
  auto checked = test::checkGrammarBody(R"(
part torso {
  points = [(0, 0), (2, 0), (2, 1), (0, 1)];
  springs = [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2), (1, 3)];
  actuators = none;
  ports = hip_r(1, lever = 2), hip_l(0, lever = 3);
  mirror = [1, 0, 3, 2];
}
part leg {
  points = [(0, 0), (0.3, -1.2), (-0.3, -1.2)];
  springs = [(0, 1), (1, 2), (2, 0)];
  actuators = none;
  ports = top(0, lever = 1);
  mirror = [0, 2, 1];
}
grammar Biped {
  start = Body;
  Body -> torso([hip_r, hip_l]: Leg);
  Leg -> leg<top, angle = -20 .. 20>;
}
body grammar B { grammar = Biped; scale = 0.05; stiffness = 1e4; actuation = 0.2; max_parts = 3; }
)");
  GrammarBody model(checked.spec, {});
  EvoRng rng(8);
  for (int i = 0; i < 50; ++i) {
    Phenotype ph = model.express(model.sampleGenome(rng));
    REQUIRE(ph.valid);
    const auto &r = ph.robot;
    REQUIRE(r.numPoints() == 8);
    REQUIRE(r.numSprings() == 6 + 2 * 3 + 2);
    // The two motors: torso corner 2 (3) to the right (left) leg's lever,
    // actuated with the body's amplitude; every part spring is passive.
    int motors = 0;
    for (int s = 0; s < r.numSprings(); ++s) {
      const auto &sp = r.springs[size_t(s)];
      const bool motor = (ph.springKeys[size_t(s)] & 0xfff) == 0xfff;
      CHECK(sp.actuation == (motor ? 0.2 : 0.0));
      if (!motor)
        continue;
      ++motors;
      CHECK((sp.a == 2 || sp.a == 3));
      CHECK(sp.stiffness == 1e4);
      const double dx = r.points[size_t(2 * sp.a)] - r.points[size_t(2 * sp.b)];
      const double dy = r.points[size_t(2 * sp.a + 1)] - r.points[size_t(2 * sp.b + 1)];
      CHECK(std::abs(std::hypot(dx, dy) - sp.rest) < 1e-12);
    }
    CHECK(motors == 2);
  }
}

TEST_CASE("ball joints: two lever pairs give two motors in 3D", "[grammar][joint][3d]") {
  // (The refusals are docs/language.md's examples: two levers in 2D, as many
  // levers on both sides.)
  auto checked = test::checkGrammarBody(R"(
world { dim = 3; }
part block {
  points = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (0, 0, 1)];
  springs = within(1.8);
  actuators = none;
  ports = hip(1, lever = [2, 4]);
}
part leg {
  points = [(0, 0, 0), (0.3, 0.3, -1), (-0.3, 0.3, -1), (0, -0.4, -1)];
  springs = within(2);
  actuators = none;
  ports = top(0, lever = [1, 3]);
}
grammar Quad {
  start = Body;
  Body -> block(hip: Leg);
  Leg -> leg<top>;
}
body grammar B { grammar = Quad; scale = 0.05; stiffness = 1e4; actuation = 0.2; max_parts = 2; }
)");
  GrammarBody model(checked.spec, {});
  EvoRng rng(3);
  Phenotype ph = model.express(model.sampleGenome(rng));
  REQUIRE(ph.valid);
  const auto &r = ph.robot;
  REQUIRE(r.dim == 3);
  REQUIRE(r.numPoints() == 5 + 3);
  // Motors: block point 2 to the leg's lever 1 (key ...fff), block point 4
  // to the leg's lever 3 (key ...ffe); both at their placed distance.
  std::vector<std::pair<int, int>> motors;
  for (int s = 0; s < r.numSprings(); ++s) {
    const uint64_t local = ph.springKeys[size_t(s)] & 0xfff;
    if (local != 0xfff && local != 0xffe)
      continue;
    const auto &sp = r.springs[size_t(s)];
    CHECK(sp.actuation == 0.2);
    double d2 = 0;
    for (int k = 0; k < 3; ++k)
      d2 += std::pow(r.points[size_t(3 * sp.a + k)] - r.points[size_t(3 * sp.b + k)], 2);
    CHECK(std::abs(std::sqrt(d2) - sp.rest) < 1e-12);
    motors.push_back({int(local), sp.a});
  }
  REQUIRE(motors.size() == 2);
  std::sort(motors.begin(), motors.end());
  CHECK(motors[0] == std::pair{0xffe, 4});
  CHECK(motors[1] == std::pair{0xfff, 2});
}
