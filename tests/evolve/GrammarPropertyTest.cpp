// Grammar body properties over random genomes and random mutations of every
// fixture: grammatical (checked independently), connected, within limits,
// overlap-free (polygon clipping), finite, rest lengths equal distances,
// lifted; sampling follows the weights; same seed, same bytes; tied legs stay
// mirror images. Prints fallback rates per operator and timings.
#include "GrammarFixtures.h"

#include "evolve/Geometry.h"
#include "evolve/GrammarBody.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <numeric>
#include <set>

using namespace evoc;
using namespace evoc::evolve;

namespace {

/// An independent grammaticality check (not GrammarBody::check): counts
/// placed parts with the multiplicity of tied pairs.
std::string grammatical(const body::GrammarBodySpec &s, const GrammarNode &n, int depth, int mult,
                        std::vector<int> &perSymbol, int &parts, std::set<uint64_t> &ids) {
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
                         perSymbol, parts, ids);
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

int findRoot(std::vector<int> &u, int x) {
  while (u[x] != x)
    x = u[x] = u[u[x]];
  return x;
}

/// Every property a child must have; returns the first failure ("" if none).
std::string properties(const GrammarBody &b, const GrammarGenome &g) {
  const auto &s = b.spec();
  std::vector<int> perSymbol(s.grammar.symbols.size(), 0);
  int parts = 0;
  std::set<uint64_t> ids;
  if (g.root.symbol != s.grammar.start)
    return "root symbol";
  if (auto e = grammatical(s, g.root, 0, 1, perSymbol, parts, ids); !e.empty())
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
  if (int(polys.size()) != parts)
    return "outline count";
  for (size_t i = 0; i < polys.size(); ++i)
    for (size_t j = i + 1; j < polys.size(); ++j)
      if (intersectionArea(polys[i], polys[j]) > 1e-6 * s.scale * s.scale)
        return "parts overlap";
  return "";
}

/// Walker: every tied leg subtree's mirrored copy is a reflection of the first.
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
      geom::fit(2, src.data(), dst.data(), int(src.size() / 2), -1, &res);
      if (res > 1e-9)
        return "tied subtree is not a mirror image";
    }
  }
  return "";
}

const std::vector<std::string> kOps = {"add",     "remove",  "swap", "rearrange",
                                       "combine", "perturb", "flip"};

} // namespace

TEST_CASE("grammar property: random genomes x random mutations keep every invariant",
          "[grammar][property]") {
  long total = 0;
  std::map<std::string, long> applied;
  for (auto &[name, spec] : test::allGrammars()) {
    // Mixed rates plus one model per operator alone, for the fallback rates.
    std::vector<std::pair<std::string, body::GrammarMutationSpec>> models = {
        {"mixed", test::mixedMutation()}};
    for (const auto &op : kOps)
      models.push_back({op, test::onlyMutation(op)});
    for (auto &[label, mut] : models) {
      GrammarBody b(spec, mut);
      EvoRng rng(1234);
      // The mixed run evolves its population (children replace members); an
      // operator alone acts on a fixed pool of random genomes, so its fallback
      // rate is the operator's and not that of a drifted population.
      bool evolving = label == "mixed";
      std::vector<GenomePtr> pop;
      for (int i = 0; i < (evolving ? 16 : 48); ++i)
        pop.push_back(b.sample(rng));
      for (const auto &g : pop) {
        INFO(name << " sample: " << b.toJson(*g).dump());
        REQUIRE(properties(b, dynamic_cast<const GrammarGenome &>(*g)) == "");
      }
      int iters = evolving ? 8000 : 2500;
      long fallbacks = 0;
      for (int it = 0; it < iters; ++it) {
        int pi = int(rng.below(pop.size()));
        std::vector<const Genome *> donors;
        for (const auto &d : pop)
          donors.push_back(d.get());
        Variation v = b.vary(*pop[pi], donors, rng);
        ++total;
        fallbacks += v.fallback;
        for (const auto &op : v.ops)
          ++applied[op];
        const auto &child = dynamic_cast<const GrammarGenome &>(*v.genome);
        std::string e = properties(b, child);
        if (e.empty() && name == "walker")
          e = mirrored(b, child, b.express(child));
        if (!e.empty()) {
          INFO(name << "/" << label << " child of " << b.toJson(*pop[pi]).dump());
          INFO("child " << b.toJson(child).dump());
          REQUIRE(e == "");
        }
        if (evolving)
          pop[rng.below(pop.size())] = v.genome;
      }
      std::cout << "grammar " << name << " / " << label << ": fallback rate "
                << double(fallbacks) / iters << " (" << fallbacks << " of " << iters << ")\n";
    }
  }
  std::cout << "grammar property: " << total << " mutations\n";
  CHECK(total >= 100000);
  for (const auto &op : kOps) {
    INFO(op);
    CHECK(applied[op] > 0);
  }
}

TEST_CASE("grammar property: sampling follows the weights (chi-square)", "[grammar][property]") {
  GrammarBody b(test::voxelGrammar(), test::mixedMutation());
  EvoRng rng(99);
  std::vector<int> counts(4, 0);
  const int n = 8000;
  for (int i = 0; i < n; ++i)
    ++counts[b.sampleGenome(rng).root.alt];
  double chi = 0;
  for (int k = 0; k < 4; ++k) {
    double expect = n * (k + 1) / 10.0;
    chi += (counts[k] - expect) * (counts[k] - expect) / expect;
  }
  INFO(counts[0] << " " << counts[1] << " " << counts[2] << " " << counts[3]);
  CHECK(chi < 16.27); // 3 degrees of freedom, p = 0.001
}

TEST_CASE("grammar property: the same seed gives the same bytes", "[grammar][property]") {
  for (auto &[name, spec] : test::allGrammars()) {
    auto run = [&, &spec = spec] {
      GrammarBody b(spec, test::mixedMutation());
      EvoRng rng(42);
      std::string out;
      GenomePtr g = b.sample(rng);
      GenomePtr donor = b.sample(rng);
      for (int i = 0; i < 200; ++i) {
        g = b.vary(*g, {donor.get()}, rng).genome;
        out += b.toJson(*g).dump();
      }
      return out;
    };
    INFO(name);
    CHECK(run() == run());
  }
}

TEST_CASE("grammar property: express and vary timings for a ~60-point body",
          "[grammar][property]") {
  GrammarBody b(test::voxelGrammar(), test::mixedMutation());
  EvoRng rng(5);
  GrammarGenome best;
  int bestPts = 0;
  for (int i = 0; i < 400; ++i) {
    GrammarGenome g = b.sampleGenome(rng);
    int np = b.express(g).robot.numPoints();
    if (std::abs(np - 60) < std::abs(bestPts - 60))
      best = g, bestPts = np;
  }
  using clk = std::chrono::steady_clock;
  const int reps = 300;
  auto t0 = clk::now();
  int sink = 0;
  for (int i = 0; i < reps; ++i)
    sink += b.express(best).robot.numSprings();
  auto t1 = clk::now();
  for (int i = 0; i < reps; ++i)
    sink += int(b.vary(best, {&best}, rng).attempts);
  auto t2 = clk::now();
  double ex = std::chrono::duration<double, std::micro>(t1 - t0).count() / reps;
  double va = std::chrono::duration<double, std::micro>(t2 - t1).count() / reps;
  std::cout << "grammar timing: body of " << bestPts << " points: express " << ex
            << " us/call, vary " << va << " us/call\n";
  CHECK(sink > 0);
}
