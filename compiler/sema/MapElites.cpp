// `select = map_elites(...)`: the descriptors of a MAP-Elites grid
// (docs/language.md, Evolution; docs/evolution.md, "MAP-Elites").
#include "sema/Checker.h"
#include "sema/Limits.h"

#include <algorithm>
#include <set>

namespace evoc::sema {

using namespace ast;

namespace {

// The loss's reported terms: the summands of its value that are named lets
// (the rule of irgen's lowerLoss: reported when there are at least two
// summands and one of them is named).
void summandNames(const Expr *e, const LossDecl &loss, std::vector<std::string> &names,
                  bool &named) {
  if (auto *b = dynCast<BinaryExpr>(e); b && (b->op == BinaryOp::Add || b->op == BinaryOp::Sub)) {
    summandNames(b->lhs.get(), loss, names, named);
    return summandNames(b->rhs.get(), loss, names, named);
  }
  if (auto *u = dynCast<UnaryExpr>(e); u && u->op == UnaryOp::Neg)
    return summandNames(u->operand.get(), loss, names, named);
  if (auto *n = dynCast<NameExpr>(e))
    for (const auto &let : loss.lets)
      if (let->name.name == n->name) {
        names.push_back(n->name);
        named = true;
        return;
      }
  names.push_back(""); // an unnamed summand
}

std::vector<std::string> reportedTerms(const LossDecl *loss) {
  std::vector<std::string> names, out;
  bool named = false;
  if (loss && loss->value)
    summandNames(loss->value.get(), *loss, names, named);
  if (!named || names.size() < 2)
    return out;
  for (const auto &n : names)
    if (!n.empty())
      out.push_back(n);
  return out;
}

/// term(NAME, ...): NAME (arg) into desc.term when it is a term the loss
/// reports; false, with an error, when it is not.
bool descriptorTerm(Checker &C, Expr &arg, Descriptor &desc) {
  auto *n = dynCast<NameExpr>(&arg);
  const LossDecl *loss = C.out.evolve.learn.loss;
  const std::vector<std::string> terms = reportedTerms(loss);
  if (!n) {
    C.diags.error(arg.range, "term(NAME, ...) needs the name of a term of the loss");
    return false;
  }
  if (std::find(terms.begin(), terms.end(), n->name) == terms.end()) {
    std::string c = closest(n->name, terms);
    const std::string msg =
        terms.empty()
            ? "the loss reports no terms: a term is a named let the loss returns in a sum "
              "(return forward + height;)"
            : "the loss has no term '" + n->name + "'" +
                  (c.empty() ? "" : "; did you mean '" + c + "'?");
    if (loss)
      C.diags.error(n->range, msg).note(loss->name.range, "the loss is declared here");
    else
      C.diags.error(n->range, msg);
    return false;
  }
  desc.term = n->name;
  return true;
}

/// A descriptor's range = (LO, HI) and bins = N into desc: false, with an
/// error, when either is missing or wrong. An unknown argument only clears
/// ok, so the descriptor is still counted (given twice, too many cells).
bool descriptorGrid(Checker &C, CallExpr &d, Descriptor &desc, bool &ok) {
  const std::string kind = descriptorKindName(desc.kind);
  bool haveRange = false, haveBins = false;
  for (auto &na : d.namedArgs) {
    const std::string &k = na.name.name;
    if (k == "bins") {
      auto v = C.evalInt(*na.value, "bins");
      if (!v) {
        ok = false;
        continue;
      }
      if (*v < 1 || *v > kMaxBins) {
        C.diags.error(na.value->range, "bins must lie in 1.." + std::to_string(kMaxBins));
        ok = false;
        continue;
      }
      desc.bins = *v;
      haveBins = true;
    } else if (k == "range") {
      auto *t = dynCast<TupleExpr>(na.value.get());
      if (!t || t->elems.size() != 2) {
        C.diags.error(na.value->range, "range must be (LO, HI)");
        ok = false;
        continue;
      }
      auto lo = C.evalNumber(*t->elems[0], "range");
      auto hi = C.evalNumber(*t->elems[1], "range");
      if (!lo || !hi) {
        ok = false;
        continue;
      }
      if (!(*lo < *hi)) {
        C.diags.error(na.value->range, "range (LO, HI) needs LO < HI");
        ok = false;
        continue;
      }
      desc.lo = *lo;
      desc.hi = *hi;
      haveRange = true;
    } else {
      C.diags.error(na.name.range, "unknown argument '" + k + "' of " + kind +
                                       "; expected range = (LO, HI) and bins = N");
      ok = false;
    }
  }
  if (!haveRange || !haveBins) {
    C.diags.error(d.range, kind + " needs " +
                               (!haveRange && !haveBins ? "range = (LO, HI) and bins = N"
                                : !haveRange            ? "range = (LO, HI)"
                                                        : "bins = N") +
                               ": the grid cuts [LO, HI] into N cells");
    return false;
  }
  return true;
}

} // namespace

void Checker::checkMapElites(CallExpr &call, Select &sel) {
  const std::string form = "KIND(range = (LO, HI), bins = N), KIND one of actuators, width, "
                           "height, depth, term(NAME, ...), learning_gain, monotonicity";
  for (auto &na : call.namedArgs) {
    if (na.name.name != "qd_offset") {
      diags.error(na.name.range, "unknown argument '" + na.name.name +
                                     "' of map_elites; expected descriptors and qd_offset = X");
      continue;
    }
    if (auto v = evalNumber(*na.value, "qd_offset"))
      sel.qdOffset = *v;
  }
  if (call.args.empty()) {
    diags.error(call.range, "map_elites needs one or two descriptors: " + form);
    return;
  }
  if (call.args.size() > kMaxDescriptors) {
    diags.error(call.args[kMaxDescriptors]->range,
                "map_elites takes at most two descriptors: a grid of more (CVT-MAP-Elites) is "
                "not supported yet");
    return;
  }
  std::set<std::string> seen;
  int64_t cells = 1;
  bool ok = true;
  for (auto &arg : call.args) {
    auto *d = dynCast<CallExpr>(arg.get());
    if (!d) {
      diags.error(arg->range, "a descriptor is " + form);
      ok = false;
      continue;
    }
    const std::string &kind = d->callee.name;
    const std::optional<DescriptorKind> known = parseDescriptorKind(kind);
    if (!known) {
      std::string c = closest(kind, descriptorKindNames());
      diags.error(d->callee.range,
                  "unknown descriptor '" + kind + "'" +
                      (c.empty() ? "; expected " + form : "; did you mean '" + c + "'?"));
      ok = false;
      continue;
    }
    d->ref = CallRef::Setting;
    Descriptor desc;
    desc.kind = *known;
    desc.at = d->range;
    // term(NAME, ...) names a reported term of the loss; the others take
    // no positional argument.
    const size_t positional = kind == "term" ? 1 : 0;
    if (d->args.size() != positional) {
      diags.error(d->args.size() > positional ? d->args[positional]->range : d->range,
                  kind == "term" ? "term(NAME, range = (LO, HI), bins = N) names one term of "
                                   "the loss"
                                 : kind + "() takes only range = (LO, HI) and bins = N");
      ok = false;
      continue;
    }
    if (kind == "term" && !descriptorTerm(*this, *d->args[0], desc)) {
      ok = false;
      continue;
    }
    if (kind == "depth" && out.world.dim != 3) {
      diags.error(d->callee.range, "depth() is the extent along the second axis of a 3D world; "
                                   "this world is 2D (use width or height)");
      ok = false;
      continue;
    }
    if (!descriptorGrid(*this, *d, desc, ok)) {
      ok = false;
      continue;
    }
    const std::string key = kind + "(" + desc.term + ")";
    if (!seen.insert(key).second) {
      diags.error(d->range, "the descriptor " + kind + " is given twice");
      ok = false;
      continue;
    }
    cells *= desc.bins;
    if (cells > kMaxGridCells) {
      diags.error(call.range, "map_elites has more than " + std::to_string(kMaxGridCells) +
                                  " cells (the product of the bins); use fewer bins");
      ok = false;
      break;
    }
    sel.descriptors.push_back(desc);
  }
  if (!ok)
    sel.descriptors.clear();
}

} // namespace evoc::sema
