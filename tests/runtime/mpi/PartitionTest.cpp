// Chunks balanced by body size (mpi/Partition.h): every item in exactly one
// chunk, in increasing order; greedy longest-processing-time; the same
// answer every time.
#include <catch2/catch.hpp>

#include "mpi/Partition.h"
#include "support/Error.h"

#include <numeric>

using evoc::mpi::balanceByCost;

namespace {

double load(const std::vector<size_t> &chunk, const std::vector<double> &costs) {
  double s = 0;
  for (size_t i : chunk)
    s += costs[i];
  return s;
}

} // namespace

TEST_CASE("balanceByCost: LPT on a known example", "[mpi]") {
  // Sorted: 9 (item 2), 7 (0), 5 (4), 4 (1), 3 (3), 3 (5). Two chunks:
  // 9 -> A, 7 -> B, 5 -> B (12), 4 -> A (13), 3 -> B (15), 3 -> A (16).
  std::vector<double> costs = {7, 4, 9, 3, 5, 3};
  auto chunks = balanceByCost(costs, 2);
  REQUIRE(chunks.size() == 2);
  CHECK(chunks[0] == std::vector<size_t>{1, 2, 5});
  CHECK(chunks[1] == std::vector<size_t>{0, 3, 4});
  CHECK(load(chunks[0], costs) == 16);
  CHECK(load(chunks[1], costs) == 15);
}

TEST_CASE("balanceByCost: every item once, sorted, balanced within the largest item", "[mpi]") {
  std::vector<double> costs;
  for (int i = 0; i < 97; ++i)
    costs.push_back(double((i * 37) % 53 + 5)); // 5 .. 57
  for (int parts : {1, 2, 3, 7, 100}) {
    auto chunks = balanceByCost(costs, parts);
    REQUIRE(int(chunks.size()) == parts);
    std::vector<int> seen(costs.size(), 0);
    double lo = 1e300, hi = 0;
    for (const auto &c : chunks) {
      CHECK(std::is_sorted(c.begin(), c.end()));
      for (size_t i : c)
        ++seen[i];
      lo = std::min(lo, load(c, costs));
      hi = std::max(hi, load(c, costs));
    }
    CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
    // LPT's guarantee: no chunk exceeds another by more than the largest item.
    if (parts <= int(costs.size()))
      CHECK(hi - lo <= 57);
    CHECK(balanceByCost(costs, parts) == chunks);
  }
}

TEST_CASE("balanceByCost: equal costs go round in index order; ties to the lower chunk", "[mpi]") {
  auto chunks = balanceByCost({1, 1, 1, 1, 1}, 3);
  CHECK(chunks[0] == std::vector<size_t>{0, 3});
  CHECK(chunks[1] == std::vector<size_t>{1, 4});
  CHECK(chunks[2] == std::vector<size_t>{2});
  CHECK(balanceByCost({}, 2) == std::vector<std::vector<size_t>>(2));
  CHECK_THROWS_AS(balanceByCost({1}, 0), evoc::Error);
}

TEST_CASE("robotCost: points plus springs", "[mpi]") {
  evoc::runtime::Robot r;
  r.points = {0, 0, 1, 0, 0, 1};
  r.springs = {{0, 1, 1, 1, 0}, {1, 2, 1, 1, 0}};
  CHECK(evoc::mpi::robotCost(r) == 5);
}
