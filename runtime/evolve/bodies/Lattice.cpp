// Lattice geometry, repair, mutation and expression, exactly as ELDiR's
// (docs/evolution.md, "Lattice bodies").
#include "evolve/bodies/Lattice.h"

#include "support/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace evoc::evolve {

LatticeGeometry::LatticeGeometry(int rows, int cols) : rows_(rows), cols_(cols) {
  if (rows < 1 || cols < 1)
    throw Error(fmt::format("a lattice body needs at least one row and one "
                            "column of triangles; got rows = {}, cols = {}",
                            rows, cols));
  // Corners per docs/evolution.md ("Lattice bodies"), as lattice coordinates first.
  std::vector<std::array<Node, 3>> cornerNodes(rows * cols);
  std::map<Node, int> nodeIds;
  for (int y = 0; y < rows; ++y)
    for (int x = 0; x < cols; ++x) {
      auto &c = cornerNodes[y * cols + x];
      if ((x + y) % 2 == 1)
        c = {Node{x - 1, y}, Node{x + 1, y}, Node{x, y + 1}};
      else
        c = {Node{x, y}, Node{x - 1, y + 1}, Node{x + 1, y + 1}};
      for (const Node &n : c)
        nodeIds[n] = 0;
    }
  // std::map iterates in node order (x, then y): number nodes that way.
  for (auto &[n, id] : nodeIds) {
    id = int(nodes_.size());
    nodes_.push_back(n);
  }
  std::map<std::pair<int, int>, int> edgeIds;
  corners_.resize(rows * cols);
  for (int t = 0; t < rows * cols; ++t)
    for (int k = 0; k < 3; ++k)
      corners_[t][k] = nodeIds.at(cornerNodes[t][k]);
  auto pairOf = [&](int t, int i, int j) {
    int a = corners_[t][i], b = corners_[t][j];
    return std::make_pair(std::min(a, b), std::max(a, b));
  };
  static constexpr int kPairs[3][2] = {{0, 1}, {0, 2}, {1, 2}};
  for (int t = 0; t < rows * cols; ++t)
    for (auto &p : kPairs)
      edgeIds[pairOf(t, p[0], p[1])] = 0;
  for (auto &[e, id] : edgeIds) {
    id = int(edges_.size());
    edges_.push_back(e);
  }
  triEdges_.resize(rows * cols);
  for (int t = 0; t < rows * cols; ++t)
    for (int k = 0; k < 3; ++k)
      triEdges_[t][k] = edgeIds.at(pairOf(t, kPairs[k][0], kPairs[k][1]));
}

bool LatticeGeometry::pointsUp(int tri) const {
  int x = tri % cols_, y = tri / cols_;
  return (x + y) % 2 == 1;
}

LatticeMutation defaultMutation(const LatticeGeometry &g) {
  LatticeMutation m;
  m.cellRate = 1.0 / g.numTriangles();
  m.actuatorRate = 1.0 / g.numEdges();
  return m;
}

LatticeBody::LatticeBody(LatticeSpec spec) : spec_(spec), geom_(spec.rows, spec.cols) {}

bool LatticeBody::empty(const LatticeGenome &g) {
  return std::none_of(g.mask.begin(), g.mask.end(), [](uint8_t b) { return b; });
}

LatticeGenome LatticeBody::sample(EvoRng &rng) const {
  for (;;) {
    LatticeGenome g;
    g.mask.resize(geom_.numTriangles());
    g.actuation.resize(geom_.numEdges());
    for (auto &b : g.mask)
      b = rng.bernoulli(spec_.sampleCellP);
    for (auto &b : g.actuation)
      b = rng.bernoulli(spec_.sampleActuatorP);
    repair(g);
    if (!empty(g))
      return g;
    EVOC_ASSERT(spec_.sampleCellP > 0, "lattice sampling with P(cell) = 0");
  }
}

