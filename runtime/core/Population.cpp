// Population memory: layout, body filling, parameter init and exchange.
#include "core/Population.h"

#include <cmath>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "core/Rng.h"
#include "support/Error.h"

namespace evoc::runtime {

namespace {

std::string shapeStr(const std::vector<int64_t> &s) {
  if (s.empty())
    return "a scalar";
  std::string out;
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? " x " : "") + std::to_string(s[i]);
  return out;
}

/// The values the compiler gives field `key` of a buffer or state field over
/// `sets` (the world's objects: ElementSet::values), or null.
const std::vector<double> *worldValues(const ir::Module &m, const std::vector<int> &sets,
                                       const std::string &key) {
  if (sets.size() != 1)
    return nullptr;
  for (const auto &[field, vals] : m.sets[size_t(sets[0])].values)
    if (field == key)
      return &vals;
  return nullptr;
}

/// For an endpoint buffer of a set of all pairs: which endpoint (0, 1) and
/// the second endpoint's set.
std::optional<std::pair<int, int>> pairEndpoint(const ir::Module &m, const ir::Buffer &B,
                                                const std::string &key) {
  if (B.sets.size() != 1 || B.elem != ir::Type::I)
    return std::nullopt;
  const auto &pairs = m.sets[size_t(B.sets[0])].pairs;
  if (pairs.size() != 2)
    return std::nullopt;
  for (int i = 0; i < 2; ++i)
    if (pairs[size_t(i)].first == key)
      return std::pair{i, pairs[1].second};
  return std::nullopt;
}

} // namespace

Population::Population(const ModuleInfo &info, std::vector<Robot> robots)
    : info_(&info), f32_(info.module->precision == ir::Precision::F32), robots_(std::move(robots)) {
  const ir::Module &m = *info.module;
  const int nr = size();
  for (int a = 0; a < kPersistent; ++a)
    offsets_[a].resize(nr + 1);
  layouts_.reserve(nr);
  for (int r = 0; r < nr; ++r) {
    layouts_.push_back(layoutRobot(info, setSizes(m, robots_[r])));
    for (int a = 0; a < kPersistent; ++a) // robot blocks start on 64 bytes
      offsets_[a][r + 1] = offsets_[a][r] + alignUp(layouts_[r].arenaBytes[a]);
  }
  for (int a = 0; a < kPersistent; ++a)
    store_[a].assign(offsets_[a][nr] / 8 + 8, 0.0);

  for (int b = 0; b < int(m.buffers.size()); ++b)
    if (info.arena[b] == Arena::Param && m.buffers[b].elem != ir::Type::F)
      throw Error("parameter buffer '" + m.buffers[b].name + "' is not a float buffer");
  // Body buffers, by field name.
  for (int r = 0; r < nr; ++r) {
    const Robot &R = robots_[r];
    // Kernels gather through spring endpoints without bounds checks: a bad
    // index must never reach them (robots need not come from JSON).
    if (R.dim < 1 || R.points.size() % size_t(R.dim) != 0)
      throw Error(fmt::format("robot {} has {} coordinates, not a multiple of its dimension {}", r,
                              R.points.size(), R.dim));
    for (int s = 0; s < R.numSprings(); ++s) {
      const Spring &S = R.springs[s];
      if (S.a < 0 || S.a >= R.numPoints() || S.b < 0 || S.b >= R.numPoints())
        throw Error(fmt::format("robot {}, spring {} connects points {} and {}, but the robot "
                                "has {} points",
                                r, s, S.a, S.b, R.numPoints()));
    }
    if (info.pointX >= 0 && info.fields[info.pointX].comps != R.dim)
      throw Error(fmt::format("robot {} has {}-dimensional points, but the experiment is {}D", r,
                              R.dim, info.fields[info.pointX].comps));
    for (int b = 0; b < int(m.buffers.size()); ++b) {
      if (info.arena[b] != Arena::Body)
        continue;
      const auto &B = m.buffers[b];
      std::string key = B.field.empty() ? B.name : B.field;
      std::byte *p = buffer(r, b);
      int64_t n = layouts_[r].count[b];
      auto fill = [&](auto get) {
        if (n != R.numSprings())
          throw Error(fmt::format("body buffer '{}' has {} entries for robot {}, which has {} "
                                  "springs",
                                  B.name, n, r, R.numSprings()));
        for (int64_t i = 0; i < n; ++i) {
          double v = get(R.springs[i]);
          if (B.elem == ir::Type::I)
            reinterpret_cast<int32_t *>(p)[i] = int32_t(v);
          else
            storeF(p, i, v, f32_);
        }
      };
      if (const std::vector<double> *known = worldValues(m, B.sets, key)) {
        // The world's objects (docs/language.md, "Objects").
        if (int64_t(known->size()) != n)
          throw Error(fmt::format("body buffer '{}' has {} entries, but the world gives {}", B.name,
                                  n, known->size()));
        for (int64_t i = 0; i < n; ++i)
          storeF(p, i, (*known)[size_t(i)], f32_);
      } else if (auto pair = pairEndpoint(m, B, key)) {
        // Every (point, object) pair: element e is (e / n1, e % n1).
        const int64_t n1 = layouts_[r].sizes[size_t(pair->second)];
        for (int64_t e = 0; e < n; ++e)
          reinterpret_cast<int32_t *>(p)[e] = int32_t(pair->first == 0 ? e / n1 : e % n1);
      } else if (key.rfind("point.part.", 0) == 0) {
        // part_mean's mask (docs/language.md, Losses): 1 on the part's points.
        const std::string part = key.substr(11);
        if (!R.hasParts)
          throw Error(fmt::format("robot {} is known only as points and springs, but the loss "
                                  "names part '{}' (part_mean): give the robot as a genome "
                                  "(a run's best.json or population.json) so that its parts "
                                  "are known",
                                  r, part));
        if (n != R.numPoints())
          throw Error(fmt::format("body buffer '{}' has {} entries for robot {}, which has {} "
                                  "points",
                                  B.name, n, r, R.numPoints()));
        for (int64_t i = 0; i < n; ++i)
          storeF(p, i, 0.0, f32_);
        auto it = R.partPoints.find(part);
        if (it != R.partPoints.end())
          for (int q : it->second)
            storeF(p, q, 1.0, f32_);
      } else if (key == "point.actuator_id") {
        // A particle body's actuator per point (docs/language.md, "Particle bodies").
        if (int64_t(R.actuators.size()) != n)
          throw Error(fmt::format("body buffer '{}' has {} entries, but robot {} gives {} "
                                  "actuator ids (a particle body gives one per point: body "
                                  "particles NAME {{ ... }})",
                                  B.name, n, r, R.actuators.size()));
        for (int64_t i = 0; i < n; ++i)
          storeF(p, i, double(R.actuators[size_t(i)]), f32_);
      } else if (key == "spring.a")
        fill([](const Spring &s) { return double(s.a); });
      else if (key == "spring.b")
        fill([](const Spring &s) { return double(s.b); });
      else if (key == "spring.rest")
        fill([](const Spring &s) { return s.rest; });
      else if (key == "spring.stiffness")
        fill([](const Spring &s) { return s.stiffness; });
      else if (key == "spring.actuation")
        fill([](const Spring &s) { return s.actuation; });
      else
        throw Error("the runtime does not know how to fill body buffer '" + B.name +
                    "' from a robot (known: spring.a, spring.b, spring.rest, "
                    "spring.stiffness, spring.actuation, point.actuator_id)");
    }
  }
}

