// Checks of `material` declarations (docs/language.md, Materials) and of a
// part's `material = NAME;`: what a material gives the springs of the
// voxels and parts made of it, and its colour in pictures.
#include "sema/Checker.h"

#include <algorithm>
#include <cctype>

namespace evoc::sema {

using namespace ast;

namespace {

std::string q(const std::string &s) { return "'" + s + "'"; }

/// "#rrggbb": the one colour form every picture (SVG, the report) reads.
bool isColour(const std::string &s) {
  if (s.size() != 7 || s[0] != '#')
    return false;
  for (size_t i = 1; i < 7; ++i)
    if (!std::isxdigit(static_cast<unsigned char>(s[i])))
      return false;
  return true;
}

/// Properties a researcher may expect of a material that evoc's physics
/// does not have, each with why.
const char *unsupported(const std::string &key) {
  if (key == "mass" || key == "density")
    return "every point has unit mass in evoc's mass-spring physics (docs/language.md, "
           "Materials); a material sets its springs' stiffness and actuation";
  if (key == "damping" || key == "dashpot")
    return "damping is the world's (world.damping, world.dashpot), the same for every spring";
  return nullptr;
}

} // namespace

void Checker::checkMaterials() {
  static const std::vector<std::string> keys = {"stiffness", "actuation", "actuated", "colour",
                                                "color"};
  for (auto *md : materials) {
    MaterialInfo info;
    info.decl = md;
    info.spec.name = md->name.name;
    const int errorsBefore = diags.errorCount();
    // The properties evoc's physics does not have are known keys with an
    // error of their own.
    std::vector<std::string> all = keys;
    all.insert(all.end(), {"mass", "density", "damping", "dashpot"});
    checkKnownKeys(md->body, "material", all);
    for (const auto &s : md->body.settings)
      if (const char *why = unsupported(s.key.name))
        diags.error(s.key.range, "a material has no " + q(s.key.name) + ": " + why);
    for (const auto &s : md->body.settings) {
      const std::string &k = s.key.name;
      Expr *e = std::find(keys.begin(), keys.end(), k) != keys.end() ? single(s, k) : nullptr;
      if (!e)
        continue;
      if (k == "stiffness") {
        if (auto v = evalNumber(*e, k)) {
          if (!(*v > 0))
            diags.error(e->range, "'stiffness' must be positive");
          else
            info.spec.stiffness = *v, info.hasStiffness = true;
        }
      } else if (k == "actuation") {
        if (auto v = evalNumber(*e, k)) {
          if (!(*v >= 0))
            diags.error(e->range, "'actuation' must not be negative");
          else
            info.spec.actuation = *v, info.hasActuation = true;
        }
      } else if (k == "actuated") {
        if (auto t = cellTemplate(*this, *e, dimKnown ? out.world.dim : 3))
          info.spec.actuated = *t;
      } else {
        auto *str = dynCast<StringExpr>(e);
        if (!str || !isColour(str->value))
          diags.error(e->range, "a material's colour is a string \"#rrggbb\" (e.g. \"#f08c2e\")");
        else
          info.spec.colour = str->value;
      }
    }
    info.ok = diags.errorCount() == errorsBefore;
    materialInfos.push_back(std::move(info));
  }
}

const Checker::MaterialInfo *Checker::materialRef(const Expr &e, const std::string &what) {
  auto n = evalName(e, what);
  if (!n)
    return nullptr;
  for (const auto &m : materialInfos)
    if (m.spec.name == *n)
      return &m;
  std::vector<std::string> c;
  for (const auto &m : materialInfos)
    c.push_back(m.spec.name);
  undefined(e.range, "material", *n, c);
  return nullptr;
}

body::MaterialSpec Checker::resolveMaterial(const MaterialInfo &m, double stiffness,
                                            double actuation) const {
  body::MaterialSpec s = m.spec;
  if (!m.hasStiffness)
    s.stiffness = stiffness;
  if (!m.hasActuation)
    s.actuation = actuation;
  return s;
}

} // namespace evoc::sema
