// Expression of a grammar genome: breadth-first rigid placement of parts,
// mirrored tied pairs, merging of coincident points (a spatial hash), spring
// collapse, overlap detection and pruning, lift, provenance and outlines.
#include "evolve/bodies/GrammarInternal.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <unordered_map>

namespace evoc::evolve {

using namespace grammar;

namespace {

/// Grid of merged points keyed by cells of the merge tolerance, so that a
/// new point finds its coincident predecessors in O(1) instead of O(n).
class PointGrid {
public:
  PointGrid(int dim, double cell) : dim_(dim), cell_(cell) {}
  /// The first point (lowest id) within tol of x that `exclude` rejects not.
  template <class Exclude>
  int find(const double *x, double tol, const std::vector<double> &pts, Exclude exclude) const {
    long long c[3] = {0, 0, 0};
    for (int k = 0; k < dim_; ++k)
      c[k] = (long long)std::floor(x[k] / cell_);
    int best = -1;
    for (int dx = -1; dx <= 1; ++dx)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dz = (dim_ == 3 ? -1 : 0); dz <= (dim_ == 3 ? 1 : 0); ++dz) {
          auto it = map_.find(key(c[0] + dx, c[1] + dy, c[2] + dz));
          if (it == map_.end())
            continue;
          for (int id : it->second) {
            if ((best >= 0 && id > best) || exclude(id))
              continue;
            double d2 = 0;
            for (int k = 0; k < dim_; ++k)
              d2 += (pts[id * dim_ + k] - x[k]) * (pts[id * dim_ + k] - x[k]);
            if (d2 <= tol * tol)
              best = id;
          }
        }
    return best;
  }
  void insert(const double *x, int id) {
    long long c[3] = {0, 0, 0};
    for (int k = 0; k < dim_; ++k)
      c[k] = (long long)std::floor(x[k] / cell_);
    map_[key(c[0], c[1], c[2])].push_back(id);
  }

private:
  static uint64_t key(long long x, long long y, long long z) {
    uint64_t h = uint64_t(x) * 0x9e3779b97f4a7c15ull;
    h ^= uint64_t(y) * 0xc2b2ae3d27d4eb4full + (h << 6) + (h >> 2);
    h ^= uint64_t(z) * 0x165667b19e3779f9ull + (h << 6) + (h >> 2);
    return h;
  }
  int dim_;
  double cell_;
  std::unordered_map<uint64_t, std::vector<int>> map_;
};

/// The cells of a placed part as coordinate lists (2D polygons in order or
/// 3D point sets), with their phenotype point ids.
struct PlacedCells {
  std::vector<std::vector<int>> local; ///< local point indices per cell
  double lo[3], hi[3];                 ///< bounding box of all cells
};

PlacedCells cellsOf(const body::PartSpec &p, const Instance &in, int dim) {
  PlacedCells pc;
  if (!p.cells.empty()) {
    pc.local = p.cells;
  } else if (dim == 2) {
    std::vector<std::array<double, 2>> pts;
    for (size_t i = 0; i < p.points.size(); ++i)
      pts.push_back({in.world[i * 2], in.world[i * 2 + 1]});
    pc.local.push_back(geom::convexHull2D(pts));
  } else {
    std::vector<int> all(p.points.size());
    for (size_t i = 0; i < all.size(); ++i)
      all[i] = int(i);
    pc.local.push_back(all);
  }
  for (int k = 0; k < 3; ++k)
    pc.lo[k] = 1e300, pc.hi[k] = -1e300;
  for (const auto &cell : pc.local)
    for (int i : cell)
      for (int k = 0; k < dim; ++k) {
        pc.lo[k] = std::min(pc.lo[k], in.world[i * dim + k]);
        pc.hi[k] = std::max(pc.hi[k], in.world[i * dim + k]);
      }
  return pc;
}

bool penetrate(const Instance &a, const PlacedCells &ca, const Instance &b, const PlacedCells &cb,
               int dim, double eps) {
  for (int k = 0; k < dim; ++k)
    if (std::min(ca.hi[k], cb.hi[k]) - std::max(ca.lo[k], cb.lo[k]) <= eps)
      return false;
  for (const auto &x : ca.local)
    for (const auto &y : cb.local) {
      if (x.size() < size_t(dim + 1) || y.size() < size_t(dim + 1))
        continue; // a degenerate cell has no interior
      if (dim == 2) {
        std::vector<std::array<double, 2>> px, py;
        for (int i : x)
          px.push_back({a.world[i * 2], a.world[i * 2 + 1]});
        for (int i : y)
          py.push_back({b.world[i * 2], b.world[i * 2 + 1]});
        if (geom::polygonsPenetrate(px, py, eps))
          return true;
      } else {
        std::vector<std::array<double, 3>> px, py;
        for (int i : x)
          px.push_back({a.world[i * 3], a.world[i * 3 + 1], a.world[i * 3 + 2]});
        for (int i : y)
          py.push_back({b.world[i * 3], b.world[i * 3 + 1], b.world[i * 3 + 2]});
        if (geom::hullsPenetrate(px, py, eps))
          return true;
      }
    }
  return false;
}

/// The linear part of a map, as a map without translation.
geom::Affine linear(const geom::Affine &a) {
  geom::Affine r = a;
  r.t = {0, 0, 0};
  return r;
}

/// A child's attach points and the parent's port points they meet: the
/// parent's port reversed (the child lands outside), shifted by the turn.
struct PortMatch {
  int n = 0;                    ///< points on each side
  std::vector<int> tgt;         ///< parent point met by each attach point
  std::vector<double> local;    ///< the child's points, part coordinates
  std::vector<double> src, dst; ///< attach points (child), targets (parent a0)
};

/// The child's placement a0 that moves its attach points onto the parent's
/// port (`residual`: how far off the fit is). The orientation the port leaves
/// free starts from the parent's, turned by the child's angle.
geom::Affine childFrame(int dim, const Instance &par, const GrammarNode &cn, const PortMatch &pm,
                        double &residual) {
  const int n = pm.n;
  const auto &src = pm.src, &dst = pm.dst;
  geom::Affine turnBy = geom::rotation(dim, cn.angle * M_PI / 180);
  geom::Affine base = geom::compose(linear(par.a0), turnBy);
  bool free = dim == 2 ? n == 1 : n <= 2;
  geom::Affine a0;
  residual = 0;
  if (free && n == 1) {
    a0 = base;
    double y[3];
    geom::apply(a0, &src[0], y);
    for (int c = 0; c < dim; ++c)
      a0.t[c] = dst[c] - y[c];
  } else if (free) { // 3D, two points: least rotation from the parent's frame, then angle
    std::vector<double> rotated(src.size());
    geom::Affine pl = linear(par.a0);
    for (int k = 0; k < n; ++k)
      geom::apply(pl, &src[k * 3], &rotated[k * 3]);
    geom::Affine f = geom::compose(geom::fit(3, rotated.data(), dst.data(), n, 1, &residual), pl);
    double u[3], len = 0;
    for (int c = 0; c < 3; ++c)
      u[c] = dst[3 + c] - dst[c], len += u[c] * u[c];
    len = std::sqrt(len);
    for (double &x : u)
      x /= len > 0 ? len : 1;
    geom::Affine spin = geom::axisRotation(u, cn.angle * M_PI / 180);
    geom::Affine toC = geom::identity(3), fromC = geom::identity(3);
    for (int c = 0; c < 3; ++c)
      toC.t[c] = -dst[c], fromC.t[c] = dst[c];
    a0 = geom::compose(fromC, geom::compose(spin, geom::compose(toC, f)));
  } else {
    a0 = geom::fit(dim, src.data(), dst.data(), n, 1, &residual);
  }
  return a0;
}

/// The placement of one genome, step by step: each step that can fail
/// returns why (nullopt: it did not).
class Assembler {
public:
  Assembler(const GrammarBody &body, const GrammarGenome &g, bool stopAtOverlap)
      : s_(body.spec()), g_(g), dim_(s_.dim), tol_(1e-6 * s_.scale), stopAtOverlap_(stopAtOverlap),
        grid_(dim_, tol_) {
    as_.ph.robot.dim = dim_;
  }