std::byte *Population::arena(int r, Arena a) {
  EVOC_ASSERT(int(a) < kPersistent, "not a persistent arena");
  return reinterpret_cast<std::byte *>(store_[int(a)].data()) + offsets_[int(a)][r];
}
const std::byte *Population::arena(int r, Arena a) const {
  return const_cast<Population *>(this)->arena(r, a);
}

void Population::initParams(int r, uint64_t seed, uint64_t robotId) {
  const ir::Module &m = *info_->module;
  const RobotLayout &L = layouts_[r];
  for (int b = 0; b < int(m.buffers.size()); ++b) {
    if (info_->arena[b] != Arena::Param)
      continue;
    const auto &B = m.buffers[b];
    std::byte *p = buffer(r, b);
    int64_t n = L.count[b];
    if (B.init == "xavier_normal") {
      double fanOut = B.sets.size() > 0 ? double(L.sizes[B.sets[0]]) : 1;
      double fanIn = B.sets.size() > 1 ? double(L.sizes[B.sets[1]]) : 1;
      double sd = B.initGain * std::sqrt(2.0 / (fanIn + fanOut));
      Rng rng(mixSeed(mixSeed(seed, robotId), uint64_t(b)));
      for (int64_t i = 0; i < n; ++i)
        storeF(p, i, sd * rng.normal(), f32_);
    } else if (B.init == "kaiming_uniform") { // U(-b, b), b = gain * sqrt(6 / fan_in)
      double fanIn = B.sets.size() > 1 ? double(L.sizes[B.sets[1]]) : 1;
      double bound = B.initGain * std::sqrt(6.0 / fanIn);
      Rng rng(mixSeed(mixSeed(seed, robotId), uint64_t(b)));
      for (int64_t i = 0; i < n; ++i)
        storeF(p, i, bound * (2 * rng.uniform() - 1), f32_);
    } else if (B.init == "constant") {
      for (int64_t i = 0; i < n; ++i)
        storeF(p, i, B.initGain, f32_);
    } else if (B.init == "zeros" || B.init.empty()) {
      std::memset(p, 0, size_t(n) * info_->elemBytes(b));
    } else {
      throw Error("parameter '" + B.name + "' asks for initialisation '" + B.init +
                  "', which the runtime does not know (known: zeros, constant, xavier_normal, "
                  "kaiming_uniform)");
    }
  }
}

