// The evolve block: population, generations, seed, learn { ... } (selects the
// controller and the loss), fitness, select and invalid rules.
#include "sema/Checker.h"
#include "sema/Limits.h"
#include "sema/SettingKeys.h"

#include <algorithm>
#include <limits>

namespace evoc::sema {

using namespace ast;

static std::string q(const std::string &s) { return "'" + s + "'"; }

namespace {

/// Selects a decl by a `key = NAME` setting or as the only one of its kind.
template <class D>
const D *selectDecl(Checker &C, const SettingsBlock *b, const std::string &key,
                    const std::vector<D *> &all, DeclKind kind, const char *word) {
  const Setting *s = b ? b->find(key) : nullptr;
  if (s) {
    Expr *e = C.single(*s, key);
    if (!e)
      return nullptr;
    auto *n = dynCast<NameExpr>(e);
    if (!n) {
      C.diags.error(e->range, q(key) + " must name a " + word);
      return nullptr;
    }
    auto it = C.names.find(n->name);
    if (it == C.names.end()) {
      std::vector<std::string> cands;
      for (auto *d : all)
        cands.push_back(d->name.name);
      C.undefined(n->range, word, n->name, cands);
      return nullptr;
    }
    if (it->second->kind != kind) {
      C.diags.error(n->range, q(n->name) + " is not a " + word)
          .note(it->second->name.range, q(n->name) + " is declared here");
      return nullptr;
    }
    n->ref = NameRef::Decl;
    return static_cast<const D *>(it->second);
  }
  if (all.size() == 1)
    return all.front();
  return nullptr;
}

/// evolve.population, generations, seed or offspring: a whole number in range.
void evolveCount(Checker &C, const Setting &s, Evolve &ev) {
  const std::string &k = s.key.name;
  const std::string what = "evolve." + k;
  Expr *e = C.single(s, what);
  auto v = e ? C.evalInt(*e, what) : std::nullopt;
  if (!v)
    return;
  // v within [lo, hi], else an error at e; `below` says what lo is.
  auto within = [&](int64_t lo, int64_t hi, const char *below) {
    if (*v < lo)
      C.diags.error(e->range, what + " " + below);
    else if (*v > hi)
      C.diags.error(e->range, what + " = " + std::to_string(*v) + " is above the limit of " +
                                  std::to_string(hi) + "; lower it");
    return *v >= lo && *v <= hi;
  };
  if (k == "population") {
    if (within(1, kMaxPopulation, "must be at least 1"))
      ev.population = *v, ev.populationAt = e->range;
  } else if (k == "generations") {
    if (within(0, kMaxGenerations, "must not be negative"))
      ev.generations = *v;
  } else if (k == "seed") {
    if (within(0, std::numeric_limits<int64_t>::max(), "must not be negative"))
      ev.seed = uint64_t(*v);
  } else if (within(1, kMaxPopulation,
                    "must be at least 1 (the children of every generation after the first)")) {
    ev.offspring = *v;
  }
}

/// evolve.fitness: a reduction over the learning curve of the loss.
void evolveFitness(Checker &C, const Setting &s, Fitness &fitness) {
  Expr *e = C.single(s, "evolve.fitness");
  if (!e)
    return;
  // R(±loss) or -R(±loss), R over the learning curve, normalised to
  // R'(sign * loss): -max(x) = min(-x), -min(x) = max(-x), and mean, last
  // and first commute with the sign.
  double sign = 1;
  bool outerNeg = false;
  Expr *x = e;
  if (auto *u = dynCast<UnaryExpr>(x); u && u->op == UnaryOp::Neg)
    sign = -sign, outerNeg = true, x = u->operand.get();
  auto *call = dynCast<CallExpr>(x);
  Expr *arg = call && call->args.size() == 1 ? call->args[0].get() : nullptr;
  if (arg)
    if (auto *u = dynCast<UnaryExpr>(arg); u && u->op == UnaryOp::Neg)
      sign = -sign, arg = u->operand.get();
  auto *name = arg ? dynCast<NameExpr>(arg) : nullptr;
  const std::string r = call ? call->callee.name : "";
  if (!name || name->name != "loss" || !fitnessKind(r, sign)) {
    C.diags.error(e->range, "fitness must reduce the learning curve of the loss: "
                            "max(-loss), mean(-loss), last(-loss), ...");
    return;
  }
  call->ref = CallRef::Setting;
  const std::string reduce = !outerNeg ? r : r == "max" ? "min" : r == "min" ? "max" : r;
  fitness.kind = *fitnessKind(reduce, sign); // each reduction has both signs
}

/// evolve.select: truncation(mu_plus_lambda), tournament(K) or map_elites(...).
void evolveSelect(Checker &C, const Setting &s, Evolve &ev) {
  Expr *e = C.single(s, "evolve.select");
  if (!e)
    return;
  if (auto *word = dynCast<NameExpr>(e); word && word->name == "random") {
    // Neutral selection, the control of a study of what selection does
    // (docs/evolution.md, "Selection").
    ev.select = Select{};
    ev.select.kind = Select::Kind::Random;
    return;
  }
  auto *call = dynCast<CallExpr>(e);
  if (call && call->callee.name == "truncation" && call->args.size() == 1 &&
      call->namedArgs.empty()) {
    auto *n = dynCast<NameExpr>(call->args[0].get());
    if (n && n->name == "mu_comma_lambda") {
      // The engine selects from parents + children only; refused rather
      // than run as mu + lambda.
      C.diags.error(n->range, "truncation(mu_comma_lambda) is not supported yet; use "
                              "truncation(mu_plus_lambda) or tournament(K)");
      return;
    }
    if (n && n->name == "mu_plus_lambda") {
      call->ref = CallRef::Setting;
      ev.select.kind = Select::Kind::Truncation;
      return;
    }
  }
  if (call && call->callee.name == "tournament" && call->args.size() == 1) {
    if (auto n = C.evalInt(*call->args[0], "tournament size")) {
      if (*n < 2)
        C.diags.error(call->args[0]->range, "a tournament needs at least 2 entrants");
      call->ref = CallRef::Setting;
      ev.select.kind = Select::Kind::Tournament;
      ev.select.tournamentSize = *n;
    }
    return;
  }
  if (call && call->callee.name == "map_elites") {
    call->ref = CallRef::Setting;
    ev.select = Select{};
    ev.select.kind = Select::Kind::MapElites;
    C.checkMapElites(*call, ev.select);
    return;
  }
  C.diags.error(e->range, "select must be truncation(mu_plus_lambda), tournament(K), "
                          "map_elites(DESCRIPTOR, ...) or random");
}

/// evolve.invalid: the rules that make a design invalid.
void evolveInvalid(Checker &C, const Setting &s, std::vector<InvalidRule> &invalid) {
  for (auto &v : s.values) {
    auto *call = dynCast<CallExpr>(v.get());
    const std::string n = call ? call->callee.name : "";
    if (n == "nonfinite" && call->args.empty()) {
      // a non-finite loss is always invalid: the rule adds nothing
      call->ref = CallRef::Setting;
      continue;
    }
    if ((n == "loss_above" || n == "loss_jump") && call->args.size() == 1) {
      call->ref = CallRef::Setting;
      if (auto x = C.evalNumber(*call->args[0], n)) {
        if (*x <= 0)
          C.diags.error(call->args[0]->range, n + " needs a positive threshold");
        else
          invalid.push_back(
              {n == "loss_above" ? InvalidRule::Kind::LossAbove : InvalidRule::Kind::LossJump, *x});
      }
      continue;
    }
    C.diags.error(v->range, "invalid rules are loss_above(X), loss_jump(X) and nonfinite()");
  }
}

} // namespace

void Checker::checkEvolve() {
  Evolve &ev = out.evolve;
  const SettingsBlock *b = evolves.empty() ? nullptr : &evolves.front()->body;
  const SettingsBlock *learn = b ? b->findBlock("learn") : nullptr;
  if (!b) {
    if (trains.empty()) { // a library file: pick the only controller and loss
      ev.learn.controller =
          selectDecl(*this, learn, "controller", controllers, DeclKind::Controller, "controller");
      ev.learn.loss = selectDecl(*this, learn, "loss", losses, DeclKind::Loss, "loss");
    }
    return;
  }
  out.hasEvolve = true;
  SourceRange at = evolves.front()->name.range;
  ev.populationAt = at;
  checkKnownKeys(*b, "evolve", settingKeys("evolve"), {"learn"});
  if (!learn)
    diags.error(at, "evolve needs a 'learn { ... }' block (iterations, optimizer)");
  selectLearn(learn, at, ev.learn);
  for (const auto &s : b->settings) {
    const std::string &k = s.key.name;
    if (k == "population" || k == "generations" || k == "seed" || k == "offspring")
      evolveCount(*this, s, ev);
    else if (k == "fitness")
      evolveFitness(*this, s, ev.fitness);
    else if (k == "select")
      evolveSelect(*this, s, ev);
    else if (k == "invalid")
      evolveInvalid(*this, s, ev.invalid);
  }
  checkLearn(learn, "evolve.learn", ev.learn);
}

void Checker::checkTrain() {
  if (trains.empty())
    return;
  const SettingsBlock &b = trains.front()->body;
  SourceRange at = trains.front()->name.range;
  if (!evolves.empty()) {
    diags
        .error(at, "a program either evolves bodies ('evolve') or trains one fixed body "
                   "('train'), not both; remove one of the blocks")
        .note(evolves.front()->name.range, "the 'evolve' block is here");
    return;
  }
  out.hasTrain = true;
  Train &tr = out.train;
  checkKnownKeys(b, "train", settingKeys("train"), {"learn"});
  const SettingsBlock *learn = b.findBlock("learn");
  if (!learn)
    diags.error(at, "train needs a 'learn { ... }' block (iterations, optimizer)");
  selectLearn(learn, at, tr.learn);
  checkLearn(learn, "train.learn", tr.learn);
  for (const auto &s : b.settings) {
    const std::string &k = s.key.name;
    Expr *e = single(s, "train." + k);
    auto v = e ? evalInt(*e, "train." + k) : std::nullopt;
    if (!v)
      continue;
    if (*v < 0)
      diags.error(e->range, "train." + k + " must not be negative");
    else if (k == "seed")
      tr.seed = uint64_t(*v);
    else if (*v > kMaxIterations)
      diags.error(e->range, "train.validate_every = " + std::to_string(*v) +
                                " is above the limit of " + std::to_string(kMaxIterations));
    else
      tr.validateEvery = *v;
  }
  if (out.hasBody && out.body.kind != BodyKind::Cells)
    diags.error(at, "train trains one fixed body; declare it with 'body cells NAME { ... }' "
                    "(lattice, grammar and voxel bodies evolve: use an 'evolve' block)");
}

void Checker::selectLearn(const SettingsBlock *learn, SourceRange at, Learn &L) {
  L.controller =
      selectDecl(*this, learn, "controller", controllers, DeclKind::Controller, "controller");
  L.loss = selectDecl(*this, learn, "loss", losses, DeclKind::Loss, "loss");
  if (!learn)
    return;
  checkKnownKeys(*learn, "learn", learnKeys());
  if (!L.controller && !learn->find("controller"))
    diags.error(at, controllers.empty() ? "no controller is declared; import one, e.g. "
                                          "import \"controllers/mlp.evo\";"
                                        : "several controllers are declared; choose one with "
                                          "'controller = NAME;' in learn");
  if (!L.loss && !learn->find("loss"))
    diags.error(at, losses.empty() ? "no loss is declared; import one, e.g. "
                                     "import \"losses/displacement.evo\";"
                                   : "several losses are declared; choose one with "
                                     "'loss = NAME;' in learn");
}

void Checker::checkEpisodes(Expr &e, const std::string &what, Episodes &ep) {
  auto *call = dynCast<CallExpr>(&e);
  const std::string form = "fresh() or continued(after = N, reset_every = R, reset_every_max = M, "
                           "grow_every = G)";
  if (!call || (call->callee.name != "fresh" && call->callee.name != "continued")) {
    diags.error(e.range, what + " must be " + form);
    return;
  }
  call->ref = CallRef::Setting;
  if (!call->args.empty())
    diags.error(call->args[0]->range, call->callee.name + "() takes named arguments");
  ep = Episodes{};
  if (call->callee.name == "fresh") {
    if (!call->namedArgs.empty())
      diags.error(call->namedArgs[0].name.range, "fresh() takes no arguments");
    return;
  }
  bool haveMax = false, haveAfter = false;
  for (auto &na : call->namedArgs) {
    const std::string &n = na.name.name;
    int64_t *slot = n == "after"             ? &ep.continueAfter
                    : n == "reset_every"     ? &ep.resetEvery
                    : n == "reset_every_max" ? &ep.resetEveryMax
                    : n == "grow_every"      ? &ep.growEvery
                                             : nullptr;
    if (!slot) {
      diags.error(na.name.range, "unknown argument " + q(n) +
                                     " of continued; expected after, "
                                     "reset_every, reset_every_max or grow_every");
      continue;
    }
    auto v = evalInt(*na.value, n);
    if (!v)
      continue;
    if (*v < (n == "after" ? 1 : n == "grow_every" ? 0 : 1) || *v > kMaxIterations) {
      diags.error(na.value->range, q(n) + " must lie in " + (n == "grow_every" ? "0" : "1") + ".." +
                                       std::to_string(kMaxIterations));
      continue;
    }
    *slot = *v;
    haveMax |= n == "reset_every_max";
    haveAfter |= n == "after";
  }
  if (!haveAfter) {
    diags.error(e.range, "continued(...) needs after = N: the iteration from which episodes "
                         "continue from the previous final state");
    ep.continueAfter = -1;
  }
  if (!haveMax)
    ep.resetEveryMax = ep.resetEvery;
  else if (ep.resetEveryMax < ep.resetEvery)
    diags.error(e.range, "reset_every_max must be at least reset_every");
  else if (ep.resetEveryMax > ep.resetEvery && ep.growEvery == 0)
    diags.error(e.range, "reset_every grows up to reset_every_max every grow_every iterations; "
                         "give grow_every = G");
}

void Checker::checkLearn(const SettingsBlock *learn, const std::string &prefix, Learn &L) {
  if (!learn)
    return;
  for (const auto &s : learn->settings) {
    const std::string &k = s.key.name;
    const std::string what = prefix + "." + k;
    if (k == "iterations" || k == "batch") {
      Expr *e = single(s, what);
      if (auto v = e ? evalInt(*e, what) : std::nullopt) {
        const int64_t limit = k == "batch" ? kMaxBatch : kMaxIterations;
        if (*v < 1)
          diags.error(e->range, what + " must be at least 1");
        else if (*v > limit)
          diags.error(e->range, what + " = " + std::to_string(*v) + " is above the limit of " +
                                    std::to_string(limit) + "; lower it");
        else
          (k == "batch" ? L.batch : L.iterations) = *v;
      }
    } else if (k == "inherit") {
      Expr *e = single(s, what);
      auto n = e ? evalName(*e, what) : std::nullopt;
      if (n && (*n == "weights" || *n == "none"))
        L.inheritWeights = *n == "weights";
      else if (n) {
        std::string c = closest(*n, {"weights", "none"});
        diags.error(e->range,
                    "unknown inherit " + q(*n) +
                        (c.empty() ? "; expected weights or none" : "; did you mean '" + c + "'?"));
      }
    } else if (k == "episodes") {
      if (Expr *e = single(s, what))
        checkEpisodes(*e, what, L.episodes);
    } else if (k == "optimizer") {
      Expr *e = single(s, what);
      if (!e)
        continue;
      auto *call = dynCast<CallExpr>(e);
      struct Known {
        OptimizerKind kind;
        std::vector<std::string> args;
      };
      static const std::map<std::string, Known> known = {
          {"normalized_sgd", {OptimizerKind::NormalizedStep, {"step"}}},
          {"sgd", {OptimizerKind::Sgd, {"lr"}}},
          {"adam", {OptimizerKind::Adam, {"lr", "beta1", "beta2", "eps"}}}};
      auto it = call ? known.find(call->callee.name) : known.end();
      if (it == known.end()) {
        diags.error(e->range, "optimizer must be normalized_sgd(step = S), sgd(lr = L) or "
                              "adam(lr = L, beta1 = B1, beta2 = B2, eps = E)");
        continue;
      }
      call->ref = CallRef::Setting;
      L.optimizer.kind = it->second.kind;
      if (!call->args.empty())
        diags.error(call->args[0]->range, it->first + "() takes named arguments");
      for (auto &na : call->namedArgs) {
        const auto &keys = it->second.args;
        if (std::find(keys.begin(), keys.end(), na.name.name) == keys.end()) {
          diags.error(na.name.range, "unknown argument " + q(na.name.name) + " of " + it->first);
          continue;
        }
        if (auto v = evalNumber(*na.value, na.name.name)) {
          if (*v <= 0 && na.name.name != "beta1" && na.name.name != "beta2")
            diags.error(na.value->range, q(na.name.name) + " must be positive");
          else if ((na.name.name == "beta1" || na.name.name == "beta2") && (*v < 0 || *v >= 1))
            diags.error(na.value->range, q(na.name.name) + " must lie in [0, 1)");
          else
            L.optimizer.args[na.name.name] = *v;
        }
      }
    }
  }
}

} // namespace evoc::sema
