// Invariant checks of grammar bodies shared by the property tests (see
// GrammarChecks.h): written from the grammar's definition, not from
// GrammarBody's own checks, so a bug there cannot hide itself.
#include "GrammarChecks.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "evolve/bodies/Geometry.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <numeric>

namespace evoc::test {

using evolve::GrammarBody;
using evolve::GrammarGenome;
using evolve::GrammarNode;
using evolve::Phenotype;

const std::vector<std::string> kGrammarOps = {"add",     "remove",  "swap", "rearrange",
                                              "combine", "perturb", "flip"};

/// An independent grammaticality check (not GrammarBody::check): counts
/// placed parts with the multiplicity of tied pairs.
std::string grammatical(const body::GrammarBodySpec &s, const GrammarNode &n, int depth, int mult,
                        std::vector<int> &perSymbol, int &parts, int &cells,
                        std::set<uint64_t> &ids) {
  const auto &sym = s.grammar.symbols.at(n.symbol);
  if (n.alt < 0 || n.alt >= int(sym.alternatives.size()))
    return "alternative";
  const auto &a = sym.alternatives[n.alt];
  const auto &p = s.grammar.parts.at(a.part);
  if (!ids.insert(n.id).second)
    return "duplicate id";
  if (s.maxDepth && depth > s.maxDepth)
    return "depth";
  if (n.params.size() != p.params.size() || n.genes.size() != p.genes.size())
    return "gene counts";
  for (size_t i = 0; i < p.params.size(); ++i)
    if (n.params[i] < p.params[i].lo || n.params[i] > p.params[i].hi)
      return "param range";
  if (a.hasAngle && (n.angle < a.angleLo || n.angle > a.angleHi))
    return "angle range";
  if (n.children.size() != a.bindings.size())
    return "children";
  parts += mult;
  // A part without cells is one cell: its convex hull.
  cells += mult * std::max<int>(1, int(p.cells.size()));
  perSymbol[n.symbol] += mult;
  for (size_t b = 0; b < a.bindings.size(); ++b) {
    if (!n.children[b]) {
      if (!a.bindings[b].optional)
        return "required slot empty";
      continue;
    }
    if (n.children[b]->symbol != a.bindings[b].symbol)
      return "child symbol";
    auto e = grammatical(s, *n.children[b], depth + 1, mult * int(a.bindings[b].ports.size()),
                         perSymbol, parts, cells, ids);
    if (!e.empty())
      return e;
  }
  return "";
}

/// Area of the intersection of two convex polygons (Sutherland-Hodgman).
double intersectionArea(std::vector<std::array<double, 2>> subject,
                        std::vector<std::array<double, 2>> clip) {
  auto area = [](const std::vector<std::array<double, 2>> &p) {
    double a = 0;
    for (size_t i = 0; i < p.size(); ++i) {
      const auto &u = p[i], &v = p[(i + 1) % p.size()];
      a += u[0] * v[1] - u[1] * v[0];
    }
    return a / 2;
  };
  if (area(clip) < 0)
    std::reverse(clip.begin(), clip.end());
  for (size_t i = 0; i < clip.size() && !subject.empty(); ++i) {
    auto a = clip[i], b = clip[(i + 1) % clip.size()];
    auto side = [&](const std::array<double, 2> &p) {
      return (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]);
    };
    std::vector<std::array<double, 2>> out;
    for (size_t j = 0; j < subject.size(); ++j) {
      auto p = subject[j], q = subject[(j + 1) % subject.size()];
      double sp = side(p), sq = side(q);
      if (sp >= 0)
        out.push_back(p);
      if ((sp >= 0) != (sq >= 0)) {
        double t = sp / (sp - sq);
        out.push_back({p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])});
      }
    }
    subject = out;
  }
  return subject.size() < 3 ? 0 : std::fabs(area(subject));
}

namespace {
int findRoot(std::vector<int> &u, int x) {
  while (u[x] != x)
    x = u[x] = u[u[x]];
  return x;
}
} // namespace

