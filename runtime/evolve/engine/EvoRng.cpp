// Checkpointing of the evolution random stream.
#include "evolve/engine/EvoRng.h"

#include "support/Error.h"

#include <fmt/format.h>

namespace evoc::evolve {

std::string EvoRng::save() const {
  std::string out;
  for (uint64_t w : s_)
    out += fmt::format("{:016x}", w);
  return out;
}

void EvoRng::restore(const std::string &hex) {
  if (hex.size() != 64 || hex.find_first_not_of("0123456789abcdef") != std::string::npos)
    throw Error("a saved random state must be 64 lowercase hex digits; the run's "
                "state.json is damaged");
  for (int i = 0; i < 4; ++i)
    s_[size_t(i)] = std::stoull(hex.substr(size_t(i) * 16, 16), nullptr, 16);
}

} // namespace evoc::evolve
