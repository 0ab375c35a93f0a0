// Checks of `body voxel` settings (docs/language.md, Voxel bodies;
// docs/grammars.md says why it reads so), and the VoxelBodySpec they give.
#include "sema/Checker.h"
#include "sema/Limits.h"

#include <cmath>

namespace evoc::sema {

using namespace ast;

namespace {

std::string q(const std::string &s) { return "'" + s + "'"; }

/// `size = (W, H)` (3D `(X, Y, Z)`, Z up): whole numbers >= 1.
void checkBoxSize(Checker &C, const Expr &e, body::VoxelBodySpec &spec) {
  auto *t = dynCast<TupleExpr>(&e);
  const std::string example = spec.dim == 2 ? "(5, 5)" : "(4, 4, 3)";
  if (!t || int(t->elems.size()) != spec.dim) {
    C.diags.error(e.range, "'size' is the box in cells along each axis: " +
                               std::to_string(spec.dim) + " whole numbers, e.g. " + example);
    return;
  }
  std::vector<int> size;
  int64_t cells = 1;
  for (auto &x : t->elems) {
    auto v = C.evalInt(*x, "size");
    if (!v)
      return;
    if (*v < 1 || *v > kMaxBoxCells) {
      C.diags.error(x->range, "a side of the box is 1 to " + std::to_string(kMaxBoxCells) +
                                  " cells, not " + std::to_string(*v));
      return;
    }
    size.push_back(int(*v));
    cells *= *v;
  }
  if (cells > kMaxBoxCells) {
    C.diags.error(e.range, "a box of " + std::to_string(cells) + " cells is above the limit of " +
                               std::to_string(kMaxBoxCells));
    return;
  }
  spec.size = size;
}

} // namespace

void Checker::checkVoxelBody(const BodyDecl &bd, Body &body, bool chosen) {
  checkKnownKeys(bd.body, "body voxel",
                 {"materials", "size", "edge", "origin", "stiffness", "actuation", "weights"});
  body::VoxelBodySpec spec;
  spec.name = bd.name.name;
  spec.dim = dimKnown ? out.world.dim : 2;
  spec.origin.assign(size_t(spec.dim), 0.0);
  spec.origin.back() = out.world.ground.height;
  double stiffness = body.stiffness, actuation = body.actuation;
  std::vector<const MaterialInfo *> mats;
  const Setting *matSetting = nullptr, *weightSetting = nullptr;
  for (const auto &s : bd.body.settings) {
    const std::string &k = s.key.name;
    if (k == "materials") {
      matSetting = &s;
      for (const auto &v : s.values) {
        const MaterialInfo *m = materialRef(*v, "materials");
        if (!m)
          continue;
        for (const auto *o : mats)
          if (o == m)
            diags.error(v->range, "material " + q(m->spec.name) + " is listed twice");
        mats.push_back(m);
      }
      continue;
    }
    if (k == "weights") {
      weightSetting = &s;
      for (const auto &v : s.values)
        if (auto w = evalNumber(*v, "weights")) {
          if (!(*w >= 0) || !std::isfinite(*w))
            diags.error(v->range, "a sampling weight is a finite number >= 0");
          spec.weights.push_back(*w);
        }
      continue;
    }
    if (k != "size" && k != "edge" && k != "origin" && k != "stiffness" && k != "actuation")
      continue;
    Expr *e = single(s, k);
    if (!e)
      continue;
    if (k == "size") {
      checkBoxSize(*this, *e, spec);
    } else if (k == "origin") {
      auto *t = dynCast<TupleExpr>(e);
      if (!t || int(t->elems.size()) != spec.dim) {
        diags.error(e->range, "'origin' is where the box's corner (0, 0) is: " +
                                  std::to_string(spec.dim) + " numbers");
        continue;
      }
      for (size_t c = 0; c < t->elems.size(); ++c)
        if (auto v = evalNumber(*t->elems[c], "origin"))
          spec.origin[c] = *v;
    } else if (auto v = evalNumber(*e, k)) {
      if (k == "actuation" ? !(*v >= 0) : !(*v > 0)) {
        diags.error(e->range,
                    q(k) + (k == "actuation" ? " must not be negative" : " must be positive"));
        continue;
      }
      (k == "edge" ? spec.edge : k == "stiffness" ? stiffness : actuation) = *v;
    }
  }
  if (!matSetting)
    diags.error(bd.name.range, "a voxel body needs 'materials = NAME, ...;' (the materials a "
                               "cell can be made of; a cell may also be empty)");
  if (!bd.body.find("size"))
    diags.error(bd.name.range, std::string("a voxel body needs 'size = ") +
                                   (spec.dim == 2 ? "(W, H)" : "(X, Y, Z)") +
                                   ";' (its box, in cells)");
  for (const auto *m : mats)
    spec.materials.push_back(resolveMaterial(*m, stiffness, actuation));
  // Evolution Gym's sampling: an empty cell 0.6, each material 0.2.
  if (!weightSetting) {
    spec.weights.assign(spec.materials.size() + 1, 0.2);
    spec.weights[0] = 0.6;
  } else if (const size_t listed = matSetting ? matSetting->values.size() : 0;
             listed > 0 && spec.weights.size() == weightSetting->values.size() &&
             spec.weights.size() != listed + 1) {
    diags.error(weightSetting->values.front()->range,
                "'weights' has one sampling weight for an empty cell, then one per material: " +
                    std::to_string(listed + 1) + " numbers, not " +
                    std::to_string(spec.weights.size()));
  }
  // Evolution Gym's rule: a body has at least one actuator, so sampling must
  // be able to draw one.
  if (matSetting && mats.size() == matSetting->values.size() &&
      spec.weights.size() == spec.materials.size() + 1) {
    bool actuated = false;
    for (size_t i = 0; i < spec.materials.size(); ++i)
      actuated = actuated || (spec.materials[i].actuates() && spec.weights[i + 1] > 0);
    if (!actuated)
      diags.error(matSetting->values.front()->range,
                  "a voxel body needs an actuator, but no material listed here is actuated "
                  "(`actuated = horizontal;` and an actuation above 0) with a sampling weight "
                  "above 0");
  }
  body.edge = spec.edge;
  body.stiffness = stiffness;
  body.actuation = actuation;
  if (chosen && !spec.size.empty())
    out.voxelBody = std::move(spec);
}

} // namespace evoc::sema