  Assembly run() {
    if (auto why = placeAll()) {
      as_.ph.valid = false;
      as_.ph.reason = std::move(*why);
    }
    return std::move(as_);
  }

private:
  using Failure = std::optional<std::string>;

  /// The root, then breadth first every bound child, then the checks of the
  /// whole body and the lift.
  Failure placeAll() {
    if (auto why = placeRoot())
      return why;
    for (size_t q = 0; q < as_.inst.size(); ++q) {
      const GrammarNode &pn = *as_.inst[q].node;
      for (size_t b = 0; b < altOf(s_, pn).bindings.size(); ++b)
        if (auto why = placeChild(q, b))
          return why;
    }
    addMotors();
    addOutlines();
    addPartPoints();
    if (auto why = checkWhole())
      return why;
    lift();
    return std::nullopt;
  }

  Failure placeRoot() {
    Instance root;
    root.node = &g_.root;
    root.a0 = geom::identity(dim_);
    root.w = geom::identity(dim_);
    root.scale = s_.grammar.symbols[size_t(g_.root.symbol)].levelScale;
    root.local = localPoints(s_, g_.root, root.scale);
    root.gid.assign(partOf(s_, g_.root).points.size(), -1);
    as_.inst.push_back(std::move(root));
    if (!place(as_.inst.back()) && stopAtOverlap_)
      return overlapReason();
    return std::nullopt;
  }

