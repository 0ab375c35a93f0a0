// VoxelBody: Evolution Gym's voxel bodies; sampling and mutation after its
// rules, expression through the cell builder of fixed bodies.
#include "evolve/bodies/VoxelBody.h"

#include "evolve/bodies/CellBody.h"
#include "support/Error.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>

namespace evoc::evolve {

namespace {

/// Rejected draws before sample() repairs one (docs/grammars.md).
constexpr int kSampleTries = 1000;

std::string quote(const std::string &s) { return "'" + s + "'"; }

} // namespace

VoxelBody::VoxelBody(body::VoxelBodySpec spec, body::VoxelMutationSpec mutation, double groundY)
    : spec_(std::move(spec)), mutation_(std::move(mutation)), groundY_(groundY) {
  const int dim = spec_.dim;
  if ((dim != 2 && dim != 3) || int(spec_.size.size()) != dim || int(spec_.origin.size()) != dim)
    throw Error("body '" + spec_.name + "': a voxel body is 2D or 3D, with a size and origin of " +
                "as many numbers");
  if (spec_.materials.empty() || spec_.materials.size() > 255 ||
      spec_.weights.size() != spec_.materials.size() + 1)
    throw Error("body '" + spec_.name +
                "': a voxel body needs 1 to 255 materials and one "
                "sampling weight for an empty cell and each material");
  bool actuated = false;
  for (size_t i = 0; i < spec_.materials.size(); ++i)
    actuated = actuated || (spec_.materials[i].actuates() && spec_.weights[i + 1] > 0);
  if (!actuated || !(spec_.edge > 0))
    throw Error("body '" + spec_.name + "': no actuated material can be drawn, or edge <= 0");
}

const std::vector<uint8_t> &VoxelBody::cells(const Genome &g) {
  return dynamic_cast<const VoxelGenome &>(g).cells;
}

GenomePtr VoxelBody::make(std::vector<uint8_t> cells) {
  auto g = std::make_shared<VoxelGenome>();
  g->cells = std::move(cells);
  return g;
}

void VoxelBody::neighbours(int c, int *out) const {
  const int dim = spec_.dim;
  int at[3] = {0, 0, 0}, rest = c;
  for (int a = 0; a < dim; ++a) {
    at[a] = rest % spec_.size[size_t(a)];
    rest /= spec_.size[size_t(a)];
  }
  int stride = 1;
  for (int a = 0; a < dim; ++a) {
    out[a] = at[a] + 1 < spec_.size[size_t(a)] ? c + stride : -1;
    out[dim + a] = at[a] > 0 ? c - stride : -1;
    stride *= spec_.size[size_t(a)];
  }
}

std::vector<int> VoxelBody::groupFrom(const std::vector<uint8_t> &cells, int start,
                                      std::vector<char> &seen) const {
  std::vector<int> group{start};
  seen[size_t(start)] = 1;
  int nb[6];
  for (size_t i = 0; i < group.size(); ++i) {
    neighbours(group[i], nb);
    for (int k = 0; k < 2 * spec_.dim; ++k)
      if (nb[k] >= 0 && cells[size_t(nb[k])] != 0 && !seen[size_t(nb[k])]) {
        seen[size_t(nb[k])] = 1;
        group.push_back(nb[k]);
      }
  }
  return group;
}

std::vector<int> VoxelBody::placementOrder(const std::vector<uint8_t> &cells) const {
  auto first = std::find_if(cells.begin(), cells.end(), [](uint8_t v) { return v != 0; });
  if (first == cells.end())
    return {};
  std::vector<char> seen(cells.size(), 0);
  return groupFrom(cells, int(first - cells.begin()), seen);
}

std::vector<int> VoxelBody::largestGroup(const std::vector<uint8_t> &cells) const {
  std::vector<int> best;
  std::vector<char> seen(cells.size(), 0);
  for (size_t s = 0; s < cells.size(); ++s) {
    if (cells[s] == 0 || seen[s])
      continue;
    std::vector<int> group = groupFrom(cells, int(s), seen);
    if (group.size() > best.size())
      best = std::move(group);
  }
  return best;
}

std::string VoxelBody::invalidReason(const std::vector<uint8_t> &cells) const {
  if (cells.size() != size_t(spec_.cells()))
    return "the genome has " + std::to_string(cells.size()) + " cells, the box " +
           std::to_string(spec_.cells());
  int voxels = 0;
  bool actuator = false;
  for (uint8_t v : cells) {
    if (v > spec_.materials.size())
      return "a cell has material " + std::to_string(int(v)) + ", but the body has " +
             std::to_string(spec_.materials.size());
    voxels += v != 0;
    actuator = actuator || (v != 0 && spec_.materials[size_t(v - 1)].actuates());
  }
  if (voxels == 0)
    return "the body has no voxel";
  if (int(placementOrder(cells).size()) != voxels)
    return "the voxels are not connected (face to face)";
  if (!actuator)
    return "no voxel is of an actuated material";
  return "";
}

uint8_t VoxelBody::draw(EvoRng &rng, Pick pick) const {
  double total = 0;
  auto weight = [&](size_t v) {
    if (pick != Pick::Any && v == 0)
      return 0.0;
    if (pick == Pick::Actuated && !spec_.materials[v - 1].actuates())
      return 0.0;
    return spec_.weights[v];
  };
  for (size_t v = 0; v < spec_.weights.size(); ++v)
    total += weight(v);
  double u = rng.uniform() * total;
  size_t last = 0;
  for (size_t v = 0; v < spec_.weights.size(); ++v) {
    if (weight(v) <= 0)
      continue;
    last = v;
    if (u < weight(v))
      return uint8_t(v);
    u -= weight(v);
  }
  return uint8_t(last); // rounding at the top end
}

GenomePtr VoxelBody::sample(EvoRng &rng) const {
  std::vector<uint8_t> cells(size_t(spec_.cells()));
  for (int t = 0; t < kSampleTries; ++t) {
    for (auto &c : cells)
      c = draw(rng);
    if (invalidReason(cells).empty())
      return make(cells);
  }
  // Repair the last draw: keep its largest group of voxels (a random cell
  // when it has none), and give it an actuator if it has none.
  std::vector<int> group = largestGroup(cells);
  if (group.empty())
    group.push_back(int(rng.below(cells.size())));
  std::vector<uint8_t> kept(cells.size(), 0);
  bool actuator = false;
  for (int c : group) {
    kept[size_t(c)] = cells[size_t(c)];
    actuator = actuator ||
               (kept[size_t(c)] != 0 && spec_.materials[size_t(kept[size_t(c)] - 1)].actuates());
  }
  if (!actuator) {
    const int c = group[size_t(rng.below(group.size()))];
    kept[size_t(c)] = draw(rng, Pick::Actuated);
  }
  return make(std::move(kept));
}

namespace {

/// A voxel operator's rate for one parent, clamped to [0, 1] (recorded in
/// `clamped` when it had to be).
double rateOf(const body::Scalar &s, const double *counts, const std::string &op,
              std::map<std::string, double> &clamped) {
  double r = s.code.empty() ? 0.0 : body::evalScalar(s, counts);
  if (!(r >= 0 && r <= 1)) {
    clamped[op] = r;
    r = std::isfinite(r) ? std::clamp(r, 0.0, 1.0) : 0.0;
  }
  return r;
}

} // namespace

bool VoxelBody::addVoxel(std::vector<uint8_t> &cells, EvoRng &rng) const {
  std::vector<int> free; // empty cells beside a voxel, in grid order
  int nb[6];
  for (size_t c = 0; c < cells.size(); ++c) {
    if (cells[c] != 0)
      continue;
    neighbours(int(c), nb);
    for (int k = 0; k < 2 * spec_.dim; ++k)
      if (nb[k] >= 0 && cells[size_t(nb[k])] != 0) {
        free.push_back(int(c));
        break;
      }
  }
  if (free.empty()) // (a material can always be drawn: sema requires an actuated one)
    return false;
  const int c = free[size_t(rng.below(free.size()))];
  cells[size_t(c)] = draw(rng, Pick::Material);
  return true;
}

bool VoxelBody::removeVoxel(std::vector<uint8_t> &cells, EvoRng &rng) const {
  std::vector<int> removable; // voxels whose removal leaves a valid body
  for (size_t c = 0; c < cells.size(); ++c) {
    if (cells[c] == 0)
      continue;
    const uint8_t keep = cells[c];
    cells[c] = 0;
    if (invalidReason(cells).empty())
      removable.push_back(int(c));
    cells[c] = keep;
  }
  if (removable.empty())
    return false;
  cells[size_t(removable[size_t(rng.below(removable.size()))])] = 0;
  return true;
}

bool VoxelBody::swapVoxel(std::vector<uint8_t> &cells, EvoRng &rng) const {
  std::vector<int> voxels;
  for (size_t c = 0; c < cells.size(); ++c)
    if (cells[c] != 0)
      voxels.push_back(int(c));
  const size_t nm = spec_.materials.size();
  if (voxels.empty() || nm < 2)
    return false;
  const int c = voxels[size_t(rng.below(voxels.size()))];
  // Another material, uniformly (the weights may give the others 0).
  uint8_t v = uint8_t(1 + rng.below(nm - 1));
  if (v >= cells[size_t(c)])
    ++v;
  cells[size_t(c)] = v;
  return true;
}

Variation VoxelBody::vary(const Genome &parent, const std::vector<const Genome *> &,
                          EvoRng &rng) const {
  const auto &from = cells(parent);
  double counts[2] = {0, double(spec_.cells())};
  for (uint8_t v : from)
    counts[body::kVoxels] += v != 0;
  Variation out;
  const double resample = rateOf(mutation_.resample, counts, "resample voxel", out.clampedRates);
  const double add = rateOf(mutation_.add, counts, "add voxel", out.clampedRates);
  const double remove = rateOf(mutation_.remove, counts, "remove voxel", out.clampedRates);
  const double swap = rateOf(mutation_.swap, counts, "swap voxel", out.clampedRates);
  std::vector<uint8_t> child;
  std::string last = "resample voxel";
  for (int attempt = 1; attempt <= mutation_.maxAttempts; ++attempt) {
    // Under `until changed` each retry doubles every rate (capped at 1).
    const double grow = mutation_.untilChanged ? std::ldexp(1.0, attempt - 1) : 1.0;
    auto p = [&](double r) { return std::min(1.0, r * grow); };
    child = from;
    out.ops.clear();
    bool drawn = false;
    const double pr = p(resample);
    for (auto &c : child)
      if (rng.bernoulli(pr))
        c = draw(rng), drawn = true;
    if (drawn)
      out.ops.push_back("resample voxel");
    if (rng.bernoulli(p(add)) && addVoxel(child, rng))
      out.ops.push_back("add voxel");
    if (rng.bernoulli(p(remove)) && removeVoxel(child, rng))
      out.ops.push_back("remove voxel");
    if (rng.bernoulli(p(swap)) && swapVoxel(child, rng))
      out.ops.push_back("swap voxel");
    if (!out.ops.empty())
      last = out.ops.back();
    out.attempts = attempt;
    if (invalidReason(child).empty() && (!mutation_.untilChanged || child != from)) {
      out.genome = make(std::move(child));
      return out;
    }
  }
  out.ops = {last};
  out.genome = make(from);
  out.fallback = true;
  out.fallbackOp = last;
  return out;
}

Phenotype VoxelBody::express(const Genome &g) const {
  const auto &cs = cells(g);
  Phenotype p;
  p.reason = invalidReason(cs);
  if (!p.reason.empty()) {
    p.valid = false;
    p.robot.dim = spec_.dim;
    return p;
  }
  const int dim = spec_.dim;
  body::CellBodySpec cb;
  cb.name = spec_.name;
  cb.dim = dim;
  cb.edge = spec_.edge;
  cb.origin = spec_.origin;
  std::vector<PartOutline> kinds;
  std::vector<std::array<int, 3>> at; // each placed cell's grid position
  for (int c : placementOrder(cs)) {
    const auto &m = spec_.materials[size_t(cs[size_t(c)] - 1)];
    std::array<int, 3> pos{0, 0, 0};
    int rest = c;
    for (int a = 0; a < dim; ++a) {
      pos[size_t(a)] = rest % spec_.size[size_t(a)];
      rest /= spec_.size[size_t(a)];
    }
    body::CellSpec cell;
    cell.i = pos[0];
    cell.j = pos[1];
    cell.k = pos[2];
    cell.actuated = m.actuated;
    cell.stiffness = m.stiffness;
    cell.actuation = m.actuation;
    cb.cells.push_back(cell);
    kinds.push_back({m.name, {}, m.colour});
    at.push_back(pos);
  }
  std::vector<std::vector<int>> corners;
  p.robot = buildCellRobot(cb, &corners, &voxelCellShape(dim));
  // Rest on the origin's height: the lowest voxel's bottom there.
  double low = p.robot.points[size_t(dim - 1)];
  for (int i = 0; i < p.robot.numPoints(); ++i)
    low = std::min(low, p.robot.points[size_t(i * dim + dim - 1)]);
  for (int i = 0; i < p.robot.numPoints(); ++i)
    p.robot.points[size_t(i * dim + dim - 1)] += spec_.origin.back() - low;
  // Provenance: a point is its corner of the box's grid, a spring the pair
  // of corners it joins, so the same corner is the same element in a parent
  // and its child.
  std::vector<uint64_t> cornerKey(size_t(p.robot.numPoints()), 0);
  for (size_t i = 0; i < corners.size(); ++i)
    for (size_t q = 0; q < corners[i].size(); ++q) {
      const auto &off = voxelCellShape(dim).corners[q];
      uint64_t key = 0;
      for (int a = dim - 1; a >= 0; --a)
        key =
            key * uint64_t(spec_.size[size_t(a)] + 1) + uint64_t(at[i][size_t(a)] + off[size_t(a)]);
      cornerKey[size_t(corners[i][q])] = key;
    }
  p.pointKeys = cornerKey;
  for (const auto &s : p.robot.springs) {
    const uint64_t a = std::min(cornerKey[size_t(s.a)], cornerKey[size_t(s.b)]);
    const uint64_t b = std::max(cornerKey[size_t(s.a)], cornerKey[size_t(s.b)]);
    p.springKeys.push_back(a << 32 | b);
  }
  p.outlines = cellOutlines(dim, corners, kinds, &voxelCellShape(dim));
  // Each material's points (part_mean's masks): the corners of its voxels.
  p.robot.hasParts = true;
  for (size_t i = 0; i < corners.size(); ++i) {
    auto &pts = p.robot.partPoints[kinds[i].part];
    pts.insert(pts.end(), corners[i].begin(), corners[i].end());
  }
  for (auto &[name, pts] : p.robot.partPoints) {
    std::sort(pts.begin(), pts.end());
    pts.erase(std::unique(pts.begin(), pts.end()), pts.end());
  }
  return p;
}

nlohmann::json VoxelBody::toJson(const Genome &g) const {
  nlohmann::json mats = nlohmann::json::array();
  for (const auto &m : spec_.materials)
    mats.push_back(m.name);
  return {{"kind", "voxel"},
          {"body", spec_.name},
          {"size", spec_.size},
          {"materials", mats},
          {"cells", cells(g)}};
}

GenomePtr VoxelBody::fromJson(const nlohmann::json &j) const {
  auto field = [&](const char *k) -> const nlohmann::json & {
    if (!j.is_object() || !j.contains(k))
      throw Error(std::string("a voxel genome needs the field '") + k + "'");
    return j.at(k);
  };
  if (field("kind") != "voxel")
    throw Error("a voxel genome's field 'kind' is \"voxel\", not " + field("kind").dump());
  if (field("size") != nlohmann::json(spec_.size))
    throw Error("this voxel genome's 'size' is " + field("size").dump() + ", but body " +
                quote(spec_.name) + "'s box is " + nlohmann::json(spec_.size).dump());
  const auto &mats = field("materials");
  bool same = mats.is_array() && mats.size() == spec_.materials.size();
  for (size_t i = 0; same && i < mats.size(); ++i)
    same = mats[i] == spec_.materials[i].name;
  if (!same)
    throw Error("this voxel genome's 'materials' are " + mats.dump() + ", but body " +
                quote(spec_.name) + " lists them differently");
  const auto &cj = field("cells");
  if (!cj.is_array() || cj.size() != size_t(spec_.cells()))
    throw Error("a voxel genome's 'cells' is an array of " + std::to_string(spec_.cells()) +
                " numbers (one per cell of the box)");
  std::vector<uint8_t> cs;
  for (size_t i = 0; i < cj.size(); ++i) {
    if (!cj[i].is_number_integer() || cj[i].get<int64_t>() < 0 ||
        cj[i].get<int64_t>() > int64_t(spec_.materials.size()))
      throw Error("cell " + std::to_string(i) + " of the voxel genome is " + cj[i].dump() +
                  "; a cell is 0 (empty) or a material's number 1.." +
                  std::to_string(spec_.materials.size()));
    cs.push_back(uint8_t(cj[i].get<int>()));
  }
  return make(std::move(cs));
}

nlohmann::json VoxelBody::fingerprint() const {
  nlohmann::json mats = nlohmann::json::array();
  for (const auto &m : spec_.materials)
    mats.push_back({{"name", m.name},
                    {"stiffness", m.stiffness},
                    {"actuation", m.actuation},
                    {"actuated", int(m.actuated)}});
  auto rate = [](const body::Scalar &s) {
    nlohmann::json r = nlohmann::json::array();
    for (const auto &t : s.code)
      r.push_back({int(t.op), t.value, t.param});
    return r;
  };
  return {{"kind", "voxel"},
          {"name", spec_.name},
          {"size", spec_.size},
          {"edge", spec_.edge},
          {"origin", spec_.origin},
          {"materials", mats},
          {"weights", spec_.weights},
          {"mutation",
           {{"resample", rate(mutation_.resample)},
            {"add", rate(mutation_.add)},
            {"remove", rate(mutation_.remove)},
            {"swap", rate(mutation_.swap)},
            {"until_changed", mutation_.untilChanged},
            {"max_attempts", mutation_.maxAttempts}}}};
}

} // namespace evoc::evolve
