// Episodes' commands: drawn from a task mixture (body::CommandSpec) per
// episode and per period of steps, or the constant commands of one case of
// the validation grid. A table is `rows x commands` values (RolloutConfig).
#pragma once

#include <cstdint>
#include <vector>

#include "core/Rollout.h"
#include "support/CommandSpec.h"

namespace evoc::runtime {

/// A table of commands for one episode.
struct CommandTable {
  std::vector<double> values; // rows * spec.names.size()
  int64_t rows = 0;
  std::vector<int> tasks; // the task drawn for each row (-1: a validation case)
};

/// Rows an episode of `steps` states needs: one per period (at least one).
int64_t commandRows(const body::CommandSpec &spec, int64_t steps);
/// Draws an episode's commands from the stream `stream` (a mixed seed):
/// per row, a task by its probability, then each command's draw.
CommandTable drawCommands(const body::CommandSpec &spec, int64_t steps, uint64_t stream);
/// The constant commands of validation case `c` (0 <= c < spec.gridCases()).
CommandTable gridCommands(const body::CommandSpec &spec, int64_t steps, int64_t c);
/// Points a rollout's config at a table (which must outlive the rollout).
void bindCommands(RolloutConfig &rc, const body::CommandSpec &spec, const CommandTable &t);

} // namespace evoc::runtime
