// Property test of the four stdlib grammars as the checker reads them (the
// walker exactly as examples/grammar_walker.evo declares it): random genomes
// x random mutations keep every invariant of GrammarChecks.h; sampling
// follows the `@ w` weights (chi-square); the same seed gives the same bytes;
// the canonical hash of their robots ignores labels and translation and
// tells mirror images apart. Prints the fallback rate of every operator.
#include "GrammarChecks.h"
#include "GrammarFixtures.h"
#include "StdlibBodies.h"

#include "evolve/bodies/GrammarBody.h"
#include "evolve/engine/CanonicalHash.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

using namespace evoc;
using namespace evoc::evolve;

namespace {

/// Chi-square statistic of the alternatives drawn for `symbol` by unbounded
/// sampling (the whole budget left) against `weights`, over `n` draws.
double chiSquare(const GrammarBody &b, int symbol, const std::vector<double> &weights, int n,
                 uint64_t seed) {
  EvoRng rng(seed);
  std::vector<int> counts(weights.size(), 0);
  GrammarCost none;
  for (int i = 0; i < n; ++i) {
    GrammarGenome g;
    int depth = b.spec().maxDepth > 0 ? b.spec().maxDepth : 64;
    ++counts.at(size_t(b.sampleSubtree(symbol, b.remaining(none), depth, g, rng, false).alt));
  }
  double total = 0, chi = 0;
  for (double w : weights)
    total += w;
  for (size_t k = 0; k < weights.size(); ++k) {
    double expect = n * weights[k] / total;
    chi += (counts[k] - expect) * (counts[k] - expect) / expect;
    UNSCOPED_INFO("alternative " << k << ": " << counts[k] << " drawn, " << expect << " expected");
  }
  return chi;
}

/// The robot as a set of springs between quantised, translated coordinates
/// (the lowest-left point at the origin): equal for equal robots whatever
/// their labels, written without CanonicalHash as the reference.
std::set<std::tuple<long, long, long, long, double, double, double>>
springSet(const runtime::Robot &r) {
  double minX = 1e300, minY = 1e300;
  for (int i = 0; i < r.numPoints(); ++i)
    minX = std::min(minX, r.points[size_t(2 * i)]),
    minY = std::min(minY, r.points[size_t(2 * i + 1)]);
  auto q = [](double v) { return std::lround(v * 1e6); };
  std::set<std::tuple<long, long, long, long, double, double, double>> out;
  for (const auto &sp : r.springs) {
    std::pair<long, long> a{q(r.points[size_t(2 * sp.a)] - minX),
                            q(r.points[size_t(2 * sp.a + 1)] - minY)};
    std::pair<long, long> b{q(r.points[size_t(2 * sp.b)] - minX),
                            q(r.points[size_t(2 * sp.b + 1)] - minY)};
    if (b < a)
      std::swap(a, b);
    out.insert({a.first, a.second, b.first, b.second, sp.stiffness, sp.actuation,
                std::round(sp.rest * 1e6)});
  }
  return out;
}

} // namespace

TEST_CASE("stdlib grammar property: random genomes x random mutations keep every invariant",
          "[grammar][property][stdlib]") {
  test::PropertyTotals all;
  for (auto &[name, body] : test::stdlibBodies()) {
    // The .evo's own mutation block on an evolving population, then each
    // operator alone on a fixed pool (its own fallback rate).
    std::vector<std::pair<std::string, body::GrammarMutationSpec>> models = {
        {"mixed", body.mutation}};
    for (const auto &op : test::kGrammarOps)
      models.push_back({op, test::onlyMutation(op)});
    test::PropertyTotals t;
    for (auto &[label, mut] : models) {
      bool evolving = label == "mixed";
      std::string e =
          test::mutateAndCheck("stdlib " + name + " / " + label, GrammarBody(body.spec, mut),
                               evolving, evolving ? 16 : 48, evolving ? 4000 : 3000, 4321, t);
      REQUIRE(e == "");
    }
    INFO(name);
    CHECK(t.mutations >= 25000);
    // Operators that can act on this grammar did: perturb needs a part
    // parameter or an angle, swap a symbol with two alternatives.
    for (const auto &op : {"add", "remove", "rearrange", "combine", "flip"}) {
      INFO(op);
      CHECK(t.applied[op] > 0);
    }
    all.mutations += t.mutations;
    for (const auto &[op, n] : t.applied)
      all.applied[op] += n;
  }
  std::cout << "stdlib grammar property: " << all.mutations << " mutations\n";
  for (const auto &op : test::kGrammarOps) {
    INFO(op);
    CHECK(all.applied[op] > 0);
  }
}

