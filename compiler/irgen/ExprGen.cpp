// Lowering of expressions to IR values: names, fields (with gathers through
// endpoints), states at times, builtins, reductions and inlined fns.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "ir/Names.h"
#include "irgen/Lowerer.h"
#include "support/Error.h"

namespace evoc::irgen {

using ir::Op;
using ir::ValueId;

Lowerer::Lowerer(const sema::CheckedProgram &prog, ir::Module &m, ir::Kernel &k)
    : prog_(prog), m_(m), b_(m, k), vn_(m, b_) {}

void Lowerer::unsupported(const SourceRange &r, const std::string &msg) {
  throw LowerError{r, msg};
}

void Lowerer::at(const SourceRange &r) {
  if (r.valid())
    b_.setLoc(ir::SrcLoc{r.begin.file, r.begin.line, r.begin.col});
}

std::pair<const ast::SetDecl *, ValueId> Lowerer::setContext(const ast::SetDecl *set,
                                                             ValueId index) {
  auto old = std::make_pair(ctxSet_, ctxIndex_);
  ctxSet_ = set;
  ctxIndex_ = index;
  return old;
}

ValueId Lowerer::flatIndex(ValueId index, int comps, int c) {
  if (comps == 1)
    return index;
  ValueId base = b_.op(Op::IMul, {index, b_.constI(comps)});
  return c == 0 ? base : b_.op(Op::IAdd, {base, b_.constI(c)});
}

Val Lowerer::map1(Op op, const Val &a) {
  Val r;
  for (ValueId v : a)
    r.push_back(b_.op(op, {v}));
  return r;
}

Val Lowerer::map2(Op op, const Val &a, const Val &c) {
  size_t n = std::max(a.size(), c.size());
  Val r;
  for (size_t i = 0; i < n; ++i)
    r.push_back(b_.op(op, {a[a.size() == 1 ? 0 : i], c[c.size() == 1 ? 0 : i]}));
  return r;
}

ValueId Lowerer::sumOf(const Val &a) {
  ValueId s = a.at(0);
  for (size_t i = 1; i < a.size(); ++i)
    s = b_.add(s, a[i]);
  return s;
}

void Lowerer::bindLet(const ast::LetStmt *let) {
  if (let->value->type.isField())
    return; // lowered at each use, at the element in context
  at(let->range);
  lets_[let] = expr(let->value.get());
}

Val Lowerer::expr(const ast::Expr *e) {
  using K = ast::ExprKind;
  switch (e->kind) {
  case K::Number:
    return {b_.constF(ast::cast<ast::NumberExpr>(e)->value)};
  case K::Bool:
    return {b_.constB(ast::cast<ast::BoolExpr>(e)->value)};
  case K::Name:
    return name(ast::cast<ast::NameExpr>(e));
  case K::Member:
    return member(ast::cast<ast::MemberExpr>(e));
  case K::Index:
    return index(ast::cast<ast::IndexExpr>(e));
  case K::Call:
    return call(ast::cast<ast::CallExpr>(e));
  case K::Unary: {
    auto *u = ast::cast<ast::UnaryExpr>(e);
    Val v = expr(u->operand.get());
    switch (u->op) {
    case ast::UnaryOp::Neg:
      return map1(Op::Neg, v);
    case ast::UnaryOp::Plus:
      return v;
    case ast::UnaryOp::Not:
      return map1(Op::Not, v);
    }
    break;
  }
  case K::Binary:
    return binary(ast::cast<ast::BinaryExpr>(e));
  case K::If: {
    auto *i = ast::cast<ast::IfExpr>(e);
    ValueId c = expr(i->cond.get()).at(0);
    Val a = expr(i->thenExpr.get()), b = expr(i->elseExpr.get());
    size_t n = std::max(a.size(), b.size());
    Val r;
    for (size_t k = 0; k < n; ++k)
      r.push_back(b_.op(Op::Select, {c, a[a.size() == 1 ? 0 : k], b[b.size() == 1 ? 0 : k]}));
    return r;
  }
  case K::Window: {
    auto *w = ast::cast<ast::WindowExpr>(e);
    if (reducedWindows)
      if (auto it = reducedWindows->find(w); it != reducedWindows->end())
        return {b_.load(m_.findBuffer(ir::names::kLossWindow), b_.constI(it->second))};
    unsupported(e->range, "a time window is only supported in a loss, outside other windows "
                          "(e.g. loss l = mean(t in 0..T: ...);)");
  }
  case K::Stencil:
    return stencilSum(ast::cast<ast::StencilExpr>(e));
  case K::String:
  case K::Tuple:
  case K::List:
    break;
  }
  unsupported(e->range, "this expression cannot be computed in a kernel");
}

Val Lowerer::name(const ast::NameExpr *e) {
  switch (e->ref) {
  case ast::NameRef::Let: {
    auto it = lets_.find(e->let);
    if (it != lets_.end())
      return it->second;
    // Not bound: a field let (evaluated at the element in context) or a
    // loss let (losses bind nothing eagerly): lower its value here.
    return lazyLet(e->let);
  }
  case ast::NameRef::Param:
    for (auto f = frames_.rbegin(); f != frames_.rend(); ++f)
      if (auto it = f->find(e->param); it != f->end())
        return it->second;
    break;
  case ast::NameRef::LastTime:
  case ast::NameRef::Constant:
    return {b_.constF(e->constValue)};
  case ast::NameRef::WindowVar:
    if (window && e->window == window)
      return {b_.op(Op::IToF, {b_.time()})};
    break;
  case ast::NameRef::Command:
    return commandValue(e->command, ir::TimeRef::Current, 0);
  default:
    break;
  }
  unsupported(e->range, "'" + e->name + "' cannot be used as a value here");
}

ValueId Lowerer::elementIndex(const ast::Expr *e) {
  if (auto *n = ast::dynCast<ast::NameExpr>(e)) {
    if (n->ref == ast::NameRef::Element) {
      auto it = loops_.find(n->loop);
      EVOC_ASSERT(it != loops_.end(), "loop variable used outside its loop");
      return it->second;
    }
  }
  if (auto *m = ast::dynCast<ast::MemberExpr>(e)) {
    if (m->ref == ast::MemberRef::Endpoint) {
      ValueId owner = elementIndex(m->base.get());
      return b_.load(endpointBuffer(m->endpoint), owner);
    }
  }
  if (auto *ix = ast::dynCast<ast::IndexExpr>(e); ix && ix->elementAt)
    return elementAt(ix, nullptr);
  unsupported(e->range, "expected an element (a loop variable or an endpoint)");
}

Val Lowerer::loadField(int buffer, int comps, ValueId element) {
  Val r;
  for (int c = 0; c < comps; ++c)
    r.push_back(b_.load(buffer, flatIndex(element, comps, c)));
  return r;
}

Val Lowerer::member(const ast::MemberExpr *e) {
  switch (e->ref) {
  case ast::MemberRef::WorldSetting:
    return {b_.constF(e->constValue)};
  case ast::MemberRef::Component: {
    Val v = expr(e->base.get());
    if (e->component < 0 || e->component >= int(v.size()))
      unsupported(e->range, "vector component out of range");
    return {v[e->component]};
  }
  case ast::MemberRef::Field:
    return readField(e);
  case ast::MemberRef::GridIndex:
  case ast::MemberRef::GridOffset:
    return gridMember(e);
  case ast::MemberRef::SetField: {
    if (!ctxSet_ || ctxSet_ != e->field->owner)
      unsupported(e->range, "the field '" + e->field->owner->name.name + "." + e->field->name.name +
                                "' is used where no element of its set is in scope; "
                                "reduce it with sum/mean/min/max");
    return loadField(fieldBuffer(e->field), comps(e->field->type.resolved), ctxIndex_);
  }
  default:
    break;
  }
  unsupported(e->range, "this member cannot be computed in a kernel");
}

Val Lowerer::index(const ast::IndexExpr *e) {
  // The time an index denotes, as a buffer time reference.
  auto timeRef = [&](ir::TimeRef &ref, int64_t &at) {
    at = 0;
    if (e->timeIsConstant) {
      ref = e->timeValue == 0                       ? ir::TimeRef::First
            : e->timeValue == prog_.world.steps - 1 ? ir::TimeRef::Last
                                                    : ir::TimeRef::Fixed;
      at = e->timeValue;
    } else if (window && e->timeWindow == window && e->timeOffset <= 0) {
      ref = e->timeOffset == 0 ? ir::TimeRef::Current : ir::TimeRef::Offset;
      at = e->timeOffset;
    } else {
      unsupported(e->range, "a time relative to another window's variable, or after the "
                            "window's time, cannot be computed here");
    }
  };
  if (auto *n = ast::dynCast<ast::NameExpr>(e->base.get()); n && n->ref == ast::NameRef::Command) {
    ir::TimeRef ref;
    int64_t at;
    timeRef(ref, at);
    return commandValue(n->command, ref, at);
  }
  auto *base = ast::dynCast<ast::MemberExpr>(e->base.get());
  if (!base || base->ref != ast::MemberRef::SetField || !base->field)
    unsupported(e->range, "only a state field can be indexed by time");
  const ast::FieldDecl *f = base->field;
  if (!ctxSet_ || ctxSet_ != f->owner)
    unsupported(e->range, "the field is used where no element of its set is in scope; "
                          "reduce it with sum/mean/min/max");
  ir::TimeRef ref;
  int64_t at;
  timeRef(ref, at);
  int buf = e->timeIsConstant             ? timedStateBuffer(f, e->timeValue)
            : ref == ir::TimeRef::Current ? fieldBuffer(f)
                                          : offsetStateBuffer(f, at);
  return loadField(buf, comps(f->type.resolved), ctxIndex_);
}

Val Lowerer::binary(const ast::BinaryExpr *e) {
  Val a = expr(e->lhs.get()), c = expr(e->rhs.get());
  using B = ast::BinaryOp;
  switch (e->op) {
  case B::Add:
    return map2(Op::Add, a, c);
  case B::Sub:
    return map2(Op::Sub, a, c);
  case B::Mul:
    if (e->lhs->type.kind == ast::TypeKind::Mat && c.size() > 1)
      return matProduct(a, c); // M * N, M * v
    return map2(Op::Mul, a, c);
  case B::Div:
    return map2(Op::Div, a, c);
  case B::Lt:
    return map2(Op::Lt, a, c);
  case B::Le:
    return map2(Op::Le, a, c);
  case B::Gt:
    return map2(Op::Gt, a, c);
  case B::Ge:
    return map2(Op::Ge, a, c);
  case B::Eq:
    return map2(Op::Eq, a, c);
  case B::Ne:
    return map2(Op::Ne, a, c);
  case B::And:
    return map2(Op::And, a, c);
  case B::Or:
    return map2(Op::Or, a, c);
  }
  unsupported(e->range, "unknown operator");
}

Val Lowerer::call(const ast::CallExpr *e) {
  at(e->range);
  if (e->ref == ast::CallRef::Fn)
    return inlineFn(e);
  if (e->ref == ast::CallRef::Builtin)
    return builtin(e);
  unsupported(e->range, "'" + e->callee.name + "' cannot be computed in a kernel");
}

void Lowerer::contextKey(std::vector<uint64_t> &key) {
  key.push_back(uint64_t(reinterpret_cast<uintptr_t>(ctxSet_)));
  key.push_back(ctxSet_ ? vn_.number(ctxIndex_) : 0);
  key.push_back(uint64_t(reinterpret_cast<uintptr_t>(window)));
  key.push_back(uint64_t(reinterpret_cast<uintptr_t>(reducedWindows)));
}

const Val *Lowerer::recall(const std::vector<uint64_t> &key) const {
  auto it = memo_.find(key);
  if (it == memo_.end())
    return nullptr;
  const Memo &m = it->second;
  // Visible only inside the loops that were open where it was lowered, and
  // a load in it may read another value after a store.
  const auto &open = b_.openLoops();
  if (m.writes != b_.writes() || m.loops.size() > open.size() ||
      !std::equal(m.loops.begin(), m.loops.end(), open.begin()))
    return nullptr;
  return &m.value;
}

void Lowerer::remember(std::vector<uint64_t> key, const Val &v) {
  memo_[std::move(key)] = Memo{v, b_.openLoops(), b_.writes()};
}

void Lowerer::checkSize(const ast::Expr *at) {
  if (b_.emitted() <= kMaxKernelInstructions)
    return;
  const ast::Expr *where = expanding_ ? expanding_ : at;
  std::string what = "this expression";
  if (auto *c = ast::dynCast<ast::CallExpr>(where))
    what = "this call of '" + c->callee.name + "'";
  unsupported(where->range,
              what + " expands to more than " + std::to_string(kMaxKernelInstructions) +
                  " IR instructions in kernel '" + b_.kernel().name +
                  "': every fn call is inlined where it is made (calls with equal arguments "
                  "share one copy), so fns that call others several times with different "
                  "arguments grow exponentially with their nesting; compute a value used "
                  "several times once, with a let, or flatten the nesting");
}

Val Lowerer::lazyLet(const ast::LetStmt *let) {
  std::vector<uint64_t> key = {2, uint64_t(reinterpret_cast<uintptr_t>(let))};
  contextKey(key);
  if (!frames_.empty()) // a let in a fn body reads the call's arguments
    for (const auto &[param, v] : frames_.back())
      for (ir::ValueId x : v)
        key.push_back(vn_.number(x));
  if (const Val *v = recall(key))
    return *v;
  Val v = expr(let->value.get());
  checkSize(let->value.get());
  remember(std::move(key), v);
  return v;
}

Val Lowerer::inlineFn(const ast::CallExpr *e) {
  const ast::FnDecl *fn = e->fn;
  std::map<const ast::ParamDecl *, Val> frame;
  std::vector<uint64_t> key = {1, uint64_t(reinterpret_cast<uintptr_t>(fn))};
  contextKey(key);
  for (size_t i = 0; i < fn->params.size() && i < e->args.size(); ++i) {
    Val a = expr(e->args[i].get());
    key.push_back(a.size());
    for (ir::ValueId x : a)
      key.push_back(vn_.number(x));
    frame[&fn->params[i]] = std::move(a);
  }
  if (const Val *v = recall(key))
    return *v;
  const bool outermost = !expanding_;
  if (outermost)
    expanding_ = e;
  frames_.push_back(std::move(frame));
  Val result;
  for (const auto &s : fn->body) {
    if (auto *let = ast::dynCast<ast::LetStmt>(s.get()))
      bindLet(let);
    else if (auto *ret = ast::dynCast<ast::ReturnStmt>(s.get()))
      result = expr(ret->value.get());
    checkSize(e);
  }
  frames_.pop_back();
  if (outermost)
    expanding_ = nullptr;
  if (result.empty())
    unsupported(fn->range, "fn '" + fn->name.name + "' returns no value");
  remember(std::move(key), result);
  return result;
}

Val Lowerer::builtin(const ast::CallExpr *e) {
  using BI = ast::Builtin;
  auto arg = [&](size_t i) { return expr(e->args.at(i).get()); };
  switch (e->builtin) {
  case BI::Abs:
    return map1(Op::Abs, arg(0));
  case BI::Exp:
    return map1(Op::Exp, arg(0));
  case BI::Log:
    return map1(Op::Log, arg(0));
  case BI::Sin:
    return map1(Op::Sin, arg(0));
  case BI::Cos:
    return map1(Op::Cos, arg(0));
  case BI::Tanh:
    return map1(Op::Tanh, arg(0));
  case BI::Sqrt:
    return map1(Op::Sqrt, arg(0));
  case BI::Floor:
    return map1(Op::Floor, arg(0));
  case BI::Min:
    return map2(Op::Min, arg(0), arg(1));
  case BI::Max:
    return map2(Op::Max, arg(0), arg(1));
  case BI::Pow:
    return map2(Op::Pow, arg(0), arg(1));
  case BI::Clamp:
    return map2(Op::Min, map2(Op::Max, arg(0), arg(1)), arg(2));
  case BI::Dot:
    return {sumOf(map2(Op::Mul, arg(0), arg(1)))};
  case BI::Norm: {
    Val v = arg(0);
    return {b_.op(Op::Sqrt, {sumOf(map2(Op::Mul, v, v))})};
  }
  case BI::Vec2:
  case BI::Vec3:
  case BI::Mat2:
  case BI::Mat3:
  case BI::Transpose:
  case BI::Det:
  case BI::Trace:
  case BI::Outer:
  case BI::PolarRotation:
    return matrix(e);
  case BI::Sum:
  case BI::Mean:
  case BI::ReduceMin:
  case BI::ReduceMax:
    return reduce(e);
  case BI::PartMean:
    return partMean(e);
  case BI::SinWaves:
    unsupported(e->range, "sin_waves(...) is only meaningful as a controller input");
  case BI::Repeat:
    unsupported(e->range, "repeat(...) is only meaningful as a controller input");
  case BI::GroundHeight:
  case BI::GroundNormal:
  case BI::GroundGap:
  case BI::GroundSpeed: {
    Val a0 = arg(0);
    const bool point = e->builtin == BI::GroundGap || e->builtin == BI::GroundSpeed;
    return ground(e->builtin, a0, point ? arg(1) : a0);
  }
  case BI::InContact:
  case BI::ContactNormal:
  case BI::ContactGap:
  case BI::ContactSpeed:
  case BI::PushOut:
    return contact(e);
  case BI::None:
    break;
  }
  unsupported(e->range, "unknown builtin");
}

// part_mean(NAME, F): sum(m F) / max(sum(m), 1) over the points, m the
// body buffer "point.part.NAME" (1 for the part's points, 0 elsewhere) that
// the runtime fills from the robot; 0 for a robot without such a part.
Val Lowerer::partMean(const ast::CallExpr *e) {
  const auto *name = ast::dynCast<ast::NameExpr>(e->args.at(0).get());
  const ast::Expr *arg = e->args.at(1).get();
  const ast::SetDecl *set = arg->type.set;
  if (!name || !set)
    unsupported(e->range, "part_mean needs a part's name and a point field");
  ir::Buffer mask;
  mask.name = set->name.name + ".part." + name->name;
  mask.field = mask.name;
  mask.role = ir::Role::Body;
  mask.sets = {setId(set)};
  ValueId count;
  Val r = accumulate(arg, Op::LocalAdd, 0, ensureBuffer(m_, std::move(mask)), &count);
  const ValueId total = b_.op(Op::Max, {count, b_.constF(1)});
  for (auto &x : r)
    x = b_.div(x, total);
  return r;
}

Val Lowerer::accumulate(const ast::Expr *arg, Op update, double init, int weights,
                        ValueId *weightSum) {
  const ast::SetDecl *set = arg->type.set;
  if (!set)
    unsupported(arg->range, "a reduction needs a per-element field");
  const int n = comps(arg->type);
  Val slots;
  for (int c = 0; c < n; ++c)
    slots.push_back(b_.local(init));
  const ValueId sum = weights >= 0 ? b_.local(0) : ValueId{};
  ValueId i = b_.beginLoop(setId(set));
  auto old = setContext(set, i);
  Val v = expr(arg);
  const ValueId w = weights >= 0 ? b_.load(weights, i) : ValueId{};
  for (int c = 0; c < n; ++c)
    b_.localUpdate(update, slots[c], weights >= 0 ? b_.mul(w, v[c]) : v[c]);
  if (weights >= 0)
    b_.localUpdate(Op::LocalAdd, sum, w);
  setContext(old.first, old.second);
  b_.endLoop();
  Val r;
  for (int c = 0; c < n; ++c)
    r.push_back(b_.localGet(slots[c]));
  if (weightSum)
    *weightSum = b_.localGet(sum);
  return r;
}

Val Lowerer::reduce(const ast::CallExpr *e) {
  const ast::Expr *arg = e->args.at(0).get();
  Op update = Op::LocalAdd;
  double init = 0;
  if (e->builtin == ast::Builtin::ReduceMin) {
    update = Op::LocalMin;
    init = std::numeric_limits<double>::infinity();
  } else if (e->builtin == ast::Builtin::ReduceMax) {
    update = Op::LocalMax;
    init = -std::numeric_limits<double>::infinity();
  }
  Val r = accumulate(arg, update, init, -1, nullptr);
  if (e->builtin == ast::Builtin::Mean) {
    ValueId count = b_.op(Op::IToF, {b_.size(setId(arg->type.set))});
    for (auto &x : r)
      x = b_.div(x, count);
  }
  return r;
}

} // namespace evoc::irgen