/// Every property a child must have; returns the first failure ("" if none).
std::string properties(const GrammarBody &b, const GrammarGenome &g) {
  const auto &s = b.spec();
  std::vector<int> perSymbol(s.grammar.symbols.size(), 0);
  int parts = 0, cells = 0;
  std::set<uint64_t> ids;
  if (g.root.symbol != s.grammar.start)
    return "root symbol";
  if (auto e = grammatical(s, g.root, 0, 1, perSymbol, parts, cells, ids); !e.empty())
    return "ungrammatical: " + e;
  if (*ids.rbegin() >= g.nextId)
    return "next_id";
  if (s.maxParts && parts > s.maxParts)
    return "max_parts";
  for (size_t i = 0; i < perSymbol.size(); ++i)
    if (s.grammar.symbols[i].limit >= 0 && perSymbol[i] > s.grammar.symbols[i].limit)
      return "symbol limit";
  // The stored genome is the pruned one: pruning again changes nothing.
  if (b.toJson(b.prune(g)) != b.toJson(g))
    return "genome not pruned";
  Phenotype ph = b.expressExact(g);
  if (!ph.valid)
    return "invalid: " + ph.reason;
  const auto &r = ph.robot;
  int n = r.numPoints();
  if (s.maxPoints && n > s.maxPoints)
    return "max_points";
  if (s.maxSprings && r.numSprings() > s.maxSprings)
    return "max_springs";
  if (int(ph.pointKeys.size()) != n || int(ph.springKeys.size()) != r.numSprings())
    return "provenance sizes";
  double minX = 1e300, minY = 1e300;
  for (int i = 0; i < n; ++i) {
    if (!std::isfinite(r.points[i * 2]) || !std::isfinite(r.points[i * 2 + 1]))
      return "not finite";
    minX = std::min(minX, r.points[i * 2]), minY = std::min(minY, r.points[i * 2 + 1]);
  }
  if (std::fabs(minX) > 1e-12 || std::fabs(minY - s.groundY) > 1e-12)
    return "not lifted";
  std::vector<int> uf(n);
  std::iota(uf.begin(), uf.end(), 0);
  std::set<std::pair<int, int>> seen;
  for (const auto &sp : r.springs) {
    double d = std::hypot(r.points[sp.a * 2] - r.points[sp.b * 2],
                          r.points[sp.a * 2 + 1] - r.points[sp.b * 2 + 1]);
    if (std::fabs(d - sp.rest) > 1e-12 || !(sp.rest > 0))
      return "rest length";
    if (!seen.insert({std::min(sp.a, sp.b), std::max(sp.a, sp.b)}).second)
      return "duplicate spring";
    uf[findRoot(uf, sp.a)] = findRoot(uf, sp.b);
  }
  for (int i = 0; i < n; ++i)
    if (findRoot(uf, i) != findRoot(uf, 0))
      return "disconnected";
  // Brute-force overlap: pairwise intersection area of the part outlines.
  std::vector<std::vector<std::array<double, 2>>> polys;
  for (const auto &o : ph.outlines) {
    std::vector<std::array<double, 2>> p;
    for (int i : o.points)
      p.push_back({r.points[i * 2], r.points[i * 2 + 1]});
    polys.push_back(p);
  }
  if (int(polys.size()) != cells)
    return "outline count";
  for (size_t i = 0; i < polys.size(); ++i)
    for (size_t j = i + 1; j < polys.size(); ++j)
      if (intersectionArea(polys[i], polys[j]) > 1e-6 * s.scale * s.scale)
        return "parts overlap";
  return "";
}