  /// The child at binding b of instance q (if the genome has one): fitted to
  /// the parent's port, once or as a mirrored tied pair.
  Failure placeChild(size_t q, size_t b) {
    const GrammarNode &pn = *as_.inst[q].node;
    const auto &pa = altOf(s_, pn);
    const auto &pp = s_.grammar.parts[pa.part];
    const GrammarNode *cn = pn.children[b].get();
    if (!cn)
      return std::nullopt;
    const auto &bind = pa.bindings[b];
    const auto &ca = altOf(s_, *cn);
    const auto &cp = s_.grammar.parts[ca.part];
    const auto &port = pp.ports[bind.ports[0]].points;
    if (ca.attach < 0 || ca.attach >= int(cp.ports.size()))
      return fmt::format("node {}: its alternative has no attach port", cn->id);
    const auto &attach = cp.ports[ca.attach].points;
    PortMatch pm;
    pm.n = int(port.size());
    const int n = pm.n;
    if (int(attach.size()) != n || n == 0)
      return fmt::format("node {}: attach port {} has {} points, parent port {} has {}", cn->id,
                         cp.ports[ca.attach].name, attach.size(), pp.ports[bind.ports[0]].name, n);
    // Parent port points reversed (the child lands outside), shifted by turn.
    pm.tgt.resize(n);
    const int turn = ca.fixedTurn >= 0 ? ca.fixedTurn : cn->turn;
    for (int k = 0; k < n; ++k)
      pm.tgt[k] = port[n - 1 - ((k + turn) % n)];
    const Instance &par = as_.inst[q];
    const double scale = par.scale * s_.grammar.symbols[size_t(cn->symbol)].levelScale;
    pm.local = localPoints(s_, *cn, scale);
    pm.src.resize(n * dim_);
    pm.dst.resize(n * dim_);
    for (int k = 0; k < n; ++k) {
      for (int c = 0; c < dim_; ++c)
        pm.src[k * dim_ + c] = pm.local[attach[k] * dim_ + c];
      geom::apply(par.a0, &par.local[pm.tgt[k] * dim_], &pm.dst[k * dim_]);
    }
    double residual = 0;
    geom::Affine a0 = childFrame(dim_, par, *cn, pm, residual);
    if (!(residual <= tol_))
      return fmt::format("node {}: part {} does not fit port {} of node {} (residual {:g})", cn->id,
                         cp.name, pp.ports[bind.ports[0]].name, pn.id, residual);
    int copies = int(bind.ports.size());
    geom::Affine reflect;
    if (copies == 2)
      if (auto why = parentReflection(pn, pp, par, reflect))
        return why;
    for (int copy = 0; copy < copies; ++copy) {
      Instance in;
      const Instance &pr = as_.inst[q]; // re-read: push_back may move the vector
      in.node = cn;
      in.parent = int(q);
      in.copy = copies == 2 ? pr.copy * 2 + copy : pr.copy;
      in.path = pr.path;
      in.path.push_back(int(b));
      in.scale = scale;
      in.a0 = a0;
      in.w = copy == 0 ? pr.w : geom::compose(pr.w, reflect);
      in.local = pm.local;
      in.gid.assign(cp.points.size(), -1);
      for (int k = 0; k < n; ++k)
        in.gid[attach[k]] = pr.gid[copy == 0 ? pm.tgt[k] : pp.mirror[pm.tgt[k]]];
      as_.inst.push_back(std::move(in));
      if (!place(as_.inst.back()) && stopAtOverlap_)
        return overlapReason();
    }
    return std::nullopt;
  }

