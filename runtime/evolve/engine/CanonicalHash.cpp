// The canonical form of a phenotype and its 128-bit hash (CanonicalHash.h).
#include "evolve/engine/CanonicalHash.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <tuple>

namespace evoc::evolve {

namespace {

int64_t quantise(double v, double quantum) {
  double q = std::nearbyint(v / quantum);
  // Non-finite or huge values still get a fixed, distinct-enough code.
  if (!std::isfinite(q) || std::abs(q) > 9e18)
    return std::isnan(q) ? std::numeric_limits<int64_t>::min() : q > 0 ? INT64_MAX : INT64_MIN + 1;
  return int64_t(q);
}

// Exact bits of a setting (stiffness, actuation), with -0 read as +0.
uint64_t exactBits(double v) {
  if (v == 0)
    v = 0;
  uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

void put(std::string &out, uint64_t w) {
  for (int i = 0; i < 8; ++i)
    out.push_back(char((w >> (8 * i)) & 0xff));
}

// One pass of a seeded word hash: every 8-byte word is folded in through
// SplitMix64's finaliser (a well-tested mixer, not a cryptographic hash).
uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t hashBytes(const std::string &bytes, uint64_t seed, uint64_t mult) {
  uint64_t h = mix(seed ^ bytes.size());
  for (size_t i = 0; i < bytes.size(); i += 8) {
    uint64_t w = 0;
    for (size_t k = 0; k < 8 && i + k < bytes.size(); ++k)
      w |= uint64_t(uint8_t(bytes[i + k])) << (8 * k);
    h = mix(h ^ (w * mult)) + 0x9e3779b97f4a7c15ull;
  }
  return mix(h);
}

} // namespace

std::string CanonicalKey::hex() const { return fmt::format("{:016x}{:016x}", hi, lo); }

CanonicalKey canonicalKey(const runtime::Robot &r, double quantum) {
  const int dim = r.dim, n = r.numPoints();
  // Translate to the bounding-box minimum, then quantise.
  std::vector<double> lo(size_t(dim), std::numeric_limits<double>::infinity());
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < dim; ++c)
      lo[size_t(c)] = std::min(lo[size_t(c)], r.points[size_t(i * dim + c)]);
  std::vector<int64_t> q(size_t(n * dim));
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < dim; ++c)
      q[size_t(i * dim + c)] = quantise(r.points[size_t(i * dim + c)] - lo[size_t(c)], quantum);
  // Points sorted by their quantised coordinates; `label[old] = new`.
  // (Two points on one quantised position keep their input order: only a
  // broken body has such points, and then the key may depend on labels.)
  std::vector<int> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return std::lexicographical_compare(q.begin() + a * dim, q.begin() + (a + 1) * dim,
                                        q.begin() + b * dim, q.begin() + (b + 1) * dim);
  });
  std::vector<int> label(static_cast<size_t>(n));
  for (int k = 0; k < n; ++k)
    label[size_t(order[size_t(k)])] = k;
  using SpringKey = std::tuple<int, int, int64_t, uint64_t, uint64_t>;
  std::vector<SpringKey> springs;
  springs.reserve(r.springs.size());
  for (const auto &s : r.springs) {
    int a = label[size_t(s.a)], b = label[size_t(s.b)];
    springs.emplace_back(std::min(a, b), std::max(a, b), quantise(s.rest, quantum),
                         exactBits(s.stiffness), exactBits(s.actuation));
  }
  std::sort(springs.begin(), springs.end());

  CanonicalKey key;
  key.bytes.reserve(size_t(24 + 8 * n * dim + 40 * springs.size()));
  put(key.bytes, uint64_t(dim));
  put(key.bytes, uint64_t(n));
  for (int k = 0; k < n; ++k)
    for (int c = 0; c < dim; ++c)
      put(key.bytes, uint64_t(q[size_t(order[size_t(k)] * dim + c)]));
  put(key.bytes, uint64_t(springs.size()));
  for (const auto &[a, b, rest, stiff, act] : springs) {
    put(key.bytes, uint64_t(a) | uint64_t(b) << 32);
    put(key.bytes, uint64_t(rest));
    put(key.bytes, stiff);
    put(key.bytes, act);
  }
  key.hi = hashBytes(key.bytes, 0x243f6a8885a308d3ull, 0xff51afd7ed558ccdull);
  key.lo = hashBytes(key.bytes, 0x13198a2e03707344ull, 0xc4ceb9fe1a85ec53ull);
  return key;
}

} // namespace evoc::evolve
