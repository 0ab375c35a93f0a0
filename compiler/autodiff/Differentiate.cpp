// The reverse-mode sweep: activity analysis, forward recompute, and the
// reverse walk over structured loops (see docs/architecture.md).
//
// A worked example, the spring force in 1-D (the long form, with the value
// numbers evoc prints, is "Worked example" in docs/architecture.md):
//
//   forward (step)                      adjoint (step.adj), per spring s
//   loop spring %s {                    loop spring %s' {
//     xa = load point.x[a]                replay: xa, xb, d, L, f, j as in the
//     xb = load point.x[b]                  forward (recomputed, no tape)
//     d  = sub xa, xb                     ja = load point.dv.adj[a]  -- gather
//     L  = sqrt(d * d) + eps              jb = load point.dv.adj[b]
//     f  = dt * k * (L - rest) / L        aj = jb - ja               adj of j
//     j  = f * d                          ad = aj * f  (+ via f, L: the
//     accadd point.dv[a], -j                chain rule through /, sqrt, d*d)
//     accadd point.dv[b],  j              accadd point.x.adj[a],  ad  -- scatter
//   }                                     accadd point.x.adj[b], -ad
//                                       }
//
// Each gather of the forward (load point.x[a]) becomes a scatter-add into the
// adjoint buffer, each scatter-add (accadd point.dv[a]) a gather from one;
// every contribution whose partial is a forward value is guarded,
// select(adj == 0, 0, adj * partial), so an untaken branch adds no NaN.
#include "autodiff/Differentiate.h"

#include <limits>
#include <set>

#include "autodiff/AdjointEmitter.h"
#include "ir/Names.h"
#include "ir/Verifier.h"
#include "support/Error.h"