  /// For a tied pair: the parent's reflection in the unmirrored frame,
  /// a0_p M a0_p^-1, into `reflect`.
  Failure parentReflection(const GrammarNode &pn, const body::PartSpec &pp, const Instance &par,
                           geom::Affine &reflect) const {
    if (pp.mirror.size() != pp.points.size())
      return fmt::format("node {}: part {} has a tied pair but no mirror", pn.id, pp.name);
    std::vector<double> mirrored(par.local.size());
    for (size_t i = 0; i < pp.points.size(); ++i)
      for (int c = 0; c < dim_; ++c)
        mirrored[i * dim_ + c] = par.local[pp.mirror[i] * dim_ + c];
    double mres = 0;
    geom::Affine m =
        geom::fit(dim_, par.local.data(), mirrored.data(), int(pp.points.size()), -1, &mres);
    if (!(mres <= tol_))
      return fmt::format("node {}: the mirror of part {} is not a reflection at these "
                         "parameters (residual {:g})",
                         pn.id, pp.name, mres);
    reflect = geom::compose(par.a0, geom::compose(m, geom::inverseOrthogonal(par.a0)));
    return std::nullopt;
  }

  /// Places instance `in` (a0, w, local set; glued gids set): merges its
  /// points, adds its springs, tests its cells. False on an overlap.
  bool place(Instance &in) {
    const auto &p = partOf(s_, *in.node);
    geom::Affine a = geom::compose(in.w, in.a0);
    int np = int(p.points.size());
    in.world.resize(np * dim_);
    for (int i = 0; i < np; ++i)
      geom::apply(a, &in.local[i * dim_], &in.world[i * dim_]);
    uint64_t keyBase = (in.node->id << 20) | (uint64_t(in.copy & 0xff) << 12);
    mergePoints(in, np, keyBase);
    addSprings(in, p, keyBase);
    cells_.push_back(cellsOf(p, in, dim_));
    int j = int(as_.inst.size()) - 1;
    for (int i = 0; i < j; ++i)
      if (penetrate(as_.inst[i], cells_[i], in, cells_[j], dim_, tol_)) {
        if (as_.overlapLater < 0)
          as_.overlapEarlier = i, as_.overlapLater = j;
        return false;
      }
    return true;
  }

  /// Each point of `in` not glued yet: merged into a coincident phenotype
  /// point (not one of its own), or a new one.
  void mergePoints(Instance &in, int np, uint64_t keyBase) {
    Phenotype &ph = as_.ph;
    for (int i = 0; i < np; ++i) {
      if (in.gid[i] >= 0)
        continue;
      const double *x = &in.world[i * dim_];
      int found = grid_.find(x, tol_, ph.robot.points, [&](int id) {
        return std::find(in.gid.begin(), in.gid.end(), id) != in.gid.end();
      });
      if (found < 0) {
        found = ph.robot.numPoints();
        ph.robot.points.insert(ph.robot.points.end(), x, x + dim_);
        ph.pointKeys.push_back(keyBase | uint64_t(i));
        grid_.insert(x, found);
      }
      in.gid[i] = found;
    }
  }

