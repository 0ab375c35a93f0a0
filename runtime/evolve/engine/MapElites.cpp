// Descriptors, grid cells and the MAP-Elites archive's survivors.
#include "evolve/engine/MapElites.h"

#include "evolve/engine/Metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace evoc::evolve {

namespace {

// The extent of the rest pose along `axis` (0 for a robot without points).
double extent(const runtime::Robot &r, int axis) {
  const int n = r.numPoints();
  if (n == 0 || axis >= r.dim)
    return 0;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (int i = 0; i < n; ++i) {
    const double v = r.points[size_t(i * r.dim + axis)];
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  return hi - lo;
}

// The named term at the iteration of the lowest loss: the weights a design
// keeps are those of its lowest loss (docs/evolution.md, "Learning curve").
double termValue(const std::string &name, const Described &x) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (!x.losses || x.losses->empty() || !x.terms)
    return nan;
  const auto &l = *x.losses;
  const size_t at = size_t(std::min_element(l.begin(), l.end()) - l.begin());
  for (const auto &[n, curve] : *x.terms)
    if (n == name)
      return at < curve.size() ? curve[at] : nan;
  return nan;
}

} // namespace

std::string descriptorName(const Descriptor &d) {
  const std::string name = descriptorKindName(d.kind);
  return d.kind == Descriptor::Kind::Term ? name + "(" + d.term + ")" : name;
}

double descriptorValue(const Descriptor &d, const Described &x) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const runtime::Robot *r = x.robot;
  static const std::vector<double> none;
  const auto &losses = x.losses ? *x.losses : none;
  const auto &grads = x.gradNorms ? *x.gradNorms : none;
  switch (d.kind) {
  case Descriptor::Kind::Actuators: {
    if (!r)
      return nan;
    int n = 0;
    for (const auto &s : r->springs)
      n += s.actuation != 0;
    return n;
  }
  case Descriptor::Kind::Width:
    return r ? extent(*r, 0) : nan;
  case Descriptor::Kind::Height:
    return r ? extent(*r, r->dim - 1) : nan;
  case Descriptor::Kind::Depth:
    return r && r->dim == 3 ? extent(*r, 1) : nan;
  case Descriptor::Kind::Term:
    return termValue(d.term, x);
  case Descriptor::Kind::LearningGain:
    return learningMetrics(losses, grads).gain;
  case Descriptor::Kind::Monotonicity:
    return learningMetrics(losses, grads).monotone;
  }
  return nan;
}

int descriptorBin(const Descriptor &d, double v) {
  if (std::isnan(v) || d.bins <= 1)
    return 0;
  const double u = (v - d.lo) / (d.hi - d.lo) * d.bins;
  if (!(u >= 0)) // below lo (or -inf)
    return 0;
  if (u >= d.bins)
    return d.bins - 1;
  return std::clamp(int(std::floor(u)), 0, d.bins - 1);
}

int64_t cellIndex(const std::vector<Descriptor> &axes, const std::vector<double> &values) {
  int64_t cell = 0;
  for (size_t k = 0; k < axes.size(); ++k)
    cell = cell * axes[k].bins +
           descriptorBin(axes[k],
                         k < values.size() ? values[k] : std::numeric_limits<double>::quiet_NaN());
  return cell;
}

int64_t cellCount(const std::vector<Descriptor> &axes) {
  int64_t n = 1;
  for (const auto &d : axes)
    n *= std::max(1, d.bins);
  return n;
}

std::vector<size_t> eliteSurvivors(const std::vector<Scored> &pool,
                                   const std::vector<int64_t> &cells) {
  std::map<int64_t, size_t> elite; // cell -> pool index
  for (size_t i = 0; i < pool.size(); ++i) {
    if (cells[i] < 0)
      continue;
    auto [at, fresh] = elite.emplace(cells[i], i);
    if (!fresh && ranksBefore(pool[i], pool[at->second]))
      at->second = i;
  }
  std::vector<size_t> out;
  out.reserve(elite.size());
  for (const auto &[cell, i] : elite)
    out.push_back(i);
  std::sort(out.begin(), out.end(),
            [&](size_t a, size_t b) { return ranksBefore(pool[a], pool[b]); });
  return out;
}

MapStats mapStats(const SelectionSpec &spec, const std::vector<double> &eliteFitness) {
  MapStats m;
  m.filled = int64_t(eliteFitness.size());
  m.cells = cellCount(spec.descriptors);
  m.coverage = double(m.filled) / double(std::max<int64_t>(1, m.cells));
  for (double f : eliteFitness)
    m.qdScore += std::max(0.0, f - spec.qdOffset);
  return m;
}

nlohmann::json eliteMapJson(const SelectionSpec &spec, int generation,
                            const std::vector<EliteRecord> &elites) {
  using json = nlohmann::json;
  auto num = [](double v) { return std::isfinite(v) ? json(v) : json(); };
  json axes = json::array();
  for (const Descriptor &d : spec.descriptors)
    axes.push_back(
        {{"descriptor", descriptorName(d)}, {"lo", d.lo}, {"hi", d.hi}, {"bins", d.bins}});
  std::vector<double> fitness;
  json cells = json::array();
  for (const EliteRecord &e : elites) {
    fitness.push_back(e.fitness);
    json bins = json::array(), values = json::array();
    for (size_t k = 0; k < spec.descriptors.size(); ++k) {
      const double v =
          k < e.descriptors.size() ? e.descriptors[k] : std::numeric_limits<double>::quiet_NaN();
      bins.push_back(descriptorBin(spec.descriptors[k], v));
      values.push_back(num(v));
    }
    cells.push_back({{"cell", bins},
                     {"index", cellIndex(spec.descriptors, e.descriptors)},
                     {"id", e.id},
                     {"born", e.born},
                     {"fitness", e.fitness},
                     {"descriptors", values}});
  }
  const MapStats m = mapStats(spec, fitness);
  return {{"format", "evoc-map-elites"},
          {"version", 1},
          {"generation", generation},
          {"axes", axes},
          {"cells", m.cells},
          {"filled", m.filled},
          {"coverage", m.coverage},
          {"qd_score", m.qdScore},
          {"qd_offset", spec.qdOffset},
          {"elites", cells}};
}

} // namespace evoc::evolve
