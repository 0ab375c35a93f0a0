// One rollout of a file whose body is fixed in it (a particle body, a
// cell body): the loss, its gradient and the run-time message, for the
// tests of grids and matrices (MpmTest.cpp, MatrixTest.cpp).
#pragma once

#include <string>
#include <vector>

#include "app/Pipeline.h"
#include "codegen/Executable.h"
#include "core/Population.h"

namespace evoc::test {

struct FixedResult {
  bool valid = false;
  std::string error;
  double loss = 0;
  runtime::ParamSet grad;
};

/// One rollout of the file's fixed body with `params` (all of them when
/// empty: the ones seed 1 draws), backward too when `backward`.
FixedResult simulateFixed(const app::CompiledFile &c, const codegen::Executable &exe,
                          const runtime::ParamSet &params, bool backward = true);

/// State `field` ("point.x") of every element at time t, from a forward
/// rollout of the same body.
std::vector<double> stateAt(const app::CompiledFile &c, const codegen::Executable &exe,
                            const runtime::ParamSet &params, const std::string &field, int64_t t);

/// Writes `text` to a fresh file NAME under the temporary folder and compiles it.
app::CompiledFile compileText(const std::string &name, const std::string &text);

} // namespace evoc::test