  /// The springs of `in` between distinct points; the first placed spring
  /// between two points wins.
  void addSprings(const Instance &in, const body::PartSpec &p, uint64_t keyBase) {
    for (size_t si = 0; si < p.springs.size(); ++si) {
      const auto &sp = p.springs[si];
      addSpring(in.gid[sp.a], in.gid[sp.b], sp.stiffness,
                sp.gene >= 0 && in.node->genes[sp.gene] ? sp.actuation : 0.0,
                keyBase | uint64_t(si));
    }
  }

  /// A spring between phenotype points ga and gb at their distance, unless
  /// they are one point or already joined (the first placed spring wins).
  void addSpring(int ga, int gb, double stiffness, double actuation, uint64_t key) {
    Phenotype &ph = as_.ph;
    const uint64_t k = (uint64_t(std::min(ga, gb)) << 32) | uint64_t(std::max(ga, gb));
    if (ga == gb || springIndex_.count(k))
      return;
    springIndex_[k] = ph.robot.numSprings();
    runtime::Spring rs;
    rs.a = ga, rs.b = gb;
    double d2 = 0;
    for (int c = 0; c < dim_; ++c) {
      const double d = ph.robot.points[ga * dim_ + c] - ph.robot.points[gb * dim_ + c];
      d2 += d * d;
    }
    rs.rest = std::sqrt(d2);
    rs.stiffness = stiffness;
    rs.actuation = actuation;
    ph.robot.springs.push_back(rs);
    ph.springKeys.push_back(key);
  }

  std::string overlapReason() const {
    const auto &a = *as_.inst[as_.overlapEarlier].node, &b = *as_.inst[as_.overlapLater].node;
    return fmt::format("part {} (node {}) penetrates part {} (node {})", partOf(s_, b).name, b.id,
                       partOf(s_, a).name, a.id);
  }

  /// Hinges (docs/grammars.md, Joints): where a child's attach port and
  /// its parent's port both have a lever, a motor spring joins the two
  /// levers, always actuated, with the child port's stiffness and
  /// actuation; its provenance key is the child's with local index 0xfff.
  void addMotors() {
    for (const Instance &in : as_.inst) {
      if (in.parent < 0)
        continue;
      const Instance &par = as_.inst[size_t(in.parent)];
      const auto &pa = altOf(s_, *par.node);
      const auto &bind = pa.bindings[size_t(in.path.back())];
      const auto &pp = s_.grammar.parts[size_t(pa.part)];
      const auto &ca = altOf(s_, *in.node);
      const auto &cp = s_.grammar.parts[size_t(ca.part)];
      const auto &port = pp.ports[size_t(bind.ports[0])];
      const auto &attach = cp.ports[size_t(ca.attach)];
      if (port.levers.empty() || port.levers.size() != attach.levers.size())
        continue;
      // The mirrored copy of a tied pair meets the mirror of the parent's lever.
      const bool mirrored = bind.ports.size() == 2 && (in.copy & 1);
      for (size_t k = 0; k < port.levers.size(); ++k) { // one motor per lever pair
        const int lever = port.levers[k];
        const int ga = par.gid[size_t(mirrored ? pp.mirror[size_t(lever)] : lever)];
        addSpring(ga, in.gid[size_t(attach.levers[k])], attach.leverStiffness,
                  attach.leverActuation,
                  (in.node->id << 20) | (uint64_t(in.copy & 0xff) << 12) | (0xfffu - k));
      }
    }
  }

  /// Each part's points (part_mean's masks), by part name.
  void addPartPoints() {
    auto &r = as_.ph.robot;
    r.hasParts = true;
    for (const auto &in : as_.inst) {
      auto &pts = r.partPoints[partOf(s_, *in.node).name];
      pts.insert(pts.end(), in.gid.begin(), in.gid.end());
    }
    for (auto &[name, pts] : r.partPoints) {
      std::sort(pts.begin(), pts.end());
      pts.erase(std::unique(pts.begin(), pts.end()), pts.end());
    }
  }

