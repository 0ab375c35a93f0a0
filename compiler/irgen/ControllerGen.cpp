// Lowering of a controller (an MLP) into the start of the step kernel: the
// input vector, the hidden layers and the outputs written into the physics'
// input fields. Weights are Param buffers named w1, b1, w2, b2, ... with the
// PARAMS.json layout: w_k is [units_k, units_(k-1)] row-major.
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "irgen/Lowerer.h"

namespace evoc::irgen {

using ir::Op;
using ir::ValueId;

namespace {

/// A length known per robot: base + sum(coef * size(set)).
struct Extent {
  int64_t base = 0;
  std::vector<std::pair<int, int64_t>> terms;

  ValueId emit(ir::Builder &b) const {
    ValueId v = b.constI(base);
    for (auto [set, coef] : terms)
      v = b.op(Op::IAdd, {v, b.op(Op::IMul, {b.size(set), b.constI(coef)})});
    return v;
  }
};

ValueId activate(Lowerer &L, const ast::Ident &act, ValueId x) {
  ir::Builder &b = L.b();
  const std::string &a = act.name;
  if (a == "tanh")
    return b.op(Op::Tanh, {x});
  if (a == "sin")
    return b.op(Op::Sin, {x});
  if (a == "relu")
    return b.op(Op::Max, {x, b.constF(0)});
  if (a == "sigmoid") {
    ValueId one = b.constF(1);
    return b.div(one, b.add(one, b.op(Op::Exp, {b.op(Op::Neg, {x})})));
  }
  if (a.empty() || a == "linear" || a == "none" || a == "identity")
    return x;
  Lowerer::unsupported(act.range,
                       "unknown activation '" + a + "' (tanh, sigmoid, relu, sin, linear)");
}

int addSet(ir::Module &m, const std::string &name, const Extent &e) {
  int id = m.findSet(name);
  if (id >= 0)
    return id;
  ir::ElementSet s;
  s.name = name;
  s.base = e.base;
  s.terms = e.terms;
  m.sets.push_back(s);
  return int(m.sets.size()) - 1;
}

/// Reads `xavier_normal(w1 = 2, w2 = 3)` (or kaiming_uniform(..), zeros()):
/// the scheme of the weights and a gain per weight name.
std::map<std::string, double> initGains(const ast::ControllerDecl *ctl, std::string &scheme) {
  std::map<std::string, double> gains;
  scheme = "xavier_normal";
  if (!ctl->init)
    return gains;
  auto *call = ast::dynCast<ast::CallExpr>(ctl->init.get());
  if (!call || (call->callee.name != "xavier_normal" && call->callee.name != "kaiming_uniform" &&
                call->callee.name != "zeros"))
    Lowerer::unsupported(ctl->init->range,
                         "only init = xavier_normal(..), kaiming_uniform(..) or zeros() is "
                         "supported");
  scheme = call->callee.name;
  for (const auto &na : call->namedArgs) {
    auto *num = ast::dynCast<ast::NumberExpr>(na.value.get());
    if (!num)
      Lowerer::unsupported(na.value->range, "an init gain must be a number");
    gains[na.name.name] = num->value;
  }
  return gains;
}

/// One item of the controller's input vector.
struct InputItem {
  const ast::Expr *e;
  int comps;
  const ast::SetDecl *set; // per-element item, or null
};

/// The controller's input items and the extent of the input vector.
std::vector<InputItem> inputItems(const ast::ControllerDecl *ctl, Lowerer &L, Extent &inputs) {
  std::vector<InputItem> items;
  for (const auto &e : ctl->inputs) {
    auto *call = ast::dynCast<ast::CallExpr>(e.get());
    if (call && call->builtin == ast::Builtin::SinWaves) {
      auto *n = call->args.empty() ? nullptr : ast::dynCast<ast::NumberExpr>(call->args[0].get());
      if (!n || n->value < 1)
        Lowerer::unsupported(e->range, "sin_waves needs a positive count");
      items.push_back({e.get(), int(n->value), nullptr});
      inputs.base += int64_t(n->value);
    } else if (call && call->builtin == ast::Builtin::Repeat) {
      auto *n = ast::dynCast<ast::NumberExpr>(call->args[0].get());
      int comps = int(n->value) * Lowerer::comps(call->args[1]->type);
      items.push_back({e.get(), comps, nullptr});
      inputs.base += comps;
    } else if (e->type.isField()) {
      items.push_back({e.get(), Lowerer::comps(e->type), e->type.set});
      int sid = L.setId(e->type.set);
      bool merged = false;
      for (auto &t : inputs.terms)
        if (t.first == sid)
          t.second += items.back().comps, merged = true;
      if (!merged)
        inputs.terms.push_back({sid, items.back().comps});
    } else {
      items.push_back({e.get(), Lowerer::comps(e->type), nullptr});
      inputs.base += items.back().comps;
    }
  }
  return items;
}

/// The values of an input item that is not per element: sin_waves(..),
/// repeat(..) or an expression.
Val itemValues(const sema::CheckedProgram &prog, Lowerer &L, const InputItem &it) {
  ir::Builder &b = L.b();
  Val v;
  if (auto *call = ast::dynCast<ast::CallExpr>(it.e);
      call && call->builtin == ast::Builtin::SinWaves) {
    ValueId omega = b.constF(10);
    for (const auto &na : call->namedArgs)
      if (na.name.name == "omega")
        omega = L.expr(na.value.get()).at(0);
    ValueId phase = b.mul(b.mul(omega, b.op(Op::IToF, {b.time()})), b.constF(prog.world.dt));
    for (int j = 0; j < it.comps; ++j)
      v.push_back(b.op(Op::Sin, {b.add(phase, b.constF(2 * M_PI * j / it.comps))}));
  } else if (call && call->builtin == ast::Builtin::Repeat) {
    Val one = L.expr(call->args[1].get());
    for (int j = 0; j < it.comps; ++j)
      v.push_back(one[j % one.size()]);
  } else {
    v = L.expr(it.e);
  }
  return v;
}

/// Stores the items [k, end), consecutive items over set `sid`, in one loop
/// over the set at `offset`: element i's values are contiguous. Returns the
/// values per element.
int storeSetGroup(Lowerer &L, const std::vector<InputItem> &items, size_t k, size_t end, int sid,
                  int inBuf, const Extent &offset) {
  ir::Builder &b = L.b();
  int group = 0;
  for (size_t g = k; g < end; ++g)
    group += items[g].comps;
  ValueId base = offset.emit(b);
  ValueId i = b.beginLoop(sid);
  auto old = L.setContext(items[k].set, i);
  ValueId row = b.op(Op::IAdd, {base, b.op(Op::IMul, {i, b.constI(group)})});
  int within = 0;
  for (size_t g = k; g < end; ++g) {
    Val v = L.expr(items[g].e);
    for (int c = 0; c < items[g].comps; ++c)
      b.store(inBuf, b.op(Op::IAdd, {row, b.constI(within + c)}), v[v.size() == 1 ? 0 : c]);
    within += items[g].comps;
  }
  L.setContext(old.first, old.second);
  b.endLoop();
  return group;
}

/// Stores the inputs into `inBuf`. Per-element items are interleaved per
/// element: for consecutive items over one set, element i's values are
/// contiguous. Returns the order as the input set's layout (which entry
/// belongs to which body element: weight inheritance reads it).
std::vector<std::pair<int, int64_t>> storeInputs(const sema::CheckedProgram &prog, Lowerer &L,
                                                 const std::vector<InputItem> &items, int inBuf) {
  ir::Builder &b = L.b();
  Extent offset;
  std::vector<std::pair<int, int64_t>> layout;
  for (size_t k = 0; k < items.size();) {
    const InputItem &it = items[k];
    L.at(it.e->range);
    if (!it.set) {
      Val v = itemValues(prog, L, it);
      ValueId base = offset.emit(b);
      for (int c = 0; c < it.comps; ++c)
        b.store(inBuf, b.op(Op::IAdd, {base, b.constI(c)}), v[v.size() == 1 ? 0 : c]);
      offset.base += it.comps;
      if (!layout.empty() && layout.back().first < 0)
        layout.back().second += it.comps;
      else
        layout.push_back({-1, it.comps});
      ++k;
      continue;
    }
    // A group of consecutive items over one set.
    size_t end = k;
    while (end < items.size() && items[end].set == it.set)
      ++end;
    int sid = L.setId(it.set);
    int group = storeSetGroup(L, items, k, end, sid, inBuf, offset);
    offset.terms.push_back({sid, group});
    layout.push_back({sid, group});
    k = end;
  }
  return layout;
}

/// The controller's weights: buffer name prefix, init scheme and gains.
struct Weights {
  std::string prefix;
  std::string scheme;
  std::map<std::string, double> gains;
};

/// One dense layer: out[o] = act(sum_i w[o, i] * in[i] + bias[o]), with its
/// Param buffers w<layer><suffix> and b<layer><suffix>.
struct DenseLayer {
  int outSet = -1, inSet = -1, inValues = -1, outValues = -1;
  int W = -1, B = -1;
  /// A sin layer's pre-activations ("<h>.pre"), -1 for other layers: a
  /// sin's derivative needs its argument, which its output does not give
  /// (tanh, sigmoid and relu derive theirs from the output). Stored in a
  /// temp of its own, with the activation applied in a second loop, the
  /// step keeps them per step (autodiff::planTape) and step.adj reads them
  /// instead of recomputing the layer's products (docs/architecture.md,
  /// "Multi-task benchmark and where its time goes").
  int pre = -1;
  const ast::Ident *act = nullptr;
  const SourceRange *at = nullptr; // where errors in its code point
};

/// Declares a layer's parameters (their buffer indices seed their initial
/// values, so the order of declaration is part of every result).
DenseLayer declareDense(Lowerer &L, const Weights &wt, int layer, const std::string &suffix,
                        int outSet, int inSet, int inValues, int outValues, const ast::Ident &act) {
  ir::Module &m = L.module();
  std::string w = fmt::format("w{}{}", layer, suffix);
  std::string bias = fmt::format("b{}{}", layer, suffix);
  ir::Buffer wb{.name = wt.prefix + w,
                .role = ir::Role::Param,
                .sets = {outSet, inSet},
                .field = w,
                .differentiable = true,
                .init = wt.scheme};
  wb.initGain = wt.gains.count(w) ? wt.gains.at(w) : 1.0;
  DenseLayer d{outSet, inSet, inValues, outValues};
  d.W = ensureBuffer(m, wb);
  d.B = ensureBuffer(m, {.name = wt.prefix + bias,
                         .role = ir::Role::Param,
                         .sets = {outSet},
                         .field = bias,
                         .differentiable = true});
  d.act = &act;
  return d;
}

void emitDense(Lowerer &L, const DenseLayer &d) {
  ir::Builder &b = L.b();
  ValueId o = b.beginLoop(d.outSet);
  ValueId acc = b.local(0);
  ValueId rowStart = b.op(Op::IMul, {o, b.size(d.inSet)});
  ValueId i = b.beginLoop(d.inSet);
  b.localUpdate(Op::LocalAdd, acc,
                b.mul(b.load(d.W, b.op(Op::IAdd, {rowStart, i})), b.load(d.inValues, i)));
  b.endLoop();
  ValueId pre = b.add(b.localGet(acc), b.load(d.B, o));
  if (d.pre >= 0)
    b.store(d.pre, o, pre);
  else
    b.store(d.outValues, o, activate(L, *d.act, pre));
  b.endLoop();
  if (d.pre >= 0) {
    ValueId u = b.beginLoop(d.outSet);
    b.store(d.outValues, u, activate(L, *d.act, b.load(d.pre, u)));
    b.endLoop();
  }
}

} // namespace

void lowerController(const sema::CheckedProgram &prog, Lowerer &L) {
  const ast::ControllerDecl *ctl = prog.controller;
  ir::Module &m = L.module();
  Weights wt;
  wt.prefix = ctl->name.name + ".";
  wt.gains = initGains(ctl, wt.scheme);
  for (const auto &let : ctl->lets)
    L.bindLet(let.get());

  // The input vector: its extent first (a set "input"), then its values.
  Extent inputs;
  std::vector<InputItem> items = inputItems(ctl, L, inputs);
  int inputSet = addSet(m, "input", inputs);
  int inBuf =
      ensureBuffer(m, {.name = wt.prefix + "in", .role = ir::Role::Temp, .sets = {inputSet}});
  auto layout = storeInputs(prog, L, items, inBuf);
  m.sets[inputSet].layout = layout;

  // The hidden layers, then one dense layer per output: every buffer
  // declared first, in this order, then the sin layers' pre-activations
  // after them all (so that no parameter's index moves), then the code.
  std::vector<DenseLayer> layers;
  int prevSet = inputSet, prevBuf = inBuf;
  for (size_t h = 0; h < ctl->hidden.size(); ++h) {
    const auto &spec = ctl->hidden[h];
    int unitSet =
        addSet(m, h == 0 ? "unit" : fmt::format("unit{}", h + 1), Extent{spec.unitsValue, {}});
    int hb = ensureBuffer(
        m,
        {.name = wt.prefix + fmt::format("h{}", h + 1), .role = ir::Role::Temp, .sets = {unitSet}});
    layers.push_back(
        declareDense(L, wt, int(h) + 1, "", unitSet, prevSet, prevBuf, hb, spec.activation));
    layers.back().at = &spec.units->range;
    prevSet = unitSet;
    prevBuf = hb;
  }
  for (const auto &out : ctl->outputs) {
    if (!out.field || out.field->type.resolved.kind == ast::TypeKind::Vec)
      Lowerer::unsupported(out.target->range, "a controller output must be a scalar "
                                              "input field (e.g. spring.act)");
    // One output: w<L+1>, b<L+1>; several: suffixed by the field they write.
    std::string suffix = ctl->outputs.size() > 1 ? "_" + out.field->name.name : "";
    const int target = L.fieldBuffer(out.field);
    layers.push_back(declareDense(L, wt, int(ctl->hidden.size()) + 1, suffix,
                                  L.setId(out.field->owner), prevSet, prevBuf, target,
                                  out.activation));
    layers.back().at = &out.target->range;
  }
  for (DenseLayer &d : layers)
    if (d.act->name == "sin" && m.buffers[size_t(d.outValues)].role == ir::Role::Temp) {
      ir::Buffer pb = m.buffers[size_t(d.outValues)];
      pb.name += ".pre";
      pb.field.clear();
      d.pre = ensureBuffer(m, pb);
    }
  for (const DenseLayer &d : layers) {
    L.at(*d.at);
    emitDense(L, d);
  }
}

} // namespace evoc::irgen
