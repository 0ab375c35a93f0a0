// Test fixture: the ELDiR mass-spring step (docs/evolution.md) and its MLP
// controller and loss, written in IR with the Builder; plus a small robot.
#pragma once

#include <random>

#include "GradCheck.h"
#include "ir/IR.h"

namespace evoc::test {

/// A buffer of `role` over `sets` (comps entries per element), for
/// hand-built test modules.
ir::Buffer buf(const std::string &name, ir::Role r, std::vector<int> sets, int comps = 1,
               ir::Type elem = ir::Type::F);

enum class Contact { NoSlip, Friction };

struct EldirOptions {
  Contact contact = Contact::Friction;
  int hidden = 8;                  // hidden units (32 in ELDiR)
  bool bodyDifferentiable = false; // rest lengths and stiffness get adjoints
  double dt = 0.004, damping = 15, gravity = -4.8, ground = 0.1, friction = 1.0;
};

/// A module with kernels "step" (controller + physics, state t -> t+1) and
/// "loss" (-(1/n) sum_p (x_last.x - x_first.x)), not yet differentiated.
/// Buffers: point.x, point.v (state, comps 2), point.x.next, point.v.next,
/// spring.a/b (int), spring.rest/stiffness/actuation, mlp.w1/b1/w2/b2,
/// temps ctrl.in, ctrl.h, spring.act, point.dv; loss inputs point.x.first,
/// point.x.last; output loss.
ir::Module eldirModule(const EldirOptions &o);

/// Gives eldirModule's buffers, which it names only, the field names irgen
/// uses: point.x/v for the .next states, w1, b1, w2, b2 for the parameters.
void setIrgenFields(ir::Module &m);

/// A strip of triangles: n points, 2n - 3 springs, resting at height `y0`,
/// with random parameters (Xavier-like scale) and zero velocity.
Data eldirRobot(const ir::Module &m, int n, double y0, std::mt19937 &rng);

} // namespace evoc::test
