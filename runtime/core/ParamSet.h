// Controller parameters (or their gradients) of one robot, keyed by the
// language-level field name of each Param buffer ("w1", "b1", ...).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace evoc::runtime {

/// A dense row-major tensor: shape (outermost first) and its entries.
/// An empty shape is a scalar with one entry.
struct ParamTensor {
  std::vector<int64_t> shape;
  std::vector<double> data;
};

/// One robot's parameters: field name -> tensor.
using ParamSet = std::map<std::string, ParamTensor>;

} // namespace evoc::runtime