namespace {

/// `symbol`'s alternatives carry `weights`, and sampling follows them: the
/// chi-square statistic stays under `critical` (p = 0.001 at the degrees of
/// freedom), and a uniform draw would exceed it (the test has power).
void checkWeights(const test::CheckedBody &body, const std::string &symbol,
                  const std::vector<double> &weights, double critical, uint64_t seed) {
  GrammarBody b(body.spec, body.mutation);
  int sym = test::symbolIndex(b.spec().grammar, symbol);
  std::vector<double> w;
  for (const auto &a : b.spec().grammar.symbols[size_t(sym)].alternatives)
    w.push_back(a.weight);
  REQUIRE(w == weights);
  CHECK(chiSquare(b, sym, w, 6000, seed) < critical);
  CHECK(chiSquare(b, sym, std::vector<double>(w.size(), 1.0), 6000, seed) > critical);
}

} // namespace

TEST_CASE("stdlib grammar property: sampling follows the weights (chi-square)",
          "[grammar][property][stdlib]") {
  auto bodies = test::stdlibBodies();
  std::map<std::string, test::CheckedBody> byName(bodies.begin(), bodies.end());
  // Leg -> segment(bottom: Leg?) @ 2 | segment(bottom: Foot) | foot: 2 degrees of freedom.
  checkWeights(byName.at("walker"), "Leg", {2, 1, 1}, 13.82, 17);
  // Limb -> segment(top, knob) @ 2 | block(top, right, left) | taper(knob).
  checkWeights(byName.at("limb"), "Limb", {2, 1, 1}, 13.82, 18);
}

TEST_CASE("stdlib grammar property: the same seed gives the same bytes",
          "[grammar][property][stdlib]") {
  for (auto &[name, body] : test::stdlibBodies()) {
    GrammarBody b1(body.spec, body.mutation), b2(body.spec, body.mutation);
    INFO(name);
    const std::string bytes = test::variationBytes(b1, 42, true);
    CHECK(bytes == test::variationBytes(b2, 42, true));
    CHECK(bytes != test::variationBytes(b2, 43, true));
  }
}

TEST_CASE("stdlib grammar property: the hash ignores labels and translation, tells mirror images "
          "apart",
          "[grammar][property][stdlib]") {
  int asymmetric = 0, symmetric = 0;
  for (auto &[name, body] : test::stdlibBodies()) {
    GrammarBody b(body.spec, body.mutation);
    EvoRng rng(77);
    for (int i = 0; i < 150; ++i) {
      runtime::Robot r = b.express(*b.sample(rng)).robot;
      INFO(name << " body " << i << " of " << r.numPoints() << " points");
      CanonicalKey k = canonicalKey(r);
      // Relabelled by a random permutation, springs reversed and reordered.
      std::vector<int> perm(size_t(r.numPoints()));
      std::iota(perm.begin(), perm.end(), 0);
      for (size_t j = perm.size(); j > 1; --j)
        std::swap(perm[j - 1], perm[rng.below(j)]);
      runtime::Robot o = r;
      for (int p = 0; p < r.numPoints(); ++p)
        for (int c = 0; c < 2; ++c)
          o.points[size_t(perm[size_t(p)] * 2 + c)] = r.points[size_t(p * 2 + c)];
      for (auto &sp : o.springs)
        sp = {perm[size_t(sp.b)], perm[size_t(sp.a)], sp.rest, sp.stiffness, sp.actuation};
      std::reverse(o.springs.begin(), o.springs.end());
      CHECK(canonicalKey(o) == k);
      // Translated: the key moves the bounding-box minimum to the origin.
      runtime::Robot t = r;
      for (int p = 0; p < t.numPoints(); ++p)
        t.points[size_t(2 * p)] += 0.375, t.points[size_t(2 * p + 1)] += 0.5;
      CHECK(canonicalKey(t) == k);
      // Mirrored (x -> -x): the same key exactly when the body is
      // mirror-symmetric by the independent spring-set comparison.
      runtime::Robot m = r;
      for (int p = 0; p < m.numPoints(); ++p)
        m.points[size_t(2 * p)] = -m.points[size_t(2 * p)];
      bool same = springSet(m) == springSet(r);
      (same ? symmetric : asymmetric) += 1;
      CHECK((canonicalKey(m) == k) == same);
    }
  }
  std::cout << "stdlib hash: " << asymmetric << " asymmetric, " << symmetric
            << " mirror-symmetric bodies\n";
  CHECK(asymmetric > 100);
}
