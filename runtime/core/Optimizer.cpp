// Per-robot optimisers: normalised step, Adam, SGD.
#include "core/Optimizer.h"

#include <algorithm>
#include <cmath>

#include "support/Error.h"

namespace evoc::runtime {

OptimizerKind parseOptimizerKind(const std::string &name) {
  if (name == "normalized_sgd" || name == "normalized_step" || name == "normalised_step")
    return OptimizerKind::NormalizedStep;
  if (name == "adam")
    return OptimizerKind::Adam;
  if (name == "sgd")
    return OptimizerKind::Sgd;
  throw Error("unknown optimiser '" + name + "' (known: normalized_sgd, adam, sgd)");
}

Optimizer::Optimizer(const OptimizerConfig &cfg, int64_t n) : cfg_(cfg), n_(n) {
  if (cfg.kind == OptimizerKind::Adam)
    m_.assign(size_t(n), 0.0), v_.assign(size_t(n), 0.0);
}

template <class T> void Optimizer::apply(T *p, const T *g) {
  ++t_;
  switch (cfg_.kind) {
  case OptimizerKind::NormalizedStep: {
    double ss = 0;
    for (int64_t i = 0; i < n_; ++i)
      ss += double(g[i]) * double(g[i]);
    double scale = cfg_.step / (std::sqrt(ss) + 1e-6);
    for (int64_t i = 0; i < n_; ++i)
      p[i] = T(double(p[i]) - scale * double(g[i]));
    break;
  }
  case OptimizerKind::Adam: {
    b1t_ *= cfg_.beta1;
    b2t_ *= cfg_.beta2;
    for (int64_t i = 0; i < n_; ++i) {
      double gi = double(g[i]);
      m_[i] = cfg_.beta1 * m_[i] + (1 - cfg_.beta1) * gi;
      v_[i] = cfg_.beta2 * v_[i] + (1 - cfg_.beta2) * gi * gi;
      double mh = m_[i] / (1 - b1t_), vh = v_[i] / (1 - b2t_);
      p[i] = T(double(p[i]) - cfg_.lr * mh / (std::sqrt(vh) + cfg_.eps));
    }
    break;
  }
  case OptimizerKind::Sgd:
    for (int64_t i = 0; i < n_; ++i)
      p[i] = T(double(p[i]) - cfg_.lr * double(g[i]));
    break;
  }
}

std::vector<double> Optimizer::save() const {
  std::vector<double> s = {double(t_), b1t_, b2t_};
  s.insert(s.end(), m_.begin(), m_.end());
  s.insert(s.end(), v_.begin(), v_.end());
  return s;
}

void Optimizer::load(const std::vector<double> &s) {
  if (s.size() != 3 + m_.size() + v_.size() || !(s[0] >= 0))
    throw Error("the saved optimiser state has " + std::to_string(s.size()) +
                " numbers, this optimiser needs " + std::to_string(3 + m_.size() + v_.size()));
  t_ = int64_t(s[0]);
  b1t_ = s[1];
  b2t_ = s[2];
  std::copy(s.begin() + 3, s.begin() + 3 + std::ptrdiff_t(m_.size()), m_.begin());
  std::copy(s.begin() + 3 + std::ptrdiff_t(m_.size()), s.end(), v_.begin());
}

void Optimizer::update(void *params, const void *grad, bool f32) {
  if (f32)
    apply(static_cast<float *>(params), static_cast<const float *>(grad));
  else
    apply(static_cast<double *>(params), static_cast<const double *>(grad));
}

} // namespace evoc::runtime
