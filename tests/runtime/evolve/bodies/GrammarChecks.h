// Independent invariant checks of grammar bodies, shared by the fixture and
// the stdlib property tests: grammaticality, the properties every expressed
// child must have, brute-force overlap and mirrored tied subtrees.
#pragma once

#include "evolve/bodies/GrammarBody.h"

#include <array>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace evoc::test {

/// The operators of `mutation { ... }`, in the order the tests report them.
extern const std::vector<std::string> kGrammarOps;

/// An independent grammaticality check of the subtree `n` (not
/// GrammarBody::check): counts placed parts with the multiplicity of tied
/// pairs into `perSymbol` and `parts`, their cells (the outlines expression
/// draws) into `cells`, node ids into `ids`. "" if grammatical.
std::string grammatical(const body::GrammarBodySpec &s, const evolve::GrammarNode &n, int depth,
                        int mult, std::vector<int> &perSymbol, int &parts, int &cells,
                        std::set<uint64_t> &ids);

/// Area of the intersection of two convex polygons (Sutherland-Hodgman).
double intersectionArea(std::vector<std::array<double, 2>> subject,
                        std::vector<std::array<double, 2>> clip);

/// Every property a stored child must have: grammatical within the limits,
/// pruned, valid when expressed exactly, finite, lifted, connected, rest
/// lengths equal to the assembled distances, no duplicate spring, parts
/// one outline per cell, cells pairwise overlap-free. Returns the first
/// failure ("" if none).
std::string properties(const evolve::GrammarBody &b, const evolve::GrammarGenome &g);

/// Every tied subtree's mirrored copy (in `ph`, the expression of g) is a
/// reflection of the first copy; "" if so.
std::string mirrored(const evolve::GrammarBody &b, const evolve::GrammarGenome &g,
                     const evolve::Phenotype &ph);

/// The index of the grammar's symbol `name`; fails the test if it has none.
int symbolIndex(const body::GrammarSpec &g, const std::string &name);

/// The bytes of 200 variations of one sample of `b` by EvoRng(seed) (a second
/// sample the donor): each child's genome JSON and, with `robots`, its
/// expressed points and springs to the last bit. For determinism checks.
std::string variationBytes(const evolve::GrammarBody &b, uint64_t seed, bool robots);

/// What a run of mutateAndCheck adds up.
struct PropertyTotals {
  long mutations = 0;
  std::map<std::string, long> applied; ///< per operator: children it acted on
};

/// Samples `pool` genomes of `b` (seed `seed`) and varies them `iters` times
/// (donors: the whole pool), checking properties() of every sample and child
/// and mirrored() of every child. When `evolving`, each child replaces a
/// random member (a drifting population); otherwise the pool stays fixed, so
/// the fallback rate is the operator's own. Prints "<label>: fallback rate"
/// to stdout, adds into `t`, and returns "" or the first failure with the
/// genomes involved.
std::string mutateAndCheck(const std::string &label, const evolve::GrammarBody &b, bool evolving,
                           int pool, int iters, uint64_t seed, PropertyTotals &t);

} // namespace evoc::test