void LatticeBody::repair(LatticeGenome &g) const {
  const int n = geom_.numTriangles(), cols = geom_.cols(), rows = geom_.rows();
  EVOC_ASSERT(int(g.mask.size()) == n, "lattice mask of the wrong size");
  if (spec_.fillHoles) {
    // An edge is present when a present triangle has it; filling a triangle
    // adds no edge, so one pass reaches the fixed point.
    std::vector<uint8_t> edgePresent(geom_.numEdges(), 0);
    for (int t = 0; t < n; ++t)
      if (g.mask[t])
        for (int e : geom_.triangleEdges(t))
          edgePresent[e] = 1;
    for (int t = 0; t < n; ++t) {
      const auto &es = geom_.triangleEdges(t);
      if (!g.mask[t] && edgePresent[es[0]] && edgePresent[es[1]] && edgePresent[es[2]])
        g.mask[t] = 1;
    }
  }
  if (spec_.largestComponent) {
    std::vector<int> label(n, -1), stack;
    int best = -1, bestSize = 0, labels = 0;
    for (int s = 0; s < n; ++s) {
      if (!g.mask[s] || label[s] >= 0)
        continue;
      int size = 0;
      label[s] = labels;
      stack.assign(1, s);
      while (!stack.empty()) {
        int t = stack.back();
        stack.pop_back();
        ++size;
        int x = t % cols, y = t / cols;
        const int nb[4][2] = {{x - 1, y}, {x + 1, y}, {x, y - 1}, {x, y + 1}};
        for (auto &q : nb) {
          if (q[0] < 0 || q[0] >= cols || q[1] < 0 || q[1] >= rows)
            continue;
          int u = q[1] * cols + q[0];
          if (g.mask[u] && label[u] < 0) {
            label[u] = labels;
            stack.push_back(u);
          }
        }
      }
      if (size > bestSize) { // strictly: ties keep the first in scan order
        bestSize = size;
        best = labels;
      }
      ++labels;
    }
    for (int t = 0; t < n; ++t)
      g.mask[t] = g.mask[t] && label[t] == best;
  }
}

int LatticeBody::actuatedSprings(const LatticeGenome &g) const {
  std::vector<uint8_t> edgeUsed(geom_.numEdges(), 0);
  for (int t = 0; t < geom_.numTriangles(); ++t)
    if (g.mask[t])
      for (int e : geom_.triangleEdges(t))
        edgeUsed[e] = 1;
  int n = 0;
  for (int e = 0; e < geom_.numEdges(); ++e)
    n += edgeUsed[e] && g.actuation[e];
  return n;
}

LatticeGenome LatticeBody::mutate(const LatticeGenome &parent, const LatticeMutation &m,
                                  EvoRng &rng, LatticeMutationReport *report) const {
  LatticeMutationReport rep;
  // "Changed" means a different shape: a mask that is a translate of the
  // parent's (or, without fill-holes, differs only by a hole) expresses the
  // same points and springs and does not count.
  auto shape = [&](const LatticeGenome &g) {
    runtime::Robot r = express(g);
    std::vector<std::pair<int, int>> ends;
    for (const auto &sp : r.springs)
      ends.emplace_back(sp.a, sp.b);
    return std::make_pair(std::move(r.points), std::move(ends));
  };
  const auto parentShape = shape(parent);
  LatticeGenome child;
  double p = m.cellRate;
  for (int attempt = 0;; ++attempt) {
    rep.attempts = attempt + 1;
    child = parent;
    for (auto &b : child.mask)
      if (rng.bernoulli(p))
        b ^= 1;
    repair(child);
    bool changed = child.mask != parent.mask && !empty(child) && shape(child) != parentShape;
    if (!empty(child) && (changed || !m.untilChanged))
      break;
    if (attempt + 1 >= m.maxAttempts) { // practically unreachable: keep the body
      child = parent;
      rep.maskGaveUp = true;
      break;
    }
    if (m.untilChanged)
      p = std::min(0.5, std::max(p * m.growth, 1.0 / geom_.numTriangles()));
  }
  // A body with no actuated spring cannot move at all: redraw the flips
  // (ELDiR's rule), bounded so that a rate of 0 or a parent without any
  // actuation cannot loop forever.
  const std::vector<uint8_t> before = child.actuation;
  for (int draw = 0;; ++draw) {
    child.actuation = before;
    for (auto &b : child.actuation)
      if (rng.bernoulli(m.actuatorRate))
        b ^= 1;
    if (m.actuatorRate <= 0 || actuatedSprings(child) > 0 || draw + 1 >= std::max(1, m.maxAttempts))
      break;
    ++rep.actuationRedraws;
  }
  rep.actuationFlipped = child.actuation != parent.actuation;
  if (report)
    *report = rep;
  return child;
}

