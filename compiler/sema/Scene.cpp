// world.scene: the static boxes robots collide with (docs/language.md,
// "Scenes"), evaluated into the world's ground.
#include "sema/Checker.h"
#include "sema/Limits.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace evoc::sema {

using namespace ast;

namespace {

/// An object's default mass is one point mass per voxel of this side (a
/// voxel body's points are about one per voxel).
constexpr double kVoxelSide = 0.05;

std::string fmtNumber(double v) {
  std::string s = std::to_string(v);
  while (s.size() > 1 && s.back() == '0')
    s.pop_back();
  if (!s.empty() && s.back() == '.')
    s.pop_back();
  return s;
}

} // namespace

std::optional<SceneBox> Checker::evalBox(CallExpr &call, const std::string &what,
                                         const std::vector<std::string> &named) {
  const int dim = out.world.dim;
  const std::string form = dim == 2 ? "box(x0, y0, x1, y1)" : "box(x0, y0, z0, x1, y1, z1)";
  static const char *const kAxes[] = {"x", "y", "z"};
  call.ref = CallRef::Setting;
  for (const auto &na : call.namedArgs)
    if (std::find(named.begin(), named.end(), na.name.name) == named.end()) {
      diags.error(na.name.range, named.empty()
                                     ? "box() takes its corners as numbers, without names: " + form
                                     : "box() in " + what + " takes its corners as numbers and " +
                                           named.front() + " = M, not '" + na.name.name + "'");
      return std::nullopt;
    }
  if (call.args.size() != size_t(2 * dim)) {
    diags.error(call.range, "a box in a dim = " + std::to_string(dim) + " world takes " +
                                std::to_string(2 * dim) + " numbers, " + form + ", not " +
                                std::to_string(call.args.size()));
    return std::nullopt;
  }
  SceneBox b;
  bool ok = true;
  for (int k = 0; k < 2 * dim; ++k) {
    const Expr &a = *call.args[size_t(k)];
    const std::string coord = what + " box " + kAxes[k % dim] + (k < dim ? "0" : "1");
    auto v = evalNumber(a, coord);
    if (v && std::fabs(*v) > kMaxSceneCoordinate) {
      diags.error(a.range, coord + " = " + fmtNumber(*v) + " lies outside [-" +
                               fmtNumber(kMaxSceneCoordinate) + ", " +
                               fmtNumber(kMaxSceneCoordinate) + "]");
      v.reset();
    }
    if (!v) {
      ok = false;
      continue;
    }
    (k < dim ? b.lo : b.hi)[size_t(k % dim)] = *v;
  }
  for (int k = 0; ok && k < dim; ++k)
    if (!(b.lo[size_t(k)] < b.hi[size_t(k)])) {
      diags.error(call.args[size_t(k + dim)]->range, std::string("this box is empty: ") + kAxes[k] +
                                                         "1 = " + fmtNumber(b.hi[size_t(k)]) +
                                                         " must be greater than " + kAxes[k] +
                                                         "0 = " + fmtNumber(b.lo[size_t(k)]));
      ok = false;
    }
  if (!ok)
    return std::nullopt;
  return b;
}

void Checker::checkScene(Expr &e) {
  World &w = out.world;
  const int dim = w.dim;
  const std::string form = dim == 2 ? "box(x0, y0, x1, y1)" : "box(x0, y0, z0, x1, y1, z1)";
  auto *list = dynCast<ListExpr>(&e);
  if (!list) {
    diags.error(e.range, "world.scene must be a list of boxes: [" + form + ", ...]");
    return;
  }
  for (size_t i = 0; i < list->elems.size(); ++i) {
    Expr &item = *list->elems[i];
    if (i == kMaxSceneBoxes) {
      diags.error(item.range, "a scene has at most " + std::to_string(kMaxSceneBoxes) +
                                  " boxes (each costs comparisons in every contact); join "
                                  "neighbouring boxes into larger ones");
      return;
    }
    auto *call = dynCast<CallExpr>(&item);
    if (!call || call->callee.name != "box") {
      diags.error(item.range, "a scene holds boxes: " + form);
      continue;
    }
    auto b = evalBox(*call, "world.scene", {});
    if (!b)
      continue;
    b->floating = b->lo[size_t(dim - 1)] > w.ground.shape().highestUnder(*b, dim, w.ground.height);
    w.ground.scene.push_back(*b);
  }
}

void Checker::checkObjects(Expr &e) {
  World &w = out.world;
  const int dim = w.dim;
  const std::string form =
      dim == 2 ? "box(x0, y0, x1, y1, mass = M)" : "box(x0, y0, z0, x1, y1, z1, mass = M)";
  auto *list = dynCast<ListExpr>(&e);
  if (!list) {
    diags.error(e.range, "world.objects must be a list of boxes: [" + form + ", ...]");
    return;
  }
  for (size_t i = 0; i < list->elems.size(); ++i) {
    Expr &item = *list->elems[i];
    if (i == kMaxObjects) {
      diags.error(item.range, "a world has at most " + std::to_string(kMaxObjects) +
                                  " objects (each meets every point of the body in every "
                                  "step)");
      return;
    }
    auto *call = dynCast<CallExpr>(&item);
    if (!call || call->callee.name != "box") {
      diags.error(item.range, "world.objects holds boxes: " + form);
      continue;
    }
    auto b = evalBox(*call, "world.objects", {"mass"});
    if (!b)
      continue;
    WorldObject o;
    o.lo = b->lo;
    o.hi = b->hi;
    o.mass = 1;
    for (int k = 0; k < dim; ++k) // one point mass per voxel of side 0.05 (docs/language.md)
      o.mass *= (o.hi[size_t(k)] - o.lo[size_t(k)]) / kVoxelSide;
    bool ok = true;
    for (const auto &na : call->namedArgs) {
      auto m = evalNumber(*na.value, "an object's mass");
      if (m && !(*m > 0 && *m <= kMaxObjectMass)) {
        diags.error(na.value->range, "an object's mass must lie in (0, " +
                                         fmtNumber(kMaxObjectMass) + "], not " + fmtNumber(*m));
        m.reset();
      }
      if (m)
        o.mass = *m;
      else
        ok = false;
    }
    const double ground = w.ground.shape().highestUnder(*b, dim, w.ground.height);
    if (o.lo[size_t(dim - 1)] < ground - 1e-12) {
      diags.error(call->range, "object " + std::to_string(i) +
                                   " starts in the ground: its "
                                   "bottom " +
                                   fmtNumber(o.lo[size_t(dim - 1)]) + " lies below the ground's " +
                                   fmtNumber(ground) +
                                   " under it (objects start at rest on or above it)");
      ok = false;
    }
    for (size_t j = 0; ok && j < w.ground.scene.size(); ++j) {
      const SceneBox &s = w.ground.scene[j];
      bool overlap = true;
      for (int k = 0; k < dim; ++k)
        overlap = overlap && o.lo[size_t(k)] < s.hi[size_t(k)] && s.lo[size_t(k)] < o.hi[size_t(k)];
      if (overlap) {
        diags.error(call->range, "object " + std::to_string(i) + " starts inside scene box " +
                                     std::to_string(j) + "; place it on or beside the box");
        ok = false;
      }
    }
    if (ok)
      w.ground.objects.push_back(o);
  }
}

} // namespace evoc::sema
