// Checks of controllers (inputs, hidden layers, outputs, init) and losses.
#include "sema/Checker.h"

namespace evoc::sema {

using namespace ast;

static std::string q(const std::string &s) { return "'" + s + "'"; }

static bool knownActivation(const std::string &a) {
  return a == "tanh" || a == "sin" || a == "relu" || a == "sigmoid" || a == "linear";
}

ExprCtx Checker::learningScope(Ctx ctx, std::vector<std::unique_ptr<LetStmt>> &lets) {
  ExprCtx cx;
  cx.ctx = ctx;
  cx.physics = learningPhysics();
  cx.scopes.emplace_back();
  for (auto &let : lets)
    checkLet(*let, cx);
  return cx;
}

void Checker::checkController(ControllerDecl &c) {
  ExprCtx cx = learningScope(Ctx::Controller, c.lets);
  if (c.inputs.empty())
    diags.error(c.name.range, "controller " + q(c.name.name) +
                                  " has no inputs; add "
                                  "'inputs = sin_waves(10, omega = 10), ...;'");
  for (auto &in : c.inputs) {
    cx.allowSinWaves = true;
    Type t = check(*in, cx);
    cx.allowSinWaves = false;
    if (t.isError())
      continue;
    if (!t.isNumeric())
      diags.error(in->range, "a controller input must be a number, a vector or a field of "
                             "them, not " +
                                 typeToString(t));
  }
  // No hidden layer: the outputs are one dense layer of the inputs
  // (DiffTaichi's open-loop controller, w1 and b1).
  for (auto &h : c.hidden) {
    if (auto n = evalInt(*h.units, "hidden")) {
      if (*n < 1)
        diags.error(h.units->range, "a hidden layer needs at least one unit");
      else if (*n > 65536)
        diags.error(h.units->range, "a hidden layer of " + std::to_string(*n) +
                                        " units is above the limit of 65536; lower it");
      else
        h.unitsValue = *n;
    }
    h.units->type = Type::scalar();
    if (h.activation.name.empty())
      diags.error(h.units->range, "write the activation after the size: hidden = 32 tanh");
    else if (!knownActivation(h.activation.name))
      diags.error(h.activation.range, "unknown activation " + q(h.activation.name) +
                                          "; expected tanh, sin, relu, sigmoid or linear");
  }
  if (c.outputs.empty())
    diags.error(c.name.range, "controller " + q(c.name.name) +
                                  " has no outputs; add "
                                  "'outputs = spring.act tanh;'");
  std::map<const FieldDecl *, SourceRange> seen;
  for (auto &o : c.outputs) {
    if (o.activation.name.empty())
      diags.error(o.target->range,
                  "write the activation after the output: outputs = spring.act tanh");
    else if (!knownActivation(o.activation.name))
      diags.error(o.activation.range, "unknown activation " + q(o.activation.name) +
                                          "; expected tanh, sin, relu, sigmoid or linear");
    auto *m = dynCast<MemberExpr>(o.target.get());
    auto *n = m ? dynCast<NameExpr>(m->base.get()) : nullptr;
    if (!m || !n) {
      diags.error(o.target->range,
                  "an output names an input field of the physics, e.g. spring.act");
      continue;
    }
    if (!cx.physics)
      continue;
    const SetDecl *s = cx.physics->findSet(n->name);
    if (!s) {
      std::vector<std::string> cands;
      for (auto &o2 : cx.physics->sets)
        cands.push_back(o2->name.name);
      undefined(n->range, "set", n->name, cands);
      continue;
    }
    const FieldDecl *f = s->findField(m->member.name);
    if (!f || f->kind != FieldKind::Input) {
      std::string fname = q(n->name + "." + m->member.name);
      if (!f)
        diags.error(m->member.range,
                    "set " + q(s->name.name) + " has no field " + q(m->member.name));
      else
        diags
            .error(o.target->range, "an output writes an input field, and " + fname + " is a " +
                                        fieldKindSpelling(f->kind) + " field")
            .note(f->range, fname + " is declared here");
      continue;
    }
    n->ref = NameRef::Set;
    n->set = s;
    n->type = {TypeKind::Set, 1, s};
    m->ref = MemberRef::SetField;
    m->field = f;
    m->type = f->type.resolved;
    m->type.set = s;
    o.field = f;
    auto [it, fresh] = seen.emplace(f, o.target->range);
    if (!fresh)
      diags
          .error(o.target->range, "output " + q(n->name + "." + f->name.name) + " is written twice")
          .note(it->second, "first written here");
  }
  if (c.init) {
    auto *call = dynCast<CallExpr>(c.init.get());
    if (!call || (call->callee.name != "xavier_normal" && call->callee.name != "zeros" &&
                  call->callee.name != "kaiming_uniform")) {
      diags.error(c.init->range, "init must be xavier_normal(w1 = G1, w2 = G2, ...), "
                                 "kaiming_uniform(w1 = G1, ...) or zeros()");
    } else {
      call->ref = CallRef::Setting;
      if (!call->args.empty())
        diags.error(call->args[0]->range, "init takes named gains: w1 = 2, w2 = 3");
      size_t layers = c.hidden.size() + 1;
      for (auto &na : call->namedArgs) {
        const std::string &k = na.name.name;
        bool ok = k.size() >= 2 && k[0] == 'w' &&
                  k.find_first_not_of("0123456789", 1) == std::string::npos;
        size_t idx = ok ? std::stoul(k.substr(1, 6)) : 0;
        if (!ok || idx < 1 || idx > layers) {
          diags.error(na.name.range, "unknown gain " + q(k) +
                                         "; this controller has weight "
                                         "matrices w1.." +
                                         "w" + std::to_string(layers));
          continue;
        }
        evalNumber(*na.value, k);
        na.value->type = Type::scalar();
      }
    }
  }
  warnUnused(cx.scopes.back());
}

void Checker::checkLoss(LossDecl &l) {
  ExprCtx cx = learningScope(Ctx::Loss, l.lets);
  if (l.value) {
    Type t = check(*l.value, cx);
    if (!t.isError() && (t.isField() || !(t.kind == TypeKind::Scalar || t.kind == TypeKind::Int)))
      diags.error(l.value->range, "a loss must be one number per robot, but this is " +
                                      typeToString(t) +
                                      (t.isField() ? "; reduce it with mean(..) or sum(..)" : ""));
  }
  warnUnused(cx.scopes.back());
}

} // namespace evoc::sema
