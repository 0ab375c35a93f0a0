// Whole-rollout forward and adjoint sweeps on the interpreter (test support).
#include "Rollout.h"

#include <algorithm>

namespace evoc::test {

using namespace ir;

double rolloutLoss(const Module &m, Data &d, int steps, std::vector<std::vector<double>> *xs,
                   std::vector<std::vector<double>> *vs) {
  int step = m.findKernel("step"), loss = m.findKernel("loss");
  std::vector<double> x0 = d.F("point.x");
  if (xs)
    xs->assign(1, d.F("point.x"));
  if (vs)
    vs->assign(1, d.F("point.v"));
  for (int t = 0; t + 1 < steps; ++t) {
    d.zero(Role::Temp);
    d.run(step, t);
    d.F("point.x").swap(d.F("point.x.next"));
    d.F("point.v").swap(d.F("point.v.next"));
    if (xs)
      xs->push_back(d.F("point.x"));
    if (vs)
      vs->push_back(d.F("point.v"));
  }
  d.F("point.x.first") = x0;
  d.F("point.x.last") = d.F("point.x");
  d.zero(Role::Temp);
  d.run(loss, steps - 1);
  return d.F("loss")[0];
}

double rolloutGradient(const Module &m, Data &d, int steps) {
  std::vector<std::vector<double>> xs, vs;
  Data fwd = d;
  double L = rolloutLoss(m, fwd, steps, &xs, &vs);
  int stepAdj = m.findKernel("step.adj"), lossAdj = m.findKernel("loss.adj");
  d.zero(Role::Adjoint);
  d.F("point.x.first") = xs.front();
  d.F("point.x.last") = xs.back();
  d.F("loss.adj") = {1.0};
  d.zero(Role::Temp);
  d.run(lossAdj, steps - 1);
  std::vector<double> ax = d.F("point.x.last.adj");
  std::vector<double> av(ax.size(), 0.0);
  for (int t = steps - 2; t >= 0; --t) {
    d.F("point.x") = xs[t];
    d.F("point.v") = vs[t];
    d.F("point.x.next.adj") = ax;
    d.F("point.v.next.adj") = av;
    std::fill(d.F("point.x.adj").begin(), d.F("point.x.adj").end(), 0.0);
    std::fill(d.F("point.v.adj").begin(), d.F("point.v.adj").end(), 0.0);
    d.zero(Role::Temp);
    d.zeroAdjointsOf(Role::Temp);
    d.run(stepAdj, t);
    ax = d.F("point.x.adj");
    av = d.F("point.v.adj");
  }
  const auto &first = d.F("point.x.first.adj");
  for (size_t i = 0; i < ax.size(); ++i)
    ax[i] += first[i];
  d.F("point.x.adj") = ax;
  d.F("point.v.adj") = av;
  d.F("point.x") = xs.front();
  d.F("point.v") = vs.front();
  return L;
}

} // namespace evoc::test
