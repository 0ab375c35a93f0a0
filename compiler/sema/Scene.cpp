// world.scene: the static boxes robots collide with (docs/language.md,
// "Scenes"), evaluated into the world's ground.
#include "sema/Checker.h"

#include <cmath>
#include <string>

namespace evoc::sema {

using namespace ast;

namespace {

/// The most boxes a scene may have: every contact builtin selects among all
/// of them with comparisons, so each box costs simulation time.
constexpr size_t kMaxSceneBoxes = 64;
/// How far from the origin a box coordinate may lie.
constexpr double kMaxSceneCoordinate = 1e4;

std::string fmtNumber(double v) {
  std::string s = std::to_string(v);
  while (s.size() > 1 && s.back() == '0')
    s.pop_back();
  if (!s.empty() && s.back() == '.')
    s.pop_back();
  return s;
}

} // namespace

void Checker::checkScene(Expr &e) {
  World &w = out.world;
  const int dim = w.dim;
  const std::string form = dim == 2 ? "box(x0, y0, x1, y1)" : "box(x0, y0, z0, x1, y1, z1)";
  auto *list = dynCast<ListExpr>(&e);
  if (!list) {
    diags.error(e.range, "world.scene must be a list of boxes: [" + form + ", ...]");
    return;
  }
  static const char *const kAxes[] = {"x", "y", "z"};
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
    call->ref = CallRef::Setting;
    if (!call->namedArgs.empty()) {
      diags.error(call->namedArgs[0].name.range,
                  "box() takes its corners as numbers, without names: " + form);
      continue;
    }
    if (call->args.size() != size_t(2 * dim)) {
      diags.error(call->range, "a box in a dim = " + std::to_string(dim) + " world takes " +
                                   std::to_string(2 * dim) + " numbers, " + form + ", not " +
                                   std::to_string(call->args.size()));
      continue;
    }
    SceneBox b;
    bool ok = true;
    for (int k = 0; k < 2 * dim; ++k) {
      const Expr &a = *call->args[size_t(k)];
      const std::string what =
          std::string("world.scene box ") + kAxes[k % dim] + (k < dim ? "0" : "1");
      auto v = evalNumber(a, what);
      if (v && std::fabs(*v) > kMaxSceneCoordinate) {
        diags.error(a.range, what + " = " + fmtNumber(*v) + " lies outside [-" +
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
        diags.error(call->args[size_t(k + dim)]->range,
                    std::string("this box is empty: ") + kAxes[k] +
                        "1 = " + fmtNumber(b.hi[size_t(k)]) + " must be greater than " + kAxes[k] +
                        "0 = " + fmtNumber(b.lo[size_t(k)]));
        ok = false;
      }
    if (!ok)
      continue;
    b.floating = b.lo[size_t(dim - 1)] > w.ground.shape().highestUnder(b, dim, w.ground.height);
    w.ground.scene.push_back(b);
  }
}

} // namespace evoc::sema
