// Checks of `body grammar` settings, and the GrammarBodySpec they give: the
// grammar with the parts it uses, limits, and stiffness and actuation
// resolved onto every spring.
#include "sema/Checker.h"

namespace evoc::sema {

using namespace ast;

namespace {

std::string q(const std::string &s) { return "'" + s + "'"; }

} // namespace

void Checker::checkGrammarBody(const BodyDecl &bd, Body &body, bool chosen) {
  checkKnownKeys(bd.body, "body grammar",
                 {"grammar", "scale", "stiffness", "actuation", "max_parts", "max_points",
                  "max_springs", "max_depth", "overlap", "actuator_p"});
  body::GrammarBodySpec spec;
  spec.name = bd.name.name;
  std::optional<double> stiffness, actuation;
  const GrammarInfo *gi = nullptr;
  // The setting's value range, for the limit messages below.
  std::map<std::string, SourceRange> at;
  for (const auto &s : bd.body.settings) {
    const std::string &k = s.key.name;
    Expr *e = single(s, k);
    if (!e)
      continue;
    at[k] = e->range;
    if (k == "grammar") {
      auto n = evalName(*e, k);
      if (!n)
        continue;
      for (const auto &g : grammarInfos)
        if (g.decl->name.name == *n)
          gi = &g;
      if (!gi) {
        std::vector<std::string> c;
        for (auto *g : grammars)
          c.push_back(g->name.name);
        undefined(e->range, "grammar", *n, c);
        continue;
      }
      body.grammar = *n;
    } else if (k == "max_parts" || k == "max_points" || k == "max_springs" || k == "max_depth") {
      auto v = evalInt(*e, k);
      if (!v)
        continue;
      if (*v < (k == "max_depth" ? 0 : 1) || *v > (1 << 30)) {
        diags.error(e->range,
                    q(k) + (k == "max_depth" ? " must not be negative" : " must be at least 1"));
        continue;
      }
      int n = int(*v);
      if (k == "max_parts")
        spec.maxParts = n, body.maxParts = n;
      else if (k == "max_points")
        spec.maxPoints = n;
      else if (k == "max_springs")
        spec.maxSprings = n;
      else
        spec.maxDepth = n;
    } else if (k == "scale" || k == "stiffness") {
      auto v = evalNumber(*e, k);
      if (v && !(*v > 0))
        diags.error(e->range, q(k) + " must be positive");
      else if (v && k == "scale")
        spec.scale = body.scale = *v;
      else if (v)
        stiffness = v;
    } else if (k == "actuation" || k == "actuator_p") {
      auto v = evalNumber(*e, k);
      if (v && (*v < 0 || (k == "actuator_p" && *v > 1)))
        diags.error(e->range, k == "actuation" ? "'actuation' must not be negative"
                                               : "'actuator_p' is a probability in [0, 1]");
      else if (v && k == "actuation")
        actuation = v;
      else if (v)
        spec.actuatorP = *v;
    } else if (k == "overlap") {
      auto n = evalName(*e, k);
      if (n && *n == "prune")
        spec.overlap = body::Overlap::Prune;
      else if (n && *n == "reject")
        spec.overlap = body::Overlap::Reject;
      else if (n) {
        std::string c = closest(*n, {"prune", "reject"});
        diags.error(e->range,
                    "unknown overlap " + q(*n) +
                        (c.empty() ? "; expected prune or reject" : "; did you mean '" + c + "'?"));
      }
    }
  }
  if (!bd.body.find("grammar"))
    diags.error(bd.name.range, "a grammar body needs 'grammar = NAME;'");
  if (!bd.body.find("max_parts"))
    diags.error(bd.name.range, "a grammar body needs 'max_parts = N;' (sampling stops there)");
  if (!gi || !gi->ok || gi->spec.start < 0)
    return;
  // The smallest body the grammar derives must fit the body's limits.
  auto fits = [&](const char *key, int limit, int need, const char *what) {
    if (limit > 0 && need > limit)
      diags.error(at[key], "the smallest body grammar " + q(gi->decl->name.name) + " derives has " +
                               std::to_string(need) + " " + what + ", more than " + key + " = " +
                               std::to_string(limit));
  };
  fits("max_parts", spec.maxParts, gi->minParts, "parts");
  fits("max_points", spec.maxPoints, gi->minPoints, "points");
  fits("max_springs", spec.maxSprings, gi->minSprings, "springs");
  if (bd.body.find("max_depth") && gi->minDepth > spec.maxDepth)
    diags.error(at["max_depth"],
                "the smallest body grammar " + q(gi->decl->name.name) + " derives is " +
                    std::to_string(gi->minDepth) +
                    " parts deep, more than max_depth = " + std::to_string(spec.maxDepth));
  if (!chosen)
    return;
  spec.grammar = gi->spec;
  spec.dim = dimKnown ? out.world.dim : 2;
  spec.groundY = out.world.ground.height;
  for (int pi : gi->usedParts) {
    body::PartSpec part = out.partSpecs[size_t(pi)];
    const PartExtra &ex = partExtras[size_t(pi)];
    if (!dimKnown)
      spec.dim = part.dim;
    for (size_t k = 0; k < part.springs.size(); ++k) {
      auto &sp = part.springs[k];
      sp.stiffness = ex.springStiffness[k] ? *ex.springStiffness[k]
                     : ex.stiffness        ? *ex.stiffness
                     : stiffness           ? *stiffness
                                           : 3e4;
      sp.actuation = ex.actuation ? *ex.actuation : actuation ? *actuation : 0.1;
    }
    for (auto &port : part.ports) { // a hinge's motor: the part's defaults
      port.leverStiffness = ex.stiffness ? *ex.stiffness : stiffness ? *stiffness : 3e4;
      port.leverActuation = ex.actuation ? *ex.actuation : actuation ? *actuation : 0.1;
    }
    spec.grammar.parts.push_back(std::move(part));
  }
  out.grammarBody = std::move(spec);
}

} // namespace evoc::sema
