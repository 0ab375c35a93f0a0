// planKernel: decides, per top-level loop, parallel vs serial execution,
// block reductions of locals and which scatter-adds must be deferred.
//
// A scatter-add runs directly in a parallel loop only when its index is
// provably owned by the loop's element (ir::IndexAnalysis::ownedSlice):
// index = ((e * M1 + r1) * M2 + r2)... with every r in [0, M). All such sites of one buffer in one
// loop must use the same slice size, so their ranges [e * S, e * S + S) are disjoint between
// iterations. Everything else is recorded and replayed in serial loop order,
// which also makes every target's sum order that of the interpreter.
#include "codegen/cuda/KernelPlan.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>

#include "ir/IndexAnalysis.h"
#include "ir/Walk.h"

namespace evoc::codegen::cuda {
namespace {

using ir::Extent;
using ir::Inst;
using ir::Op;
using ir::ValueId;

class Analysis {
public:
  Analysis(const ir::Module &m, const ir::Kernel &k) : m_(m), ix_(k.body) {}

  KernelPlan run(const ir::Kernel &k) {
    KernelPlan plan;
    std::set<ValueId> topLocals;
    for (const auto &ip : k.body.insts) {
      if (ip->op == Op::Local)
        topLocals.insert(ip->result);
      if (ip->op == Op::Loop)
        plan.loops[ip.get()] = planLoop(*ip, topLocals);
    }
    collectUses(k.body, plan);
    std::vector<int> sets;
    for (const auto &ip : k.body.insts)
      if (ip->op == Op::Loop && plan.loops[ip.get()].mode == LoopPlan::Mode::Parallel)
        collectSites(*ip, plan.loops[ip.get()], sets, plan);
    for (const auto &ip : k.body.insts)
      if (ip->op == Op::Loop)
        for (const auto &[b, sites] : plan.loops[ip.get()].gathered) {
          bool inv = true;
          for (const Inst *site : sites)
            inv = inv && ix_.bodyInvariant(m_, site->args[0]);
          plan.groups.push_back({b, ip->set, static_cast<int>(sites.size()), m_.buffers[b].sets,
                                 m_.buffers[b].comps, inv});
        }
    return plan;
  }

private:
  struct Access {
    const Inst *inst;
    std::optional<Extent> slice;
  };

  LoopPlan planLoop(const Inst &loop, const std::set<ValueId> &topLocals) {
    LoopPlan lp;
    ValueId e = loop.body->arg;
    std::map<int, std::vector<Access>> loads, stores, accs;
    bool serial = false;
    // Only memory and accumulator updates matter here; other ops pass.
    ir::walk(*loop.body, [&](const Inst &in) {
      if (in.op == Op::Load)
        loads[in.buffer].push_back({&in, ix_.ownedSlice(in.args[0], e)});
      else if (in.op == Op::Store)
        stores[in.buffer].push_back({&in, ix_.ownedSlice(in.args[0], e)});
      else if (in.op == Op::AccAdd)
        accs[in.buffer].push_back({&in, ix_.ownedSlice(in.args[0], e)});
      else if (ir::isLocalUpdate(in.op) && topLocals.count(in.args[0])) {
        auto [it, fresh] = lp.reduced.emplace(in.args[0], in.op);
        if (!fresh && it->second != in.op)
          serial = true; // one slot updated with two different ops
      }
    });
    auto sameSlice = [](const std::vector<Access> &v, std::optional<Extent> &s) {
      for (const Access &a : v) {
        if (!a.slice || (s && !(*s == *a.slice)))
          return false;
        s = a.slice;
      }
      return true;
    };
    for (const auto &[b, ls] : loads) {
      bool written = stores.count(b) || accs.count(b);
      if (!written)
        continue;
      // Read and written in one loop: only safe when every access stays in
      // the element's own slice.
      std::optional<Extent> s;
      if (!sameSlice(ls, s) || !sameSlice(stores[b], s) || !sameSlice(accs[b], s))
        serial = true;
    }
    if (serial) {
      lp.mode = LoopPlan::Mode::Serial;
      lp.reduced.clear();
      return lp;
    }
    for (const auto &[b, as] : accs) {
      std::optional<Extent> s;
      if (!sameSlice(as, s))
        for (const Access &a : as)
          lp.deferred.insert(a.inst);
    }
    transpose(loop, lp);
    splitInner(loop, lp);
    const char *mode = std::getenv("EVOC_CUDA_REPLAY");
    if (!(mode && std::string(mode) == "serial"))
      gather(loop, lp);
    return lp;
  }