void Population::checkParams(int r, const ParamSet &p) const {
  const ir::Module &m = *info_->module;
  std::vector<char> known(p.size(), 0);
  for (int b = 0; b < int(m.buffers.size()); ++b) {
    if (info_->arena[b] != Arena::Param)
      continue;
    std::string key = info_->paramKey(b);
    auto it = p.find(key);
    if (it == p.end())
      throw Error(fmt::format("robot {}: the parameters lack field '{}'", r, key));
    known[std::distance(p.begin(), it)] = 1;
    auto want = bufferShape(m.buffers[b], layouts_[r].sizes);
    const ParamTensor &t = it->second;
    bool scalarOk = want.empty() && t.data.size() == 1 && t.shape.size() <= 1;
    if (t.shape != want && !scalarOk)
      throw Error(fmt::format("robot {}, field '{}': the parameters have shape {}, but this "
                              "robot needs {}",
                              r, key, shapeStr(t.shape), shapeStr(want)));
    if (int64_t(t.data.size()) != layouts_[r].count[b])
      throw Error(fmt::format("robot {}, field '{}': {} entries, expected {}", r, key,
                              t.data.size(), layouts_[r].count[b]));
  }
  int i = 0;
  for (const auto &[key, t] : p)
    if (!known[i++])
      throw Error(fmt::format("robot {}: the parameters have a field '{}' that the "
                              "controller does not have",
                              r, key));
}

void Population::setParams(int r, const ParamSet &p) {
  checkParams(r, p);
  const ir::Module &m = *info_->module;
  for (int b = 0; b < int(m.buffers.size()); ++b) {
    if (info_->arena[b] != Arena::Param)
      continue;
    const ParamTensor &t = p.at(info_->paramKey(b));
    std::byte *dst = buffer(r, b);
    for (size_t i = 0; i < t.data.size(); ++i)
      storeF(dst, int64_t(i), t.data[i], f32_);
  }
}

ParamSet Population::tensors(int r, Arena a) const {
  const ir::Module &m = *info_->module;
  ParamSet out;
  for (int b = 0; b < int(m.buffers.size()); ++b) {
    if (info_->arena[b] != Arena::Param)
      continue;
    ParamTensor t;
    t.shape = bufferShape(m.buffers[b], layouts_[r].sizes);
    const std::byte *src = arena(r, a) + layouts_[r].offset[b];
    t.data.resize(size_t(layouts_[r].count[b]));
    for (size_t i = 0; i < t.data.size(); ++i)
      t.data[i] = loadF(src, int64_t(i), f32_);
    out[info_->paramKey(b)] = std::move(t);
  }
  return out;
}

ParamSet Population::params(int r) const { return tensors(r, Arena::Param); }
ParamSet Population::grads(int r) const { return tensors(r, Arena::Grad); }

void Population::initialState(int r, std::byte *snapshot, double groundHeight, int upAxis,
                              const GroundShape *terrain) const {
  const RobotLayout &L = layouts_[r];
  std::memset(snapshot, 0, size_t(L.stateBytes()));
  // State fields the world starts (the objects' centres), then the points.
  const ir::Module &m = *info_->module;
  for (int f = 0; f < int(info_->fields.size()); ++f) {
    const StateField &F = info_->fields[size_t(f)];
    const std::vector<double> *vals = worldValues(m, F.sets, F.name);
    if (!vals && int(F.start.size()) == F.comps && F.sets.size() == 1) { // all at `start`
      std::byte *dst = snapshot + L.fieldOffset[size_t(f)];
      const int64_t n = L.sizes[size_t(F.sets[0])];
      for (int64_t i = 0; i < n; ++i)
        for (int c = 0; c < F.comps; ++c)
          storeF(dst, i * F.comps + c, F.start[size_t(c)], f32_);
      continue;
    }
    if (!vals)
      continue;
    std::byte *dst = snapshot + L.fieldOffset[size_t(f)];
    const int64_t n =
        std::min<int64_t>(int64_t(vals->size()), L.sizes[size_t(F.sets[0])] * F.comps);
    for (int64_t i = 0; i < n; ++i)
      storeF(dst, i, (*vals)[size_t(i)], f32_);
  }
  if (info_->pointX < 0)
    return;
  const Robot &R = robots_[r];
  int np = R.numPoints();
  double lift = 0;
  if (np > 0 && upAxis >= 0 && upAxis < R.dim) {
    // Lift the body until no point is below the ground under it ...
    auto under = [&](int i) {
      return terrain && upAxis == R.dim - 1
                 ? terrain->heightUnder(&R.points[i * R.dim], R.dim, groundHeight)
                 : groundHeight;
    };
    for (int i = 0; i < np; ++i)
      lift = std::max(lift, under(i) - R.points[i * R.dim + upAxis]);
    // Then, as little further as it takes, out of the scene's boxes: a body
    // placed in one starts on it.
    if (terrain && upAxis == R.dim - 1)
      lift = terrain->liftOutOfBoxes(R.points.data(), np, R.dim, lift);
  }
  std::byte *x = snapshot + L.fieldOffset[info_->pointX];
  for (int i = 0; i < np * R.dim; ++i)
    storeF(x, i, R.points[i] + (i % R.dim == upAxis ? lift : 0.0), f32_);
}

int64_t Population::bytes() const {
  int64_t n = 0;
  for (const auto &s : store_)
    n += int64_t(s.size() * sizeof(double));
  return n;
}

} // namespace evoc::runtime
