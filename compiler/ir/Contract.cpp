// The rollout contract of a module (Contract.h).
#include "ir/Contract.h"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "ir/Names.h"
#include "ir/Walk.h"
#include "ir/WholeWrites.h"
#include "support/Error.h"

namespace evoc::ir {
namespace {

bool isStateRole(Role r) { return r == Role::State || r == Role::NextState; }

std::string keyOf(const Buffer &b) { return b.field.empty() ? b.name : b.field; }

[[noreturn]] void fail(const Module &m, const std::string &msg) {
  throw Error(fmt::format("module '{}': {}", m.name, msg));
}

/// The kernels by kind, the adjoints matched to their primal (none at all
/// unless every forward kernel has one).
void findKernels(const Module &m, RolloutContract &c) {
  for (int k = 0; k < int(m.kernels.size()); ++k) {
    const Kernel &K = m.kernels[k];
    if (K.kind == KernelKind::Step) {
      if (c.step >= 0)
        fail(m, "it has two Step kernels ('" + m.kernels[c.step].name + "', '" + K.name +
                    "'); the runtime runs exactly one per time step");
      c.step = k;
    } else if (K.kind == KernelKind::Loss) {
      c.loss.push_back(k);
    } else if (K.kind == KernelKind::LossStep) {
      c.lossStep.push_back(k);
    } else if (K.kind == KernelKind::Init) {
      c.init.push_back(k);
    }
  }
  auto adjointOf = [&](int primal, KernelKind kind) {
    for (int k = 0; k < int(m.kernels.size()); ++k)
      if (m.kernels[k].kind == kind && m.kernels[k].primal == primal)
        return k;
    return -1;
  };
  if (c.step >= 0)
    c.stepAdj = adjointOf(c.step, KernelKind::StepAdj);
  for (int k : c.loss)
    if (int a = adjointOf(k, KernelKind::LossAdj); a >= 0)
      c.lossAdj.push_back(a);
  for (int k : c.lossStep)
    if (int a = adjointOf(k, KernelKind::LossStepAdj); a >= 0)
      c.lossStepAdj.push_back(a);
  if (c.lossAdj.size() != c.loss.size() || c.lossStepAdj.size() != c.lossStep.size())
    c.lossAdj.clear(), c.lossStepAdj.clear(), c.stepAdj = -1;
}

/// The buffers each kernel references.
void findUses(const Module &m, RolloutContract &c) {
  const int nb = int(m.buffers.size());
  c.used.resize(m.kernels.size());
  for (int k = 0; k < int(m.kernels.size()); ++k) {
    std::vector<char> seen(size_t(nb), 0);
    walk(m.kernels[k].body, [&](const Inst &in) {
      if (in.buffer >= 0 && in.buffer < nb)
        seen[size_t(in.buffer)] = 1;
    });
    for (int b = 0; b < nb; ++b)
      if (seen[size_t(b)])
        c.used[size_t(k)].push_back(b);
  }
}

bool uses(const RolloutContract &c, int k, int b) {
  return k >= 0 && std::binary_search(c.used[size_t(k)].begin(), c.used[size_t(k)].end(), b);
}

/// The state fields, which buffers the step reads and writes of each and
/// where the step adjoint keeps their adjoints.
void findFields(const Module &m, RolloutContract &c) {
  const int nb = int(m.buffers.size());
  c.fieldOf.assign(size_t(nb), -1);
  for (int b = 0; b < nb; ++b) {
    const Buffer &B = m.buffers[b];
    if (!isStateRole(B.role))
      continue;
    const std::string key = keyOf(B);
    int f = 0;
    while (f < int(c.fields.size()) && c.fields[f].name != key)
      ++f;
    if (f == int(c.fields.size()))
      c.fields.push_back({key, B.elem, B.sets, B.comps});
    if (c.fields[size_t(f)].start.empty()) // irgen gives every buffer of a field the same start
      c.fields[size_t(f)].start = B.start;
    const StateField &F = c.fields[f];
    if (F.elem != B.elem || F.sets != B.sets || F.comps != B.comps)
      fail(m, fmt::format("state buffers of field '{}' disagree on type or shape ('{}')", key,
                          B.name));
    c.fieldOf[size_t(b)] = f;
  }
  for (int b = 0; b < nb; ++b) {
    const Buffer &B = m.buffers[b];
    if (c.fieldOf[size_t(b)] < 0 || !uses(c, c.step, b))
      continue;
    StateField &F = c.fields[size_t(c.fieldOf[size_t(b)])];
    if (B.role == Role::NextState)
      F.stepWrites = b;
    else if (B.time == TimeRef::Current)
      F.stepReads = b;
  }
  for (int b = 0; b < nb; ++b) {
    const Buffer &B = m.buffers[b];
    if (B.role != Role::Adjoint)
      continue;
    if (B.primal < 0 || B.primal >= nb || m.buffers[B.primal].role == Role::Adjoint)
      fail(m, "adjoint buffer '" + B.name + "' has no valid primal buffer");
    const int f = c.fieldOf[size_t(B.primal)];
    c.fieldOf[size_t(b)] = f;
    if (f < 0 || !uses(c, c.stepAdj, b))
      continue;
    StateField &F = c.fields[size_t(f)];
    if (B.primal == F.stepReads)
      F.adjReads = b;
    if (B.primal == F.stepWrites)
      F.adjWrites = b;
  }
  for (int f = 0; f < int(c.fields.size()); ++f)
    if (c.fields[size_t(f)].name == names::kPositions)
      c.pointX = f;
}

/// The loss output, commands, the temps of the step, and the adjoint ring
/// and window slots.
void findBuffers(const Module &m, RolloutContract &c) {
  const int nb = int(m.buffers.size());
  int64_t maxOffset = 0;
  for (int b = 0; b < nb; ++b) {
    const Buffer &B = m.buffers[b];
    const Role primalRole = B.role == Role::Adjoint ? m.buffers[B.primal].role : B.role;
    if (primalRole == Role::Command) {
      c.readsCommands = true;
      if (B.role == Role::Adjoint)
        fail(m, "command buffer '" + m.buffers[B.primal].name + "' has an adjoint");
    }
    if (B.role == Role::Output && B.name == names::kLoss)
      c.lossOutput = b;
    if (B.role == Role::Output && B.name == names::kLossSample)
      c.windowSlots = B.comps;
    if (B.role == Role::State && B.time == TimeRef::Offset)
      maxOffset = std::max<int64_t>(maxOffset, -B.fixedTime);
    // Kept: the step's activations and the row factors step.adj writes for
    // the window products (W.adj.rows), which only the adjoint uses.
    if (B.role == Role::Temp && B.tape && (uses(c, c.step, b) || uses(c, c.stepAdj, b)))
      c.kept.push_back(b);
  }
  c.adjSlots = int(maxOffset) + 2;
  for (int b = 0; b < nb; ++b)
    if (m.buffers[b].role == Role::Adjoint && m.buffers[b].primal == c.lossOutput &&
        c.lossOutput >= 0)
      c.lossOutputAdj = b;
  if (c.lossOutput < 0 && !(c.loss.empty() && c.lossStep.empty()))
    fail(m, "its loss kernels write no Output buffer named 'loss'");
  if (c.lossOutput >= 0 && m.buffers[c.lossOutput].elem != Type::F)
    fail(m, "its 'loss' output is not a float buffer");
}

/// The scratch each kernel, and each step's tape block, must start with as
/// zeros.
void findZeroes(const Module &m, RolloutContract &c) {
  auto isTemp = [&](int b) {
    const Buffer &B = m.buffers[size_t(b)];
    return B.role == Role::Temp ||
           (B.role == Role::Adjoint && m.buffers[size_t(B.primal)].role == Role::Temp);
  };
  c.scratchZero.assign(m.kernels.size(), {});
  for (int k = 0; k < int(m.kernels.size()); ++k)
    for (int b : c.used[size_t(k)])
      if (isTemp(b) && !m.buffers[size_t(b)].tape && !writesWholeFirst(m, m.kernels[size_t(k)], b))
        c.scratchZero[size_t(k)].push_back(b);
  for (int b : c.kept) {
    const int first = uses(c, c.step, b) ? c.step : c.stepAdj;
    if (first < 0 || !writesWholeFirst(m, m.kernels[size_t(first)], b))
      c.keptZero.push_back(b);
  }
}

} // namespace

RolloutContract rolloutContract(const Module &m) {
  RolloutContract c;
  findKernels(m, c);
  findUses(m, c);
  findFields(m, c);
  findBuffers(m, c);
  findZeroes(m, c);
  return c;
}

} // namespace evoc::ir