  /// Finds an inner product the lanes of a warp can share (LoopPlan::split).
  void splitInner(const Inst &loop, LoopPlan &lp) {
    ValueId e = loop.body->arg;
    std::set<ValueId> bodyLocals;
    std::map<const Inst *, std::map<ValueId, Op>> split;
    for (const auto &ip : loop.body->insts) {
      if (ip->op == Op::Local)
        bodyLocals.insert(ip->result);
      if (ip->op != Op::Loop)
        continue;
      ValueId j = ip->body->arg;
      std::set<ValueId> innerLocals;
      std::map<ValueId, Op> &locals = split[ip.get()];
      for (const auto &jp : ip->body->insts) {
        // Only loops, memory writes and accumulators decide; other ops pass.
        if (jp->op == Op::Loop || jp->op == Op::Store)
          return;
        if (jp->op == Op::AccAdd && !lp.deferred.count(jp.get()) &&
            !ix_.ownedByPair(jp->args[0], e, j))
          return; // lanes could hit one element
        if (jp->op == Op::Local)
          innerLocals.insert(jp->result);
        if (!ir::isLocalUpdate(jp->op))
          continue;
        const ValueId slot = jp->args[0];
        if (innerLocals.count(slot) || lp.reduced.count(slot))
          continue; // the lane's own, or a per-thread partial of a block reduction
        if (!bodyLocals.count(slot))
          return;
        auto [it, fresh] = locals.emplace(slot, jp->op);
        if (!fresh && it->second != jp->op)
          return;
      }
    }
    lp.split = std::move(split);
  }

  /// Finds the deferred sites replayed through incidence lists (LoopPlan).
  void gather(const Inst &loop, LoopPlan &lp) {
    std::set<const Inst *> direct;
    for (const auto &ip : loop.body->insts)
      direct.insert(ip.get());
    std::map<int, bool> ok;
    for (const Inst *site : lp.deferred) {
      if (lp.transposed.count(site))
        continue;
      auto [it, fresh] = ok.emplace(site->buffer, true);
      it->second = it->second && direct.count(site);
    }
    for (const auto &ip : loop.body->insts) // program order
      if (lp.deferred.count(ip.get()) && !lp.transposed.count(ip.get()) && ok[ip->buffer])
        lp.gathered[ip->buffer].push_back(ip.get());
  }

  /// Finds the deferred sites that can be replayed in parallel (LoopPlan).
  void transpose(const Inst &loop, LoopPlan &lp) {
    // Candidate: buffer -> (inner loop, slice) of its first deferred site.
    std::map<int, std::pair<const Inst *, std::optional<Extent>>> cand;
    std::set<int> rejected;
    std::map<const Inst *, const Inst *> where; // deferred site -> inner loop (or null)
    for (const Inst *site : lp.deferred)
      where[site] = nullptr;
    for (const auto &ip : loop.body->insts)
      if (ip->op == Op::Loop)
        for (const auto &jp : ip->body->insts)
          if (where.count(jp.get()))
            where[jp.get()] = ip.get();
    for (const auto &[site, inner] : where) {
      int b = site->buffer;
      if (rejected.count(b))
        continue;
      std::optional<Extent> s =
          inner ? ix_.ownedSlice(site->args[0], inner->body->arg) : std::optional<Extent>();
      if (!s) {
        rejected.insert(b);
        continue;
      }
      auto [it, fresh] = cand.emplace(b, std::make_pair(inner, s));
      if (!fresh && (it->second.first != inner || !(*it->second.second == *s)))
        rejected.insert(b);
    }
    for (const auto &[site, inner] : where)
      if (!rejected.count(site->buffer))
        lp.transposed[site] = inner;
  }

  void collectSites(const Inst &loop, const LoopPlan &lp, std::vector<int> &sets,
                    KernelPlan &plan) {
    sets.push_back(loop.set);
    for (const auto &ip : loop.body->insts) {
      if (ip->op == Op::AccAdd && lp.deferred.count(ip.get()))
        plan.sites.push_back({ip.get(), sets});
      if (ip->op == Op::Loop)
        collectSites(*ip, lp, sets, plan);
    }
    sets.pop_back();
  }

  void collectUses(const ir::Block &b, KernelPlan &plan) {
    ir::walk(b, [&](const Inst &in) {
      if (in.op == Op::Load)
        plan.loaded.insert(in.buffer);
      if (in.op == Op::Store)
        plan.stored.insert(in.buffer);
      if (in.op == Op::AccAdd)
        plan.accumulated.insert(in.buffer);
    });
  }

  const ir::Module &m_;
  ir::IndexAnalysis ix_;
};

} // namespace

KernelPlan planKernel(const ir::Module &m, const ir::Kernel &k) { return Analysis(m, k).run(k); }

std::vector<KernelPlan> planModule(const ir::Module &m) {
  std::vector<KernelPlan> plans;
  plans.reserve(m.kernels.size());
  for (const ir::Kernel &k : m.kernels)
    plans.push_back(planKernel(m, k));
  return plans;
}

int64_t scratchBytes(const KernelPlan &p, ir::Precision prec, const int64_t *sizes) {
  int64_t fbytes = prec == ir::Precision::F64 ? 8 : 4, total = 0;
  for (const RecordSite &s : p.sites) {
    int64_t n = 1;
    for (int set : s.loopSets)
      n *= sizes[set];
    total += n * 8 + ((n * fbytes + 7) & ~int64_t(7));
  }
  for (const GatherGroup &g : p.groups) {
    int64_t n = g.comps;
    for (int set : g.bufferSets)
      n *= sizes[set];
    int64_t records = sizes[g.loopSet] * g.nSites;
    total += ((3 * n + 1 + records) * 4 + 7) & ~int64_t(7);
  }
  return total;
}

} // namespace evoc::codegen::cuda
