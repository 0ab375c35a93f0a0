// Chunks balanced by body size (Partition.h).
#include "mpi/Partition.h"

#include "support/Error.h"

#include <algorithm>
#include <numeric>

namespace evoc::mpi {

double robotCost(const runtime::Robot &robot) {
  return double(robot.numPoints()) + double(robot.numSprings());
}

std::vector<std::vector<size_t>> balanceByCost(const std::vector<double> &costs, int parts) {
  if (parts < 1)
    throw Error("a batch must be split into at least one chunk");
  std::vector<size_t> order(costs.size());
  std::iota(order.begin(), order.end(), size_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return costs[a] > costs[b]; });
  std::vector<std::vector<size_t>> chunks(static_cast<size_t>(parts));
  std::vector<double> load(size_t(parts), 0.0);
  for (size_t i : order) {
    size_t least = size_t(std::min_element(load.begin(), load.end()) - load.begin());
    chunks[least].push_back(i);
    load[least] += costs[i];
  }
  for (auto &c : chunks)
    std::sort(c.begin(), c.end());
  return chunks;
}

} // namespace evoc::mpi