  /// Outlines: each cell of each part, in polygon order, as phenotype points.
  void addOutlines() {
    for (size_t i = 0; i < as_.inst.size(); ++i)
      for (const auto &cell : cells_[i].local) {
        PartOutline o;
        o.part = partOf(s_, *as_.inst[i].node).name;
        o.colour = partOf(s_, *as_.inst[i].node).colour;
        for (int l : cell)
          o.points.push_back(as_.inst[i].gid[l]);
        as_.ph.outlines.push_back(std::move(o));
      }
  }

  /// The whole body: finite, no overlap, within max_points and max_springs.
  Failure checkWhole() const {
    const auto &robot = as_.ph.robot;
    for (double x : robot.points)
      if (!std::isfinite(x))
        return "a point coordinate is not finite";
    if (as_.overlapLater >= 0)
      return overlapReason();
    int np = robot.numPoints();
    if (s_.maxPoints > 0 && np > s_.maxPoints)
      return fmt::format("{} points exceed max_points {}", np, s_.maxPoints);
    if (s_.maxSprings > 0 && robot.numSprings() > s_.maxSprings)
      return fmt::format("{} springs exceed max_springs {}", robot.numSprings(), s_.maxSprings);
    return std::nullopt;
  }

  /// Lift: lowest point (last axis) on the ground, first axis starting at 0.
  void lift() {
    auto &pts = as_.ph.robot.points;
    const int np = as_.ph.robot.numPoints();
    double lo0 = 1e300, loUp = 1e300;
    for (int i = 0; i < np; ++i) {
      lo0 = std::min(lo0, pts[i * dim_]);
      loUp = std::min(loUp, pts[i * dim_ + dim_ - 1]);
    }
    for (int i = 0; i < np; ++i) {
      pts[i * dim_] -= lo0;
      pts[i * dim_ + dim_ - 1] += s_.groundY - loUp;
    }
  }

  const body::GrammarBodySpec &s_;
  const GrammarGenome &g_;
  const int dim_;
  const double tol_;
  const bool stopAtOverlap_;
  Assembly as_;
  PointGrid grid_;
  std::unordered_map<uint64_t, int> springIndex_;
  std::vector<PlacedCells> cells_;
};

} // namespace

namespace grammar {

Assembly assemble(const GrammarBody &body, const GrammarGenome &g, bool stopAtOverlap) {
  return Assembler(body, g, stopAtOverlap).run();
}

} // namespace grammar

Phenotype GrammarBody::expressExact(const GrammarGenome &g) const {
  if (auto e = check(g); !e.empty()) {
    Phenotype ph;
    ph.robot.dim = spec_.dim;
    ph.valid = false;
    ph.reason = e;
    return ph;
  }
  return assemble(*this, g, false).ph;
}

GrammarGenome GrammarBody::prune(const GrammarGenome &g) const {
  GrammarGenome out = g;
  if (spec_.overlap != body::Overlap::Prune || !check(g).empty())
    return out;
  for (;;) {
    Assembly as = assemble(*this, out, true);
    if (as.overlapLater < 0)
      return out;
    // Drop the nearest optional slot on the later part's path from the root.
    const auto &path = as.inst[as.overlapLater].path;
    std::vector<GrammarNode *> chain{&out.root};
    for (int b : path)
      chain.push_back(chain.back()->children[b].get());
    bool dropped = false;
    for (int lvl = int(path.size()); lvl >= 1 && !dropped; --lvl) {
      GrammarNode *parent = chain[lvl - 1];
      if (altOf(spec_, *parent).bindings[path[lvl - 1]].optional) {
        parent->children[path[lvl - 1]].reset();
        dropped = true;
      }
    }
    if (!dropped)
      return out; // a required part overlaps: express reports the body invalid
  }
}

Phenotype GrammarBody::express(const Genome &g) const {
  const auto &gg = dynamic_cast<const GrammarGenome &>(g);
  if (spec_.overlap == body::Overlap::Prune)
    return expressExact(prune(gg));
  return expressExact(gg);
}

} // namespace evoc::evolve
