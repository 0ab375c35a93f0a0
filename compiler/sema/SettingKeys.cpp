// The settings keys' table (sema/SettingKeys.h).
#include "sema/SettingKeys.h"

#include <map>

namespace evoc::sema {

const std::vector<SettingKey> &allSettingKeys() {
  static const std::vector<SettingKey> keys = {
      {"world", "dim", "2 or 3 (default 2)"},
      {"world", "dt", "the time step, > 0 (default 0.004)"},
      {"world", "steps", "the number of states x[0] .. x[steps-1], >= 1 (default 1000)"},
      {"world", "precision", "f64 or f32 (default f64)"},
      {"world", "gravity", "acceleration along the last axis (default -9.8)"},
      {"world", "damping", "velocity damping rate, >= 0 (default 0)"},
      {"world", "dashpot", "spring dashpot coefficient, >= 0 (default 0)"},
      {"world", "ground",
       "flat(height = H, friction = MU), terrain(\"file.csv\", friction = MU) or "
       "terrain_random(seed, roughness, length, segments, height, friction) (default flat at 0)"},
      {"world", "scene", "static boxes: [box(x0, y0, x1, y1), ...] (3D: six corners)"},
      {"world", "objects", "movable boxes: [box(x0, y0, x1, y1, mass = M), ...] (at most 16)"},
      {"world", "physics", "the physics to simulate (required when several are declared)"},
      {"world", "checkpoint", "keep the state every K steps and recompute the rest backward"},
      {"world", "grid",
       "grid(nodes = (NX, NY), dx = H) (3D: three counts): the nodes of a physics' grid sets"},
      {"world", "state_limit",
       "a rollout with a state value beyond this in magnitude is invalid, > 0 (default 1e6)"},
      {"evolve", "population", "the number of robots kept, 1 .. 1000000"},
      {"evolve", "generations", "the number of generations, 0 .. 10000000"},
      {"evolve", "seed", "the run's seed, >= 0"},
      {"evolve", "offspring",
       "lambda: children per generation after the first (default: population)"},
      {"evolve", "body", "the body to evolve (required when several are declared)"},
      {"evolve", "fitness",
       "a reduction of the learning curve, higher is better: R(-loss), R(loss), -R(loss) or "
       "-R(-loss), R one of max, min, mean, last, first (default max(-loss))"},
      {"evolve", "select",
       "truncation(mu_plus_lambda), tournament(K), map_elites(D1, D2, qd_offset = X) or random "
       "(survivors drawn uniformly, fitness unused: a control), each "
       "descriptor KIND(range = (LO, HI), bins = N): actuators, width, height, depth, "
       "term(NAME, ...), learning_gain, monotonicity"},
      {"evolve", "invalid", "robots dropped: loss_above(X), loss_jump(X), nonfinite()"},
      {"learn", "iterations", "learning iterations per design, 1 .. 1000000"},
      {"learn", "optimizer",
       "normalized_sgd(step = S), sgd(lr = L) or adam(lr, beta1, beta2, eps)"},
      {"learn", "loss", "the loss to learn (required when several are declared)"},
      {"learn", "controller", "the controller to train (required when several are declared)"},
      {"learn", "inherit",
       "none (every child learns from fresh weights) or weights (from its parent's, where its "
       "body is unchanged)"},
      {"learn", "batch", "episodes per learning iteration (experiments with commands)"},
      {"learn", "episodes", "how episodes continue and reset (experiments with commands)"},
      {"train", "seed", "the seed of the weights and episodes, >= 0"},
      {"train", "validate_every", "iterations between validations on the validation commands"},
  };
  return keys;
}

const std::vector<std::string> &settingKeys(std::string_view block) {
  static const std::map<std::string, std::vector<std::string>, std::less<>> byBlock = [] {
    std::map<std::string, std::vector<std::string>, std::less<>> m;
    for (const SettingKey &k : allSettingKeys())
      m[std::string(k.block)].emplace_back(k.key);
    return m;
  }();
  static const std::vector<std::string> none;
  auto it = byBlock.find(block);
  return it == byBlock.end() ? none : it->second;
}

const SettingKey *findSettingKey(std::string_view block, std::string_view key) {
  for (const SettingKey &k : allSettingKeys())
    if (k.block == block && k.key == key)
      return &k;
  return nullptr;
}

} // namespace evoc::sema
