// How one generation's batch is split over the ranks: chunks balanced by
// each robot's cost (its body size), deterministically.
#pragma once

#include "core/Robot.h"

#include <cstddef>
#include <vector>

namespace evoc::mpi {

/// The cost of training a robot, relative to others of the same experiment:
/// its points plus its springs (each step's work is one pass over each).
double robotCost(const runtime::Robot &robot);

/// Greedy longest-processing-time assignment of items to `parts` chunks:
/// items by decreasing cost (ties: lower index first), each to the chunk
/// with the least cost so far (ties: the lower chunk). Every chunk lists its
/// item indices in increasing order. Depends only on `costs` and `parts`.
std::vector<std::vector<size_t>> balanceByCost(const std::vector<double> &costs, int parts);

} // namespace evoc::mpi