runtime::Robot LatticeBody::express(const LatticeGenome &g, std::vector<int> *nodes,
                                    std::vector<int> *edges) const {
  const int n = geom_.numTriangles();
  EVOC_ASSERT(int(g.mask.size()) == n && int(g.actuation.size()) == geom_.numEdges(),
              "lattice genome of the wrong size");
  std::vector<uint8_t> nodeUsed(geom_.numNodes(), 0), edgeUsed(geom_.numEdges(), 0);
  for (int t = 0; t < n; ++t)
    if (g.mask[t]) {
      for (int c : geom_.corners(t))
        nodeUsed[c] = 1;
      for (int e : geom_.triangleEdges(t))
        edgeUsed[e] = 1;
    }
  int minX = 1 << 30, minY = 1 << 30;
  for (int v = 0; v < geom_.numNodes(); ++v)
    if (nodeUsed[v]) {
      minX = std::min(minX, geom_.node(v).x);
      minY = std::min(minY, geom_.node(v).y);
    }
  runtime::Robot r;
  r.dim = 2;
  std::vector<int> index(geom_.numNodes(), -1);
  const double h = spec_.edge / 2, sqrt3 = std::sqrt(3.0);
  for (int v = 0; v < geom_.numNodes(); ++v) {
    if (!nodeUsed[v])
      continue;
    index[v] = r.numPoints();
    if (nodes)
      nodes->push_back(v);
    // The same operation order as ELDiR's formula (docs/evolution.md), for identical bits.
    r.points.push_back((geom_.node(v).x - minX) * h + h);
    r.points.push_back((geom_.node(v).y - minY) * sqrt3 * h + spec_.baseY);
  }
  // Node numbers follow node order and edges are sorted by node pair, so the
  // edges in number order are the springs in phenotype order.
  for (int e = 0; e < geom_.numEdges(); ++e) {
    if (!edgeUsed[e])
      continue;
    auto [a, b] = geom_.edge(e);
    if (edges)
      edges->push_back(e);
    r.springs.push_back(runtime::Spring{index[a], index[b], spec_.edge, spec_.stiffness,
                                        g.actuation[e] ? spec_.actuation : 0.0});
  }
  return r;
}

nlohmann::json LatticeBody::toJson(const LatticeGenome &g) const {
  nlohmann::json rows = nlohmann::json::array();
  for (int y = 0; y < geom_.rows(); ++y) {
    std::string s;
    for (int x = 0; x < geom_.cols(); ++x)
      s += g.mask[y * geom_.cols() + x] ? '1' : '0';
    rows.push_back(s);
  }
  std::string act;
  for (uint8_t b : g.actuation)
    act += b ? '1' : '0';
  return {{"rows", rows}, {"actuation", act}};
}

static std::vector<uint8_t> bits(const nlohmann::json &j, size_t n, const char *what) {
  if (!j.is_string() || j.get<std::string>().size() != n)
    throw Error(fmt::format("a lattice genome's {} must be a string of {} '0'/'1' "
                            "characters",
                            what, n));
  std::vector<uint8_t> out;
  for (char c : j.get<std::string>()) {
    if (c != '0' && c != '1')
      throw Error(fmt::format("a lattice genome's {} holds '{}'; only '0' and '1' "
                              "are allowed",
                              what, c));
    out.push_back(c == '1');
  }
  return out;
}

LatticeGenome LatticeBody::fromJson(const nlohmann::json &j) const {
  if (!j.is_object() || !j.contains("rows") || !j["rows"].is_array() ||
      int(j["rows"].size()) != geom_.rows() || !j.contains("actuation"))
    throw Error(fmt::format("a lattice genome must be {{\"rows\": [{} strings], "
                            "\"actuation\": string}} for this {} x {} lattice",
                            geom_.rows(), geom_.rows(), geom_.cols()));
  LatticeGenome g;
  for (const auto &row : j["rows"]) {
    auto b = bits(row, geom_.cols(), "mask row");
    g.mask.insert(g.mask.end(), b.begin(), b.end());
  }
  g.actuation = bits(j["actuation"], geom_.numEdges(), "actuation");
  return g;
}

std::vector<runtime::Robot> randomLatticeRobots(int rows, int cols, int n, uint64_t seed) {
  LatticeSpec spec;
  spec.rows = rows;
  spec.cols = cols;
  LatticeBody body(spec);
  EvoRng rng(seed);
  std::vector<runtime::Robot> out;
  for (int i = 0; i < n; ++i)
    out.push_back(body.express(body.sample(rng)));
  return out;
}

} // namespace evoc::evolve