// Tied pairs are the bindings with two ports; their subtree is placed twice.
std::string mirrored(const GrammarBody &b, const GrammarGenome &g, const Phenotype &ph) {
  std::map<uint64_t, std::array<double, 2>> byKey;
  for (size_t i = 0; i < ph.pointKeys.size(); ++i)
    byKey[ph.pointKeys[i]] = {ph.robot.points[i * 2], ph.robot.points[i * 2 + 1]};
  std::vector<const GrammarNode *> stack{&g.root};
  while (!stack.empty()) {
    const GrammarNode *n = stack.back();
    stack.pop_back();
    const auto &a = b.spec().grammar.symbols[n->symbol].alternatives[n->alt];
    for (size_t c = 0; c < n->children.size(); ++c) {
      if (!n->children[c])
        continue;
      stack.push_back(n->children[c].get());
      if (a.bindings[c].ports.size() != 2)
        continue;
      std::vector<double> src, dst;
      std::vector<const GrammarNode *> sub{n->children[c].get()};
      while (!sub.empty()) {
        const GrammarNode *m = sub.back();
        sub.pop_back();
        for (const auto &x : m->children)
          if (x)
            sub.push_back(x.get());
        for (int i = 0; i < 64; ++i) {
          auto k0 = byKey.find((m->id << 20) | uint64_t(i));
          auto k1 = byKey.find((m->id << 20) | (1u << 12) | uint64_t(i));
          if (k0 != byKey.end() && k1 != byKey.end()) {
            src.insert(src.end(), k0->second.begin(), k0->second.end());
            dst.insert(dst.end(), k1->second.begin(), k1->second.end());
          }
        }
      }
      if (src.size() < 6)
        continue;
      double res = 1;
      evolve::geom::fit(2, src.data(), dst.data(), int(src.size() / 2), -1, &res);
      if (res > 1e-9)
        return "tied subtree is not a mirror image";
    }
  }
  return "";
}

std::string mutateAndCheck(const std::string &label, const GrammarBody &b, bool evolving, int pool,
                           int iters, uint64_t seed, PropertyTotals &t) {
  evolve::EvoRng rng(seed);
  std::vector<evolve::GenomePtr> pop;
  for (int i = 0; i < pool; ++i)
    pop.push_back(b.sample(rng));
  for (const auto &g : pop)
    if (auto e = properties(b, dynamic_cast<const GrammarGenome &>(*g)); !e.empty())
      return label + " sample: " + e + "\n  sample " + b.toJson(*g).dump();
  std::vector<const evolve::Genome *> donors;
  long fallbacks = 0;
  for (int it = 0; it < iters; ++it) {
    int pi = int(rng.below(pop.size()));
    donors.clear();
    for (const auto &d : pop)
      donors.push_back(d.get());
    evolve::Variation v = b.vary(*pop[pi], donors, rng);
    ++t.mutations;
    fallbacks += v.fallback;
    for (const auto &op : v.ops)
      ++t.applied[op];
    const auto &child = dynamic_cast<const GrammarGenome &>(*v.genome);
    std::string e = properties(b, child);
    if (e.empty())
      e = mirrored(b, child, b.express(child));
    if (!e.empty())
      return label + ": " + e + "\n  parent " + b.toJson(*pop[pi]).dump() + "\n  child " +
             b.toJson(child).dump();
    if (evolving)
      pop[rng.below(pop.size())] = v.genome;
  }
  std::cout << label << ": fallback rate " << double(fallbacks) / iters << " (" << fallbacks
            << " of " << iters << ")\n";
  return "";
}

int symbolIndex(const body::GrammarSpec &g, const std::string &name) {
  for (size_t i = 0; i < g.symbols.size(); ++i)
    if (g.symbols[i].name == name)
      return int(i);
  FAIL("no symbol " << name);
  return -1;
}

std::string variationBytes(const evolve::GrammarBody &b, uint64_t seed, bool robots) {
  evolve::EvoRng rng(seed);
  std::string out;
  evolve::GenomePtr g = b.sample(rng);
  evolve::GenomePtr donor = b.sample(rng);
  for (int i = 0; i < 200; ++i) {
    g = b.vary(*g, {donor.get()}, rng).genome;
    out += b.toJson(*g).dump();
    if (!robots)
      continue;
    const auto r = b.express(*g).robot;
    out.append(reinterpret_cast<const char *>(r.points.data()), r.points.size() * sizeof(double));
    for (const auto &sp : r.springs)
      out += fmt::format("{} {} {:a} {:a} {:a};", sp.a, sp.b, sp.rest, sp.stiffness, sp.actuation);
  }
  return out;
}

} // namespace evoc::test
