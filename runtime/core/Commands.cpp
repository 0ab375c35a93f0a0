// Drawing episodes' commands and the validation grid's cases.
#include "core/Commands.h"

#include "core/Rng.h"
#include "support/Error.h"

namespace evoc::runtime {

int64_t commandRows(const body::CommandSpec &spec, int64_t steps) {
  if (spec.period <= 0)
    return 1;
  return std::max<int64_t>(1, (steps + spec.period - 1) / spec.period);
}

CommandTable drawCommands(const body::CommandSpec &spec, int64_t steps, uint64_t stream) {
  CommandTable t;
  t.rows = commandRows(spec, steps);
  const size_t n = size_t(spec.columns());
  t.values.resize(size_t(t.rows) * n);
  Rng rng(stream);
  for (int64_t r = 0; r < t.rows; ++r) {
    double u = rng.uniform(), acc = 0;
    size_t task = spec.tasks.size() - 1;
    for (size_t k = 0; k < spec.tasks.size(); ++k) {
      acc += spec.tasks[k].p;
      if (u < acc) {
        task = k;
        break;
      }
    }
    t.tasks.push_back(int(task));
    for (size_t c = 0; c < n; ++c) {
      const body::CommandDraw &d = spec.tasks[task].values[c];
      double v = d.base;
      if (d.random())
        v += d.lo + (d.hi - d.lo) * rng.uniform();
      t.values[size_t(r) * n + c] = v;
    }
  }
  return t;
}

CommandTable gridCommands(const body::CommandSpec &spec, int64_t steps, int64_t c) {
  if (c < 0 || c >= spec.gridCases())
    throw Error("validation case " + std::to_string(c) + " is outside the grid");
  CommandTable t;
  t.rows = commandRows(spec, steps);
  std::vector<double> row(size_t(spec.columns()));
  for (size_t k = spec.names.size(); k-- > 0;) { // the last command varies fastest
    int64_t m = spec.gridValues(k);
    const int w = spec.width(k);
    for (int j = 0; j < w; ++j)
      row[size_t(spec.column(k) + j)] = spec.grid[k][size_t((c % m) * w + j)];
    c /= m;
  }
  for (int64_t r = 0; r < t.rows; ++r) {
    t.values.insert(t.values.end(), row.begin(), row.end());
    t.tasks.push_back(-1);
  }
  return t;
}

void bindCommands(RolloutConfig &rc, const body::CommandSpec &spec, const CommandTable &t) {
  rc.commands = t.values.data();
  rc.commandRows = t.rows;
  rc.commandPeriod = spec.period;
  rc.commandCount = spec.columns();
}

} // namespace evoc::runtime