namespace evoc::autodiff {

using namespace ir;

AdjointEmitter::AdjointEmitter(Module &m, int fwd, Kernel &adj)
    : m_(m), fwdIndex_(fwd), fwd_(m.kernels[fwd]), b_(m, adj) {
  size_t n = fwd_.nextValue + 1;
  map_.assign(n, 0);
  active_.assign(n, false);
  defBlock_.assign(n, nullptr);
  usedNested_.assign(n, false);
  adjSlot_.assign(n, 0);
  adjList_.assign(n, {});
  hasContrib_.assign(n, false);
}

// Records where each value is defined, which values are used from nested
// blocks, and every local's update sites with their enclosing loops.
void AdjointEmitter::analyse(const Block &b, std::vector<const Inst *> &loops) {
  for (const auto &ip : b.insts) {
    const Inst &in = *ip;
    bool slotOp = isLocalOp(in.op) && in.op != Op::Local; // operand 0 is a slot
    for (size_t k = 0; k < in.args.size(); ++k) {
      if (slotOp && k == 0)
        continue;
      if (defBlock_[in.args[k]] != &b)
        usedNested_[in.args[k]] = true;
    }
    if (in.result && in.op != Op::Loop)
      defBlock_[in.result] = &b;
    if (in.op == Op::Local)
      slots_[in.result].block = &b;
    if (in.op == Op::ConstF)
      constDefs_[in.result] = &in;
    if (slotOp && in.op != Op::LocalGet) {
      SlotInfo &s = slots_[in.args[0]];
      // The chain: the loops between the slot's declaring block and here.
      std::vector<const Inst *> chain;
      size_t startAt = 0;
      for (size_t i = 0; i < loops.size(); ++i)
        if (loops[i]->body.get() == s.block)
          startAt = i + 1;
      chain.assign(loops.begin() + startAt, loops.end());
      s.updates.emplace_back(&in, chain);
    }
    if (in.op == Op::LocalGet)
      slots_[in.args[0]].get = in.result;
    if (in.op == Op::Loop) {
      defBlock_[in.body->arg] = in.body.get();
      loops.push_back(&in);
      analyse(*in.body, loops);
      loops.pop_back();
    }
  }
}

// One forward pass of activity propagation; returns true if anything changed.
bool AdjointEmitter::activity(const Block &b) {
  bool changed = false;
  auto set = [&](ValueId v) {
    if (!active_[v]) {
      active_[v] = true;
      changed = true;
    }
  };
  for (const auto &ip : b.insts) {
    const Inst &in = *ip;
    switch (in.op) {
    case Op::Loop:
      changed |= activity(*in.body);
      break;
    case Op::Load:
      if (in.type == Type::F && activeBuf_[in.buffer])
        set(in.result);
      break;
    case Op::Store:
    case Op::AccAdd:
      if (active_[in.args[1]] && m_.buffers[in.buffer].role == Role::Temp &&
          !activeBuf_[in.buffer]) {
        activeBuf_[in.buffer] = true;
        changed = true;
      }
      break;
    case Op::LocalAdd:
    case Op::LocalMax:
    case Op::LocalMin:
      if (active_[in.args[1]])
        set(in.args[0]);
      break;
    case Op::LocalGet:
      if (active_[in.args[0]])
        set(in.result);
      break;
    case Op::Select:
      if (in.type == Type::F && (active_[in.args[1]] || active_[in.args[2]]))
        set(in.result);
      break;
    case Op::Time:
    case Op::Size:
    case Op::IToF:
    case Op::FToI:
    case Op::Local:
    EVOC_IR_CASE_CONSTS:
    EVOC_IR_CASE_FLOAT_BINARY:
    EVOC_IR_CASE_FLOAT_UNARY:
    EVOC_IR_CASE_COMPARE:
    EVOC_IR_CASE_LOGIC:
    EVOC_IR_CASE_INT:
      if (in.type == Type::F)
        for (ValueId a : in.args)
          if (active_[a])
            set(in.result);
      break;
    }
  }
  return changed;
}

// Gives every buffer that carries an adjoint in this kernel its "<b>.adj".
void AdjointEmitter::makeAdjointBuffers(const Block &b) {
  for (const auto &ip : b.insts) {
    const Inst &in = *ip;
    if (in.op == Op::Loop)
      makeAdjointBuffers(*in.body);
    if (in.buffer < 0 || adjBuf_[in.buffer] >= 0)
      continue;
    const Buffer &buf = m_.buffers[in.buffer];
    bool wanted = in.op == Op::Load ? activeBuf_[in.buffer] && in.type == Type::F
                                    : buf.elem == Type::F && active_[in.args[1]];
    if (!wanted)
      continue;
    std::string name = buf.name + ".adj";
    int a = m_.findBuffer(name);
    if (a < 0) {
      Buffer ab = buf;
      ab.name = name;
      ab.role = Role::Adjoint;
      ab.primal = in.buffer;
      ab.differentiable = false;
      ab.tape = false;
      ab.init = "zeros";
      ab.initGain = 1.0;
      a = addBuffer(m_, ab);
    }
    adjBuf_[in.buffer] = a;
  }
}

bool AdjointEmitter::hasWork(const Block &b) const {
  for (const auto &ip : b.insts) {
    const Inst &in = *ip;
    if (in.op == Op::Loop ? hasWork(*in.body) : (in.result && active_[in.result]))
      return true;
    if ((in.op == Op::Store || in.op == Op::AccAdd) && active_[in.args[1]])
      return true;
  }
  return false;
}

void AdjointEmitter::run() {
  activeBuf_.assign(m_.buffers.size(), false);
  adjBuf_.assign(m_.buffers.size(), -1);
  for (size_t i = 0; i < m_.buffers.size(); ++i) {
    const Buffer &buf = m_.buffers[i];
    bool input = buf.role == Role::State || buf.role == Role::Window || buf.role == Role::Param ||
                 (buf.role == Role::Body && buf.differentiable);
    activeBuf_[i] = buf.elem == Type::F && input;
  }
  std::vector<const Inst *> loops;
  analyse(fwd_.body, loops);
  while (activity(fwd_.body)) {
  }
  makeAdjointBuffers(fwd_.body);
  adjBuf_.resize(m_.buffers.size(), -1);
  recompute(fwd_.body, /*tempWrites=*/true);
  reverse(fwd_.body);
}

// Re-emits the forward code of `b` (writes dropped, except Temp writes in the
// one top-level replay) so its values are in scope for the reverse sweep.
void AdjointEmitter::recompute(const Block &b, bool tempWrites) {
  // Updates of locals declared outside `b` were replayed already: skip them.
  std::set<ValueId> saved;
  saved.swap(replaySlots_);
  recomputeBlock(b, tempWrites);
  replaySlots_.swap(saved);
}

void AdjointEmitter::recomputeBlock(const Block &b, bool tempWrites) {
  // Inside the reverse sweep, a value the forward stored into a Temp is
  // reloaded from it (the replay wrote it, bit for bit) instead of being
  // recomputed, when its index is already known where the value is defined.
  // In the top-level replay only the Temps kept per step (Buffer::tape,
  // which the runtime hands over holding the forward's values) are reloaded.
  std::map<const Inst *, const Inst *> reload; // defining inst -> its store
  {
    std::map<ValueId, size_t> pos;
    std::map<ValueId, const Inst *> def;
    for (size_t k = 0; k < b.insts.size(); ++k) {
      const Inst &in = *b.insts[k];
      if (in.result && in.op != Op::Loop) {
        pos[in.result] = k;
        def[in.result] = &in;
      }
      if (in.op != Op::Store || m_.buffers[in.buffer].role != Role::Temp ||
          (tempWrites && !m_.buffers[in.buffer].tape))
        continue;
      ValueId v = in.args[1], idx = in.args[0];
      if (!def.count(v) || def[v]->op == Op::Local || reload.count(def[v]))
        continue;
      bool known = pos.count(idx) ? pos[idx] < pos[v] : true; // else: outer or loop index
      if (known)
        reload[def[v]] = &in;
    }
  }
  for (const auto &ip : b.insts) {
    const Inst &in = *ip;
    if (auto it = reload.find(&in); it != reload.end()) {
      map_[in.result] = b_.load(it->second->buffer, mapped(it->second->args[0]));
      continue;
    }
    switch (in.op) {
    case Op::Loop:
      map_[in.body->arg] = b_.beginLoop(in.set);
      recomputeBlock(*in.body, tempWrites);
      b_.endLoop();
      break;
    case Op::Local:
      replaySlots_.insert(in.result);
      cloneInst(in);
      break;
    case Op::LocalAdd:
    case Op::LocalMax:
    case Op::LocalMin:
      if (replaySlots_.count(in.args[0]))
        cloneInst(in);
      break;
    case Op::Store:
    case Op::AccAdd:
      if (tempWrites && m_.buffers[in.buffer].role == Role::Temp && !m_.buffers[in.buffer].tape) {
        if (in.op == Op::Store)
          b_.store(in.buffer, mapped(in.args[0]), mapped(in.args[1]));
        else
          b_.accAdd(in.buffer, mapped(in.args[0]), mapped(in.args[1]));
      }
      break;
    case Op::Time:
    case Op::Size:
    case Op::Load:
    case Op::LocalGet:
    EVOC_IR_CASE_CONSTS:
    EVOC_IR_CASE_COMPUTE:
      cloneInst(in);
      break;
    }
    if (&in == hookSite_) { // arg-max pre-pass: candidate ordinal
      ValueId x = mapped(in.args[1]);
      ValueId inf = b_.constF(std::numeric_limits<double>::infinity());
      ValueId hit = b_.op(Op::Eq, {x, hookM_});
      b_.localUpdate(Op::LocalMin, hookSlot_, b_.op(Op::Select, {hit, ordinal(in.args[0]), inf}));
    }
  }
}

void AdjointEmitter::cloneInst(const Inst &in) {
  ValueId r = 0;
  switch (in.op) {
  case Op::ConstF:
    r = b_.constF(in.f);
    break;
  case Op::ConstI:
    r = b_.constI(in.i);
    break;
  case Op::ConstB:
    r = b_.constB(in.i != 0);
    break;
  case Op::Time:
    r = b_.time();
    break;
  case Op::Size:
    r = b_.size(in.set);
    break;
  case Op::Load:
    r = b_.load(in.buffer, mapped(in.args[0]));
    break;
  case Op::Local:
    r = b_.local(in.f);
    break;
  case Op::LocalAdd:
  case Op::LocalMax:
  case Op::LocalMin:
    b_.localUpdate(in.op, mapped(in.args[0]), mapped(in.args[1]));
    return;
  case Op::Store:
  case Op::AccAdd:
  case Op::LocalGet:
  case Op::Loop:
  EVOC_IR_CASE_COMPUTE : {
    std::vector<ValueId> args;
    for (ValueId a : in.args)
      args.push_back(mapped(a));
    r = b_.op(in.op, std::move(args));
    break;
  }
  }
  map_[in.result] = r;
}

// The ordinal (execution order) of the current iteration of a local's single
// update site, from the mapped indices of the loops around it.
ValueId AdjointEmitter::ordinal(ValueId slot) {
  const auto &chain = slots_.at(slot).updates.at(0).second;
  ValueId o = b_.constI(0);
  for (const Inst *l : chain)
    o = b_.op(Op::IAdd, {b_.op(Op::IMul, {o, b_.size(l->set)}), mapped(l->body->arg)});
  return b_.op(Op::IToF, {o});
}

// Materialises the adjoint of a local's final value (in its declaring block,
// after all its reads were reversed) and, for max/min, the arg-max ordinal.
void AdjointEmitter::finishSlot(ValueId slot) {
  SlotInfo &s = slots_.at(slot);
  if (s.finished)
    return;
  s.finished = true;
  s.finalAdj = takeAdj(slot);
  if (!s.finalAdj || s.updates.empty())
    return;
  Op kind = s.updates[0].first->op;
  if (kind == Op::LocalAdd)
    return;
  EVOC_ASSERT(s.updates.size() == 1, "autodiff: a max/min local must have a single update site");
  EVOC_ASSERT(s.get, "autodiff: max/min local without a read");
  const Inst *site = s.updates[0].first;
  ValueId m = mapped(s.get);
  ValueId inf = b_.constF(std::numeric_limits<double>::infinity());
  ValueId firstSlot = b_.local(std::numeric_limits<double>::infinity());
  if (s.updates[0].second.empty()) {
    ValueId hit = b_.op(Op::Eq, {mapped(site->args[1]), m});
    b_.localUpdate(Op::LocalMin, firstSlot, b_.op(Op::Select, {hit, b_.constF(0), inf}));
  } else {
    const Inst *outer = s.updates[0].second.front();
    hookSite_ = site;
    hookSlot_ = firstSlot;
    hookM_ = m;
    map_[outer->body->arg] = b_.beginLoop(outer->set);
    recompute(*outer->body, false);
    b_.endLoop();
    hookSite_ = nullptr;
  }
  // The init value itself is the extremum: no update took it.
  double init = 0;
  for (const auto &ip : s.block->insts)
    if (ip->op == Op::Local && ip->result == slot)
      init = ip->f;
  ValueId initIsM = b_.op(Op::Eq, {m, b_.constF(init)});
  s.first = b_.op(Op::Select, {initIsM, inf, b_.localGet(firstSlot)});
}

void AdjointEmitter::reverseLoop(const Block &parent, const Inst &loop) {
  if (!hasWork(*loop.body))
    return;
  // Locals of `parent` updated inside this loop need their final adjoint now.
  for (auto &[slot, info] : slots_)
    if (info.block == &parent)
      for (auto &u : info.updates)
        if (!u.second.empty() && u.second.front() == &loop)
          finishSlot(slot);
  map_[loop.body->arg] = b_.beginLoop(loop.set);
  recompute(*loop.body, false);
  reverse(*loop.body);
  b_.endLoop();
}

void AdjointEmitter::reverse(const Block &b) {
  for (const auto &ip : b.insts)
    if (ip->result && ip->op != Op::Local && ip->op != Op::Loop && active_[ip->result] &&
        usedNested_[ip->result])
      adjSlot_[ip->result] = b_.local(0.0);
  for (auto it = b.insts.rbegin(); it != b.insts.rend(); ++it) {
    const Inst &in = **it;
    switch (in.op) {
    case Op::Loop:
      reverseLoop(b, in);
      break;
    case Op::Load:
    case Op::Store:
    case Op::AccAdd:
      memoryRule(in);
      break;
    case Op::Local:
    case Op::LocalGet:
    EVOC_IR_CASE_LOCAL_UPDATE:
      localRule(in);
      break;
    case Op::Time:
    case Op::Size:
    EVOC_IR_CASE_CONSTS:
    EVOC_IR_CASE_COMPUTE:
      if (in.type == Type::F && active_[in.result])
        if (ValueId a = takeAdj(in.result))
          rule(in, a);
      break;
    }
  }
}

void AdjointEmitter::addAdj(ValueId v, ValueId c) {
  if (!active_[v])
    return;
  hasContrib_[v] = true;
  if (adjSlot_[v])
    b_.localUpdate(Op::LocalAdd, adjSlot_[v], c);
  else
    adjList_[v].push_back(c);
}

ValueId AdjointEmitter::takeAdj(ValueId v) {
  if (!hasContrib_[v])
    return 0;
  ValueId sum = adjSlot_[v] ? b_.localGet(adjSlot_[v]) : 0;
  for (ValueId c : adjList_[v])
    sum = sum ? b_.add(sum, c) : c;
  adjList_[v].clear();
  return sum;
}

int differentiateKernel(Module &m, int k) {
  const Kernel &fwd = m.kernels.at(k);
  Kernel adj;
  adj.name = fwd.name + ".adj";
  adj.kind = fwd.kind == KernelKind::Step   ? KernelKind::StepAdj
             : fwd.kind == KernelKind::Loss ? KernelKind::LossAdj
                                            : KernelKind::LossStepAdj;
  adj.windowBegin = fwd.windowBegin;
  adj.windowEnd = fwd.windowEnd;
  adj.windowSlot = fwd.windowSlot;
  adj.windowReduce = fwd.windowReduce;
  adj.primal = k;
  {
    AdjointEmitter e(m, k, adj);
    e.run();
  }
  m.kernels.push_back(std::move(adj));
  return static_cast<int>(m.kernels.size()) - 1;
}

std::vector<int> differentiateKernels(Module &m, bool steps) {
  std::vector<int> made;
  const size_t n = m.kernels.size();
  for (size_t k = 0; k < n; ++k) {
    const KernelKind kind = m.kernels[k].kind;
    const bool wanted =
        steps ? kind == KernelKind::Step : kind == KernelKind::Loss || kind == KernelKind::LossStep;
    if (wanted && m.findKernel(m.kernels[k].name + ".adj") < 0)
      made.push_back(differentiateKernel(m, static_cast<int>(k)));
  }
  return made;
}

void differentiate(Module &m, Tape tape) {
  // The steps app/Pipeline.cpp runs one by one (each verified and
  // printable there), in the same order.
  if (tape != Tape::Replay && m.findKernel(ir::names::kStepAdjoint) < 0)
    planTape(m, tape == Tape::Products);
  for (int adj : differentiateKernels(m, true))
    if (tape == Tape::Products)
      deferProducts(m, adj);
  differentiateKernels(m, false);
  verifyAfter(m, "autodiff");
}

} // namespace evoc::autodiff
