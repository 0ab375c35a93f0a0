// Sema tests: the CheckedProgram of the examples, --set overrides, and the
// annotations lowering relies on (resolved names, types, element sets).
#include "SemaTestUtil.h"

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <tuple>

using namespace evoc;
using namespace evoc::ast;
namespace fs = std::filesystem;

static const std::string kSrc = EVOC_SOURCE_DIR;

TEST_CASE("every stdlib and example file checks on its own", "[sema]") {
  // Listed when the test runs, so that a new file is covered without an edit.
  std::vector<std::string> files;
  for (const char *dir : {"stdlib", "examples"})
    for (const auto &e : fs::recursive_directory_iterator(kSrc + "/" + dir))
      if (e.path().extension() == ".evo")
        files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  CHECK(files.size() >= 30);
  for (const auto &f : files) {
    auto c = test::checkPath(f);
    INFO(f << "\n" << c->all());
    CHECK(c->program);
    CHECK(c->diags.diagnostics().empty());
  }
}

TEST_CASE("a library is checked in the world its requires block states", "[sema]") {
  auto c = test::checkPath(kSrc + "/stdlib/losses/multitask3d.evo");
  INFO(c->all());
  REQUIRE(c->program);
  CHECK(c->program->world.dim == 3);
  CHECK(c->program->commands.names == std::vector<std::string>{"d", "r"});
  CHECK(c->program->commands.comps == std::vector<int>{2, 1});
  CHECK(c->program->commands.tasks.empty());
  // Its dim is the world's: a vec2 field is refused, the 3D ground builtins
  // take a horizontal vec2.
  auto d = test::checkText("requires { dim = 3; }\n"
                           "fn h(p: vec3) -> scalar { return ground_height(vec2(p.x, p.y)); }\n"
                           "fn f(a: vec2) -> scalar { return a.x; }\n");
  REQUIRE(d->lines().size() == 1);
  CHECK(d->lines()[0] == "t.evo:3:9: error: vec2 in a dim = 3 world; use vec3");
  // A program with a world checks its own requires block against it.
  auto e = test::checkText("requires { dim = 2; }\nworld { dim = 3; }\n");
  REQUIRE(e->lines().size() == 3);
  CHECK(e->lines()[0] == "t.evo:1:1: error: this file is written for world.dim = 2, not 3; use "
                         "a library written for dim = 3, or set world.dim = 2");
  CHECK(e->lines()[1] == "t.evo:2:15: note: world.dim is set here");
  // Commands it reads, set by the experiment with their types: no error.
  auto f = test::checkText("requires { commands = v, d vec2; }\nworld { steps = 10; }\n"
                           "commands { a { p = 1; v = 0; d = vec2(0, uniform(0, 1)); } }\n");
  INFO(f->all());
  CHECK(f->program);
}

TEST_CASE("the CheckedProgram of examples/eldir.evo", "[sema]") {
  auto c = test::checkPath(kSrc + "/examples/eldir.evo");
  INFO(c->all());
  REQUIRE(c->program);
  const sema::CheckedProgram &p = *c->program;
  CHECK(p.world.dim == 2);
  CHECK(p.world.dt == Approx(0.004));
  CHECK(p.world.steps == 1000);
  CHECK(p.world.precision == sema::Precision::F64);
  CHECK(p.world.gravity == Approx(-4.8));
  CHECK(p.world.damping == Approx(15));
  CHECK(p.world.ground.kind == "flat");
  CHECK(p.world.ground.height == Approx(0.1));
  CHECK(p.world.ground.friction == Approx(1.0));
  CHECK(!p.world.checkpoint);
  REQUIRE(p.physics);
  CHECK(p.physics->name.name == "mass_spring_noslip");
  CHECK(p.world.physics == p.physics);
  REQUIRE(p.controller);
  CHECK(p.controller->name.name == "mlp");
  REQUIRE(p.loss);
  CHECK(p.loss->name.name == "displacement");
  REQUIRE(p.hasBody);
  CHECK(p.body.kind == BodyKind::Lattice);
  CHECK(p.body.cell == "triangle");
  CHECK(p.body.rows == 13);
  CHECK(p.body.cols == 22);
  CHECK(p.body.edge == Approx(0.05));
  CHECK(p.body.stiffness == Approx(3e4));
  CHECK(p.body.actuation == Approx(0.1));
  CHECK(p.body.fillHoles);
  CHECK(p.body.largestComponent);
  REQUIRE(p.parts.size() == 1);
  CHECK(p.parts[0].points.size() == 3);
  CHECK(p.parts[0].springs.size() == 3);
  REQUIRE(p.parts[0].ports.size() >= 3);
  CHECK(p.parts[0].ports[2].name == "left");
  CHECK(p.parts[0].ports[2].points == std::vector<int>{2, 0});
  // 1 / cells and 1 / edges of the 13 x 22 lattice: 286 triangles, 453 edges.
  CHECK(p.latticeMutation.cellRate == 1.0 / 286);
  CHECK(p.latticeMutation.untilChanged);
  CHECK(p.latticeMutation.actuatorRate == 1.0 / 453);
  REQUIRE(p.hasEvolve);
  CHECK(p.evolve.population == 1000);
  CHECK(p.evolve.generations == 1000);
  CHECK(p.evolve.seed == 1);
  CHECK(p.evolve.learn.iterations == 35);
  CHECK(p.evolve.learn.optimizer.kind == OptimizerKind::NormalizedStep);
  CHECK(p.evolve.learn.optimizer.args.at("step") == Approx(0.2));
  CHECK(p.evolve.fitness.kind == FitnessKind::MaxNegLoss);
  CHECK(p.evolve.select.kind == sema::Select::Kind::Truncation);
  REQUIRE(p.evolve.invalid.size() == 2);
  CHECK(p.evolve.invalid[0].kind == InvalidRule::Kind::LossAbove);
  CHECK(p.evolve.invalid[0].threshold == Approx(5.5));
  CHECK(p.evolve.invalid[1].kind == InvalidRule::Kind::LossJump);
  CHECK(p.fns.count("spring_impulse"));
  CHECK(p.fns.count("free_velocity"));
}

TEST_CASE("--set overrides apply before the checks", "[sema]") {
  sema::CheckOptions o;
  o.overrides = {{"evolve.population", "50"},
                 {"world.steps", "200"},
                 {"evolve.learn.iterations", "3"},
                 {"world.checkpoint", "10"},
                 {"world.physics", "mass_spring_friction"}};
  auto c = test::checkPath(kSrc + "/examples/eldir.evo", o);
  INFO(c->all());
  REQUIRE(c->program);
  CHECK(c->program->evolve.population == 50);
  CHECK(c->program->world.steps == 200);
  CHECK(c->program->evolve.learn.iterations == 3);
  CHECK(c->program->world.checkpoint == 10);
  CHECK(c->program->physics->name.name == "mass_spring_friction");

  sema::CheckOptions bad;
  bad.overrides = {{"evolve.populaton", "5"}, {"world.steps", "0"}};
  auto d = test::checkPath(kSrc + "/examples/eldir.evo", bad);
  CHECK(!d->program);
  REQUIRE(d->lines().size() == 1);
  CHECK(d->lines()[0] == "evoc: error: unknown setting 'evolve.populaton' in --set; did you "
                         "mean 'evolve.population'?");
  sema::CheckOptions zero;
  zero.overrides = {{"world.steps", "0"}};
  auto e = test::checkPath(kSrc + "/examples/eldir.evo", zero);
  REQUIRE(e->lines().size() == 1);
  CHECK(e->lines()[0] == "<--set world.steps>:1:19: error: world.steps must be at least 1 (it "
                         "counts the states x[0] .. x[steps - 1])");
}

TEST_CASE("--set values are one expression", "[sema]") {
  sema::CheckOptions o;
  o.overrides = {{"world.steps", "1; dim = 3"}};
  auto c = test::checkPath(kSrc + "/examples/eldir.evo", o);
  CHECK(!c->program);
  REQUIRE(c->lines().size() == 1);
  CHECK(c->lines()[0] == "evoc: error: --set world.steps: the value must be one expression, not "
                         "'1; dim = 3'");
  sema::CheckOptions g;
  g.overrides = {{"world.ground", "flat(height = 0.2, friction = 0.3)"}};
  auto d = test::checkPath(kSrc + "/examples/eldir.evo", g);
  REQUIRE(d->program);
  CHECK(d->program->world.ground.height == Approx(0.2));
}

TEST_CASE("requireExperiment rejects a library file", "[sema]") {
  sema::CheckOptions o;
  o.requireExperiment = true;
  auto c = test::checkPath(kSrc + "/stdlib/physics/mass_spring.evo", o);
  CHECK(!c->program);
  CHECK(c->all().find("no 'world' block") != std::string::npos);
}

/// Visits every expression under a statement list.
static void forEachExpr(const std::vector<StmtPtr> &stmts,
                        const std::function<void(const Expr &)> &f) {
  std::function<void(const Expr &)> walk = [&](const Expr &e) {
    f(e);
    if (auto *m = dynCast<MemberExpr>(&e))
      walk(*m->base);
    if (auto *b = dynCast<BinaryExpr>(&e))
      walk(*b->lhs), walk(*b->rhs);
    if (auto *u = dynCast<UnaryExpr>(&e))
      walk(*u->operand);
    if (auto *i = dynCast<IfExpr>(&e))
      walk(*i->cond), walk(*i->thenExpr), walk(*i->elseExpr);
    if (auto *c = dynCast<CallExpr>(&e))
      for (auto &a : c->args)
        walk(*a);
    if (auto *x = dynCast<IndexExpr>(&e))
      walk(*x->base), walk(*x->index);
  };
  for (auto &s : stmts) {
    if (auto *l = dynCast<LetStmt>(s.get()))
      walk(*l->value);
    if (auto *a = dynCast<AssignStmt>(s.get()))
      walk(*a->target), walk(*a->value);
    if (auto *r = dynCast<ReturnStmt>(s.get()))
      walk(*r->value);
    if (auto *fr = dynCast<ForStmt>(s.get()))
      forEachExpr(fr->body, f);
  }
}

TEST_CASE("annotations: every name resolved and typed in the physics step", "[sema]") {
  auto c = test::checkPath(kSrc + "/examples/eldir.evo");
  REQUIRE(c->program);
  const PhysicsDecl &ph = *c->program->physics;
  const SetDecl *point = ph.findSet("point");
  const SetDecl *spring = ph.findSet("spring");
  REQUIRE(point);
  REQUIRE(spring);
  CHECK(spring->endpoints[0].target == point);
  int names = 0, members = 0;
  forEachExpr(ph.step, [&](const Expr &e) {
    CHECK(!e.type.isError());
    if (auto *n = dynCast<NameExpr>(&e)) {
      ++names;
      CHECK(n->ref != NameRef::Unresolved);
    }
    if (auto *m = dynCast<MemberExpr>(&e)) {
      ++members;
      CHECK(m->ref != MemberRef::Unresolved);
    }
    if (auto *call = dynCast<CallExpr>(&e))
      CHECK(call->ref != CallRef::Unresolved);
  });
  CHECK(names > 20);
  CHECK(members > 20);
  auto *springLoop = dynCast<ForStmt>(ph.step[0].get());
  REQUIRE(springLoop);
  CHECK(springLoop->set == spring);
  auto *let = dynCast<LetStmt>(springLoop->body[0].get());
  REQUIRE(let);
  CHECK(let->type == Type::vec(2));
  auto *call = dynCast<CallExpr>(let->value.get());
  REQUIRE(call);
  CHECK(call->ref == CallRef::Fn);
  REQUIRE(call->fn);
  CHECK(call->fn->name.name == "spring_impulse");
  // s.a.x - s.b.x: a gather through endpoint a.
  auto *diff = dynCast<BinaryExpr>(call->args[0].get());
  REQUIRE(diff);
  auto *sax = dynCast<MemberExpr>(diff->lhs.get());
  REQUIRE(sax);
  CHECK(sax->ref == MemberRef::Field);
  CHECK(sax->field == point->findField("x"));
  auto *sa = dynCast<MemberExpr>(sax->base.get());
  REQUIRE(sa);
  CHECK(sa->ref == MemberRef::Endpoint);
  CHECK(sa->endpoint == &spring->endpoints[0]);
  CHECK(sa->type.kind == TypeKind::Element);
  CHECK(sa->type.set == point);
  auto *sname = dynCast<NameExpr>(sa->base.get());
  REQUIRE(sname);
  CHECK(sname->ref == NameRef::Element);
  CHECK(sname->loop == springLoop);
  auto *acc = dynCast<AssignStmt>(springLoop->body[1].get());
  REQUIRE(acc);
  CHECK(acc->ref == AssignRef::Accumulate);
  CHECK(acc->field == point->findField("dv"));
  CHECK(acc->through == &spring->endpoints[0]);
  auto *pointLoop = dynCast<ForStmt>(ph.step[1].get());
  REQUIRE(pointLoop);
  auto *next = dynCast<AssignStmt>(pointLoop->body.back().get());
  REQUIRE(next);
  CHECK(next->ref == AssignRef::NextState);
  CHECK(next->field == point->findField("v"));
  CHECK(next->through == nullptr);
  // `let x1 = p.x + world.dt * v1;`: world.dt resolves to its value, and
  // the next let reads the ground (and a scene) through in_contact(x1).
  auto *at = dynCast<LetStmt>(pointLoop->body[1].get());
  REQUIRE(at);
  auto *sum = dynCast<BinaryExpr>(at->value.get());
  REQUIRE(sum);
  auto *prod = dynCast<BinaryExpr>(sum->rhs.get());
  REQUIRE(prod);
  auto *dt = dynCast<MemberExpr>(prod->lhs.get());
  REQUIRE(dt);
  CHECK(dt->ref == MemberRef::WorldSetting);
  CHECK(dt->worldKey == "dt");
  CHECK(dt->constValue == Approx(0.004));
  auto *hit = dynCast<LetStmt>(pointLoop->body[2].get());
  REQUIRE(hit);
  bool groundCall = false;
  std::function<void(const Expr *)> find = [&](const Expr *e) {
    if (auto *c = dynCast<CallExpr>(e)) {
      groundCall |= c->builtin == Builtin::InContact;
      for (const auto &a : c->args)
        find(a.get());
    } else if (auto *b = dynCast<BinaryExpr>(e)) {
      find(b->lhs.get());
      find(b->rhs.get());
    }
  };
  find(hit->value.get());
  CHECK(groundCall);
}

TEST_CASE("annotations: controller and loss", "[sema]") {
  auto c = test::checkPath(kSrc + "/examples/eldir.evo");
  REQUIRE(c->program);
  const ControllerDecl &mlp = *c->program->controller;
  const SetDecl *point = c->program->physics->findSet("point");
  REQUIRE(mlp.inputs.size() == 5);
  auto *sw = dynCast<CallExpr>(mlp.inputs[0].get());
  REQUIRE(sw);
  CHECK(sw->builtin == Builtin::SinWaves);
  CHECK(mlp.inputs[1]->type.kind == TypeKind::Vec);
  CHECK(mlp.inputs[1]->type.set == point);
  CHECK(mlp.inputs[3]->type == Type::scalar());
  CHECK(mlp.lets[0]->type == Type::vec(2)); // com = mean(point.x)
  REQUIRE(mlp.hidden.size() == 1);
  CHECK(mlp.hidden[0].unitsValue == 32);
  REQUIRE(mlp.outputs.size() == 1);
  CHECK(mlp.outputs[0].field == c->program->physics->findSet("spring")->findField("act"));
  // loss = -mean(point.x[T].x - point.x[0].x)
  const LossDecl &loss = *c->program->loss;
  CHECK(loss.value->type == Type::scalar());
  auto *neg = dynCast<UnaryExpr>(loss.value.get());
  REQUIRE(neg);
  auto *mean = dynCast<CallExpr>(neg->operand.get());
  REQUIRE(mean);
  CHECK(mean->builtin == Builtin::Mean);
  auto *diff = dynCast<BinaryExpr>(mean->args[0].get());
  REQUIRE(diff);
  CHECK(diff->type.set == point);
  auto *last = dynCast<IndexExpr>(dynCast<MemberExpr>(diff->lhs.get())->base.get());
  REQUIRE(last);
  CHECK(last->timeIsConstant);
  CHECK(last->timeValue == 999);
  auto *first = dynCast<IndexExpr>(dynCast<MemberExpr>(diff->rhs.get())->base.get());
  REQUIRE(first);
  CHECK(first->timeValue == 0);
}

TEST_CASE("windows: bounds and window-relative times", "[sema]") {
  auto c = test::checkText(R"(import "physics/mass_spring.evo";
world { steps = 100; physics = mass_spring_noslip; }
controller c { inputs = point.v; hidden = 4 tanh; outputs = spring.act tanh; }
loss speed = -mean(t in 1..T: mean(point.x[t].x - point.x[t - 1].x)) / world.dt;
)",
                           kSrc + "/examples/t.evo");
  INFO(c->all());
  REQUIRE(c->program);
  auto *div = dynCast<BinaryExpr>(c->program->loss->value.get());
  REQUIRE(div);
  auto *neg = dynCast<UnaryExpr>(div->lhs.get());
  REQUIRE(neg);
  auto *w = dynCast<WindowExpr>(neg->operand.get());
  REQUIRE(w);
  CHECK(w->loValue == 1);
  CHECK(w->hiValue == 99);
}

TEST_CASE("several errors in one run; warnings do not fail a check", "[sema]") {
  auto c = test::checkText("fn f(x: scalar) -> scalar {\n  let u = 1;\n  return y + z;\n}\n"
                           "fn g(x: scalar) -> vec2 { return x; }\n");
  CHECK(!c->program);
  auto l = c->lines();
  REQUIRE(l.size() == 5);
  CHECK(l[0] == "t.evo:3:10: error: undefined name 'y'");
  CHECK(l[1] == "t.evo:3:14: error: undefined name 'z'");
  CHECK(l[2] == "t.evo:2:7: warning: unused let 'u'");
  CHECK(l[3] == "t.evo:5:34: error: fn 'g' returns vec2, but this is scalar");
  auto w = test::checkText("fn f(x: scalar) -> scalar {\n  let u = 1;\n  return x;\n}\n");
  CHECK(w->program);
  CHECK(w->diags.warningCount() == 1);
}

TEST_CASE("a grammar body evaluates to rules", "[sema]") {
  auto c = test::checkText(R"(part seg {
  points = [(0, 0), (1, 0), (0, 1), (1, 1)];
  springs = [(0, 1), (1, 3), (3, 2), (2, 0), (0, 3)];
  ports = left(0, 2), right(1, 3), down(0, 1);
}
part foot { points = [(0, 0), (1, 0), (0.5, 1)]; springs = [(0, 1), (1, 2), (2, 0)]; ports = up(0, 1); }
grammar Walker {
  start = Body;
  Body -> seg(right: Trunk, down: Leg);
  Trunk -> seg<left>(right: Trunk?, down: Leg) @ 0.5 | seg<left>(down: Leg);
  Leg -> foot;
}
body grammar W { grammar = Walker; max_parts = 12; scale = 0.1; }
mutation { add p = 0.3; remove p = 0.2; rearrange p = 0.3; combine p = 0.2; }
)");
  INFO(c->all());
  REQUIRE(c->program);
  const auto &p = *c->program;
  REQUIRE(p.grammars.size() == 1);
  CHECK(p.grammars[0].start == "Body");
  REQUIRE(p.grammars[0].rules.size() == 3);
  CHECK(p.grammars[0].rules[1].alternatives[0].weight == Approx(0.5));
  CHECK(p.grammars[0].rules[1].alternatives[1].ports.size() == 1);
  CHECK(p.body.kind == BodyKind::Grammar);
  CHECK(p.body.grammar == "Walker");
  CHECK(p.body.maxParts == 12);
  CHECK(p.grammarMutation.combine.isConstant());
  CHECK(body::evalScalar(p.grammarMutation.combine, nullptr) == Approx(0.2));
  CHECK(body::evalScalar(p.grammarMutation.add, nullptr) == Approx(0.3));
  CHECK(p.grammarMutation.swap.code.empty()); // never given: 0
  // The BodySpec: foot's one port is its implied attach port.
  REQUIRE(p.grammarBody);
  const auto &g = p.grammarBody->grammar;
  REQUIRE(g.symbols.size() == 3);
  CHECK(g.start == 0);
  REQUIRE(g.parts.size() == 2);
  CHECK(g.parts[0].name == "seg");
  CHECK(g.parts[1].name == "foot");
  const auto &leg = g.symbols[2].alternatives.at(0);
  CHECK(leg.part == 1);
  CHECK(leg.attach == 0);
  CHECK(g.symbols[0].alternatives.at(0).attach == -1);
  const auto &trunk = g.symbols[1].alternatives.at(0);
  CHECK(trunk.attach == 0); // left
  REQUIRE(trunk.bindings.size() == 2);
  CHECK(trunk.bindings[0].ports == std::vector<int>{1});
  CHECK(trunk.bindings[0].symbol == 1);
  CHECK(trunk.bindings[0].optional);
  CHECK(!trunk.bindings[1].optional);
  CHECK(trunk.weight == Approx(0.5));
  CHECK(p.grammarBody->maxParts == 12);
  CHECK(p.grammarBody->scale == Approx(0.1));
  CHECK(p.grammarMutation.add.code.size() == 1);
  CHECK(body::evalScalar(p.grammarMutation.remove, nullptr) == Approx(0.2));
  CHECK(p.grammarMutation.swap.code.empty());
  CHECK(!p.grammarMutation.untilChanged);
}

TEST_CASE("a part's params become Scalar programs; stiffness resolves", "[sema]") {
  auto c = test::checkText(R"(part leg {
  param len = 1.5 in 0.5 .. 2;
  param w = 0.4 in 0.1 .. 1;
  points = [(0, 0), (w, 0), (0, -len), (w, sqrt(len * len) - 2 * len)];
  springs = [(0, 1), (2, 3, 1e4), (0, 2), (1, 3), (0, 3), (1, 2)];
  stiffness = 2e4;
  actuators = [2, 3, 4];
  groups = side(2, 3);
  ports = top(0, 1), bottom(3, 2), pin(0), tip(3);
  mirror = [1, 0, 3, 2];
  cells = [(0, 1, 3, 2)];
}
grammar G { start = R; limit L = 3; R -> leg(tip: L?); L -> leg<pin, angle = -10 .. 10>(tip: L?); }
body grammar B { grammar = G; max_parts = 5; stiffness = 5e3; actuation = 0.2; overlap = reject; actuator_p = 0.25; }
mutation { perturb p = 0.2; flip actuator p = 1 / actuators until changed; }
)");
  INFO(c->all());
  REQUIRE(c->program);
  const auto &p = *c->program;
  REQUIRE(p.partSpecs.size() == 1);
  const auto &leg = p.partSpecs[0];
  REQUIRE(leg.params.size() == 2);
  CHECK(leg.params[0].name == "len");
  CHECK(leg.params[0].init == Approx(1.5));
  CHECK(leg.params[0].lo == Approx(0.5));
  CHECK(leg.params[0].hi == Approx(2));
  // (0, -len): Const 0 | Param 0, Neg.
  REQUIRE(leg.points.size() == 4);
  CHECK(leg.points[0][0].isConstant());
  const auto &y2 = leg.points[2][1];
  REQUIRE(y2.code.size() == 2);
  CHECK(y2.code[0].op == body::Scalar::Op::Param);
  CHECK(y2.code[0].param == 0);
  CHECK(y2.code[1].op == body::Scalar::Op::Neg);
  double vars[2] = {1.8, 0.3};
  CHECK(body::evalScalar(leg.points[3][0], vars) == Approx(0.3));
  CHECK(body::evalScalar(leg.points[3][1], vars) == Approx(1.8 - 3.6));
  // Defaults drive sema::Part (the lattice path's plain coordinates).
  CHECK(p.parts[0].points[3][1] == Approx(-1.5));
  // Genes: group side = springs 2, 3; spring 4 alone; 0 and 1 passive.
  REQUIRE(leg.genes.size() == 2);
  CHECK(leg.genes[0].name == "side");
  CHECK(leg.genes[0].springs == std::vector<int>{2, 3});
  CHECK(leg.genes[1].name == "s4");
  CHECK(leg.springs[0].gene == -1);
  CHECK(leg.springs[3].gene == 0);
  CHECK(leg.springs[4].gene == 1);
  CHECK(leg.springs[1].stiffness == Approx(1e4)); // the spring's own
  CHECK(leg.springs[0].stiffness == Approx(2e4)); // the part's
  CHECK(leg.mirror == std::vector<int>{1, 0, 3, 2});
  CHECK(leg.cells == std::vector<std::vector<int>>{{0, 1, 3, 2}});
  REQUIRE(p.grammarBody);
  const auto &gb = *p.grammarBody;
  CHECK(gb.overlap == body::Overlap::Reject);
  CHECK(gb.actuatorP == Approx(0.25));
  CHECK(gb.grammar.symbols[1].limit == 3);
  CHECK(gb.grammar.parts[0].springs[0].stiffness == Approx(2e4));
  CHECK(gb.grammar.parts[0].springs[1].stiffness == Approx(1e4));
  CHECK(gb.grammar.parts[0].springs[2].actuation == Approx(0.2)); // the body's
  // Rates: 1 / actuators reads RateVar kActuators.
  const auto &flip = p.grammarMutation.flip;
  REQUIRE(flip.code.size() == 3);
  CHECK(flip.code[1].op == body::Scalar::Op::Param);
  CHECK(flip.code[1].param == body::kActuators);
  double counts[3] = {2, 10, 4};
  CHECK(body::evalScalar(flip, counts) == Approx(0.25));
  CHECK(p.grammarMutation.untilChanged);
}

TEST_CASE("a port that a param bends cannot be attached at", "[sema]") {
  // top(0, 1) is w wide: two nodes with different w would not fit.
  auto c = test::checkText(R"(part leg {
  param w = 0.4 in 0.1 .. 1;
  points = [(0, 0), (w, 0), (0, -1), (w, -1)];
  springs = [(0, 1), (2, 3), (0, 2), (1, 3), (0, 3)];
  ports = top(0, 1), bottom(3, 2), pin(0);
}
grammar G { start = R; R -> leg(bottom: L?); L -> leg<top>; }
)");
  CHECK_FALSE(c->program);
  const std::string all = c->all();
  CHECK(all.find("port 'bottom' of part 'leg' changes shape with param 'w'") != std::string::npos);
  CHECK(all.find("attach port 'top' of part 'leg' changes shape with param 'w'") !=
        std::string::npos);
}

TEST_CASE("tied pairs, optional bindings and limits give the right indices", "[sema]") {
  auto c = test::checkText(R"(part trunk {
  points = [(0, 0), (2, 0), (2, 1), (0, 1)];
  springs = [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2), (1, 3)];
  ports = hip_l(0), hip_r(1), right(1, 2), left(3, 0);
  mirror = [1, 0, 3, 2];
}
part seg {
  points = [(0, 0), (0, -1), (1, -1)];
  springs = [(0, 1), (1, 2), (2, 0)];
  ports = top(0), bottom(1);
}
grammar Walker {
  start = Body;
  limit Leg = 4;
  Body -> trunk([hip_l, hip_r]: Leg, right: Trunk?);
  Trunk -> trunk<left>(right: Trunk?, [hip_l, hip_r]: Leg?);
  Leg -> seg<top, angle = -30 .. 30>(bottom: Leg?) @ 2 | seg<angle = 0 .. 10>(bottom: _);
}
body grammar W { grammar = Walker; max_parts = 10; }
)");
  INFO(c->all());
  REQUIRE(c->program);
  const auto &g = c->program->grammarBody->grammar;
  REQUIRE(g.symbols.size() == 3);
  CHECK(g.symbols[0].name == "Body");
  CHECK(g.symbols[2].name == "Leg");
  CHECK(g.symbols[2].limit == 4);
  CHECK(g.symbols[0].limit == -1);
  const auto &body = g.symbols[0].alternatives.at(0);
  REQUIRE(body.bindings.size() == 2);
  CHECK(body.bindings[0].ports == std::vector<int>{0, 1}); // [hip_l, hip_r]
  CHECK(body.bindings[0].symbol == 2);
  CHECK(!body.bindings[0].optional);
  CHECK(body.bindings[1].ports == std::vector<int>{2});
  CHECK(body.bindings[1].optional);
  const auto &leg = g.symbols[2].alternatives;
  REQUIRE(leg.size() == 2);
  CHECK(leg[0].attach == 0);
  CHECK(leg[0].hasAngle);
  CHECK(leg[0].angleLo == Approx(-30));
  CHECK(leg[0].weight == Approx(2));
  CHECK(leg[1].attach == 0); // implied: the one port left unbound
  CHECK(leg[1].angleHi == Approx(10));
  CHECK(g.symbols[1].alternatives[0].attach == 3); // left
}

TEST_CASE("a 3D world with vec3 physics", "[sema]") {
  auto c = test::checkText(
      R"(world { dim = 3; ground = flat(friction = 0.5); physics = P3; }
physics P3 {
  set point { state x: vec3; state v: vec3; }
  set spring(a: point, b: point) { body rest: scalar; param k: scalar = 10; input act: scalar; }
  step {
    for p in point {
      p.v = p.v + world.dt * vec3(0, 0, world.gravity);
      p.x = p.x + world.dt * p.v * (1 + 0 * world.ground.friction);
    }
  }
}
controller c { inputs = point.x; hidden = 4 sin; outputs = spring.act linear; }
)",
      "/data/exp/walker3d.evo");
  INFO(c->all());
  REQUIRE(c->program);
  CHECK(c->program->world.dim == 3);
  CHECK(c->program->world.ground.kind == "flat");
  CHECK(c->program->world.ground.friction == Approx(0.5));
  // A vec2 in this world is an error.
  auto d = test::checkText("world { dim = 3; }\nfn f(a: vec2) -> scalar { return a.x; }\n");
  REQUIRE(d->lines().size() == 1);
  CHECK(d->lines()[0] == "t.evo:2:9: error: vec2 in a dim = 3 world; use vec3");
}

TEST_CASE("param and input fields cannot be assigned in a step", "[sema]") {
  auto c = test::checkText(R"(world { physics = P; }
physics P {
  set point { state x: vec2; param m: scalar = 1; input f: scalar; }
  step { for p in point { p.x = p.x * p.m * p.f; p.m = 2; p.f -= 1; } }
}
controller c { inputs = point.x; hidden = 4 tanh; outputs = point.f tanh; }
)");
  auto l = c->lines();
  REQUIRE(l.size() == 2);
  CHECK(l[0] == "t.evo:4:50: error: cannot assign param field 'point.m' in a step; only states "
                "change over time");
  CHECK(l[1] ==
        "t.evo:4:63: error: '-=' accumulates into temp fields; 'point.f' is an input field");
}

TEST_CASE("every fitness form normalises to a reduction of sign * loss", "[sema]") {
  // fitness = R'(sign * loss): an outer minus swaps max and min.
  struct Case {
    const char *text, *reduce;
    double sign;
  };
  for (const Case &k :
       {Case{"max(-loss)", "max", -1}, Case{"max(loss)", "max", 1}, Case{"min(loss)", "min", 1},
        Case{"-min(loss)", "max", -1}, Case{"-max(loss)", "min", -1}, Case{"-max(-loss)", "min", 1},
        Case{"mean(-loss)", "mean", -1}, Case{"-last(loss)", "last", -1},
        Case{"first(loss)", "first", 1}}) {
    sema::CheckOptions o;
    o.overrides = {{"evolve.fitness", k.text}};
    auto c = test::checkPath(kSrc + "/examples/eldir_small.evo", o);
    INFO(k.text << "\n" << c->all());
    REQUIRE(c->program);
    CHECK(fitnessName(c->program->evolve.fitness.kind) ==
          std::string(k.reduce) + (k.sign < 0 ? "(-loss)" : "(loss)"));
  }
}

TEST_CASE("the largest counts below their limits still check", "[sema]") {
  sema::CheckOptions o;
  o.overrides = {{"evolve.population", "100000"},
                 {"evolve.generations", "10000000"},
                 {"evolve.learn.iterations", "1000000"},
                 {"world.steps", "10"}};
  auto c = test::checkPath(kSrc + "/examples/eldir_small.evo", o);
  INFO(c->all());
  REQUIRE(c->program);
  CHECK(c->program->evolve.population == 100000);
  CHECK(c->program->evolve.generations == 10000000);
  // The bound itself passes the bound check (the memory estimate refuses it).
  o.overrides = {{"evolve.population", "1000000"}};
  auto d = test::checkPath(kSrc + "/examples/eldir_small.evo", o);
  CHECK(d->all().find("above the limit of 1000000") == std::string::npos);
  CHECK(d->all().find("would need about") != std::string::npos);
  // One above, and the bound refuses it.
  o.overrides = {{"evolve.population", "1000001"}};
  auto e = test::checkPath(kSrc + "/examples/eldir_small.evo", o);
  CHECK_FALSE(e->program);
  CHECK(e->all().find("above the limit of 1000000") != std::string::npos);
}

TEST_CASE("evolve.offspring: lambda children, bounded, and in the memory estimate", "[sema]") {
  sema::CheckOptions o;
  auto dflt = test::checkPath(kSrc + "/examples/eldir_small.evo", o);
  REQUIRE(dflt->program);
  CHECK(dflt->program->evolve.offspring == 0); // one per parent
  o.overrides = {{"evolve.offspring", "37"}};
  auto c = test::checkPath(kSrc + "/examples/eldir_small.evo", o);
  INFO(c->all());
  REQUIRE(c->program);
  CHECK(c->program->evolve.offspring == 37);
  o.overrides = {{"evolve.offspring", "1000001"}};
  auto big = test::checkPath(kSrc + "/examples/eldir_small.evo", o);
  CHECK_FALSE(big->program);
  CHECK(big->all().find("evolve.offspring = 1000001 is above the limit of 1000000") !=
        std::string::npos);
  // The robots trained together are lambda when it is the larger: the
  // estimate counts them and names the setting.
  o.overrides = {{"evolve.offspring", "1000000"}, {"world.steps", "100000"}};
  auto mem = test::checkPath(kSrc + "/examples/eldir_small.evo", o);
  CHECK_FALSE(mem->program);
  CHECK(mem->all().find("(1000000 robots x") != std::string::npos);
  CHECK(mem->all().find("lower evolve.offspring, world.steps") != std::string::npos);
}

TEST_CASE("the reference experiment fits the memory limit", "[sema]") {
  auto c = test::checkPath(kSrc + "/examples/eldir.evo");
  INFO(c->all());
  CHECK(c->program);
}

TEST_CASE("a fixed body: its CheckedProgram, the cell bound, and evoc run's refusal", "[sema]") {
  const std::string body = "import \"physics/mass_spring_fang.evo\";\n"
                           "import \"controllers/mlp.evo\";\n"
                           "import \"losses/displacement.evo\";\n"
                           "world { dim = 2; gravity = -1.8; dashpot = 0.2;\n"
                           "  ground = flat(height = 0.1, friction = 1.0); }\n"
                           "evolve { learn { iterations = 1; } }\n";
  auto c = test::checkText(body + "body cells B { edge = 0.1; cells = [(0, 0, diagonal), (1, 0, "
                                  "none)]; }\n");
  INFO(c->all());
  REQUIRE(c->program);
  const sema::CheckedProgram &p = *c->program;
  CHECK(p.world.dashpot == 0.2);
  CHECK(p.body.kind == BodyKind::Cells);
  REQUIRE(p.cellBody);
  CHECK(p.cellBody->edge == 0.1);
  CHECK(p.cellBody->stiffness == 3e4); // the defaults every body kind shares
  CHECK(p.cellBody->actuation == 0.1);
  CHECK(p.cellBody->origin == std::vector<double>{0, 0.1}); // corner (0, 0) on the ground
  REQUIRE(p.cellBody->cells.size() == 2);
  CHECK(p.cellBody->cells[0].i == 0);
  CHECK(p.cellBody->cells[0].actuated == body::CellTemplate::Diagonal);
  CHECK(p.cellBody->cells[1].i == 1);
  CHECK(p.cellBody->cells[1].actuated == body::CellTemplate::None);

  // `evoc run` refuses a fixed body where it is declared.
  sema::CheckOptions run;
  run.requireExperiment = run.evolveBody = true;
  auto r = test::checkText(body + "body cells B { cells = [(0, 0, all)]; }\n", "t.evo", run);
  CHECK_FALSE(r->program);
  CHECK(r->all().find("t.evo:7:12: error: body 'B' is a fixed body: it does not evolve") !=
        std::string::npos);
  CHECK(r->all().find("note: the evolve block is here") != std::string::npos);

  // 100000 cells are within the bound, one more is not.
  for (int n : {100000, 100001}) {
    std::string cells;
    for (int k = 0; k < n; ++k)
      cells +=
          (k ? ", (" : "(") + std::to_string(k % 400) + ", " + std::to_string(k / 400) + ", none)";
    auto big = test::checkText("world { dim = 2; }\nbody cells Big { cells = [" + cells + "]; }\n");
    INFO(n << " cells");
    CHECK(bool(big->program) == (n == 100000));
    CHECK((big->all().find("a cells body of 100001 cells is above the limit of 100000") !=
           std::string::npos) == (n == 100001));
  }
}

TEST_CASE("learn.episodes: fresh or continued, with a located error otherwise", "[sema]") {
  const std::string file = kSrc + "/examples/multitask_alpaca.evo";
  sema::CheckOptions o;
  o.overrides = {{"train.learn.episodes",
                  "continued(after = 5000, reset_every = 2, reset_every_max = 4, "
                  "grow_every = 500)"}};
  auto c = test::checkPath(file, o);
  INFO(c->all());
  REQUIRE(c->program);
  const sema::Episodes &ep = c->program->train.learn.episodes;
  CHECK(ep.continueAfter == 5000);
  CHECK(ep.resetEvery == 2);
  CHECK(ep.resetEveryMax == 4);
  CHECK(ep.growEvery == 500);
  CHECK(test::checkPath(file)->program->train.learn.episodes.continueAfter == -1);

  auto error = [&](const std::string &value) {
    sema::CheckOptions b;
    b.overrides = {{"train.learn.episodes", value}};
    auto d = test::checkPath(file, b);
    CHECK(!d->program);
    return d->lines().empty() ? std::string() : d->lines()[0];
  };
  CHECK(error("continued(reset_every = 2)").find("needs after = N") != std::string::npos);
  CHECK(error("continued(after = 10, reset_every = 3, reset_every_max = 2)")
            .find("reset_every_max must be at least reset_every") != std::string::npos);
  CHECK(error("continued(after = 10, reset_every_max = 4)").find("give grow_every") !=
        std::string::npos);
  CHECK(error("continued(after = 0)").find("'after' must lie in 1..") != std::string::npos);
  CHECK(error("continued(after = 3, resets = 2)").find("unknown argument 'resets'") !=
        std::string::npos);
  CHECK(error("restart()").find("must be fresh() or continued(") != std::string::npos);
}

TEST_CASE("vector commands: one width in every task and in the grid", "[sema]") {
  auto check = [](const std::string &tasks, const std::string &grid) {
    return test::checkText("import \"physics/mass_spring.evo\";\n"
                           "world { steps = 20; physics = mass_spring_noslip; }\n"
                           "commands {\n" +
                           tasks + "\n  validate { " + grid +
                           " }\n}\n"
                           "controller c { inputs = point.v, repeat(2, d); hidden = 4 tanh; "
                           "outputs = spring.act tanh; }\n"
                           "loss l = sum(t in 1..19: d[t - 1].y * mean(point.x[t].x));\n");
  };
  auto ok = check("a { p = 0.5; d = vec2(uniform(-1, 1), 0); }\n"
                  "b { p = 0.5; d = vec2(0, 1 + uniform(0, 1)); }",
                  "d = vec2(0, 1), vec2(1, 0);");
  INFO(ok->all());
  REQUIRE(ok->program);
  CHECK(ok->program->commands.comps == std::vector<int>{2});
  CHECK(ok->program->commands.gridCases() == 2);
  CHECK(ok->program->commands.tasks[1].values[1].base == 1);

  auto width = check("a { p = 0.5; d = vec2(uniform(-1, 1), 0); }\nb { p = 0.5; d = 0; }",
                     "d = vec2(0, 1);");
  REQUIRE(!width->lines().empty());
  CHECK(width->lines()[0].find("command 'd' is a vec2 in the first task, but a scalar here") !=
        std::string::npos);
  auto grid = check("a { p = 1; d = vec2(uniform(-1, 1), 0); }", "d = 0, 1;");
  REQUIRE(!grid->lines().empty());
  CHECK(grid->lines()[0].find("command 'd' is a vec2; write e.g. vec2(0, 0.1)") !=
        std::string::npos);
}

TEST_CASE("parts derive springs (within) and actuators (cell templates): a cube in three lines",
          "[sema][parts]") {
  const std::string corners = "points = [(0, 0, 0), (0, 0, 1), (1, 0, 0), (1, 0, 1), (0, 1, 0), "
                              "(0, 1, 1), (1, 1, 0), (1, 1, 1)];\n";
  auto c = test::checkText("world { dim = 3; }\n"
                           "part listed {\n" +
                           corners +
                           "  springs = [(0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (0, 6), (0, 7), "
                           "(1, 2), (1, 3), (1, 4), (1, 5), (1, 6), (1, 7), (2, 3), (2, 4), (2, "
                           "5), (2, 6), (2, 7), (3, 4), (3, 5), (3, 6), (3, 7), (4, 5), (4, 6), "
                           "(4, 7), (5, 6), (5, 7), (6, 7)];\n"
                           "  actuators = [0, 2, 4, 7, 9, 13, 17, 20, 22, 24, 25, 27];\n}\n"
                           "part derived {\n" +
                           corners +
                           "  springs = within(2);\n  actuators = leg;\n}\n"
                           "part edges {\n" +
                           corners +
                           "  springs = [(0, 7, 9e3)], within(1);\n  actuators = vertical;\n}\n");
  INFO(c->all());
  REQUIRE(c->program);
  const auto &ps = c->program->partSpecs;
  REQUIRE(ps.size() == 3);
  REQUIRE(ps[0].springs.size() == 28);
  REQUIRE(ps[1].springs.size() == 28);
  for (size_t i = 0; i < 28; ++i) {
    CHECK(ps[0].springs[i].a == ps[1].springs[i].a);
    CHECK(ps[0].springs[i].b == ps[1].springs[i].b);
    CHECK(ps[0].springs[i].gene == ps[1].springs[i].gene);
  }
  CHECK(ps[1].genes.size() == 12);
  // A listed spring first (with its own stiffness), then the 12 edges.
  REQUIRE(ps[2].springs.size() == 13);
  CHECK(ps[2].springs[0].stiffness == 9e3);
  int vertical = 0;
  for (const auto &s : ps[2].springs)
    vertical += s.gene >= 0;
  CHECK(vertical == 4);

  auto none = test::checkText("part p { points = [(0, 0), (2, 0)]; springs = within(1); }");
  REQUIRE(!none->lines().empty());
  CHECK(none->lines()[0].find("within(1) joins no points: the closest two are 2 apart") !=
        std::string::npos);
}

// `select = map_elites(...)`: an experiment whose loss reports two terms,
// with the select line last (line 14), so that errors can be located.
static std::unique_ptr<test::Checked> checkMapElites(const std::string &select,
                                                     const std::string &loss = "walk") {
  const std::string world = "world { physics = mass_spring_friction; }\n";
  return test::checkText("import \"physics/mass_spring.evo\";\n"
                         "import \"parts/triangle.evo\";\n"
                         "import \"controllers/mlp.evo\";\n" +
                         world +
                         "body lattice L { cell = triangle; rows = 2; cols = 3; }\n"
                         "loss walk {\n"
                         "  let forward = -mean(point.x[T].x - point.x[0].x);\n"
                         "  let up = -0.1 * mean(point.x[T].y);\n"
                         "  return forward + up;\n"
                         "}\n"
                         "loss plain = -mean(point.x[T].x);\n"
                         "evolve { population = 4; generations = 2;\n"
                         "  learn { loss = " +
                         loss +
                         "; iterations = 1; }\n"
                         "  select = " +
                         select + "; }\n");
}

// The headline of the first error, expected at line 14, column of `at` in
// the select line ("  select = ..." puts the value at column 12).
static std::string mapElitesError(const std::string &select, const std::string &at) {
  return fmt::format("t.evo:14:{}: error:", 12 + select.find(at));
}

TEST_CASE("select = map_elites: descriptors, ranges and bins", "[sema][map_elites]") {
  auto c = checkMapElites("map_elites(actuators(range = (0, 20), bins = 5), "
                          "term(up, range = (-0.1, 0), bins = 4), qd_offset = -1)");
  INFO(c->all());
  REQUIRE(c->program);
  const auto &s = c->program->evolve.select;
  CHECK(s.kind == sema::Select::Kind::MapElites);
  REQUIRE(s.descriptors.size() == 2);
  CHECK(s.descriptors[0].kind == DescriptorKind::Actuators);
  CHECK(s.descriptors[0].hi == 20);
  CHECK(s.descriptors[0].bins == 5);
  CHECK(s.descriptors[1].kind == DescriptorKind::Term);
  CHECK(s.descriptors[1].term == "up");
  CHECK(s.descriptors[1].lo == -0.1);
  CHECK(s.qdOffset == -1);
  auto one = checkMapElites("map_elites(width(range = (0, 1), bins = 3))");
  INFO(one->all());
  CHECK(one->program);
  // depth() in a 3D world (the stdlib's 3D walker, every body kind's path
  // through sema is the same: descriptors do not depend on it).
  sema::CheckOptions o;
  o.overrides = {{"evolve.select", "map_elites(depth(range = (0, 0.5), bins = 3), "
                                   "height(range = (0, 0.5), bins = 3))"}};
  auto three = test::checkPath(kSrc + "/examples/walker3d.evo", o);
  INFO(three->all());
  REQUIRE(three->program);
  CHECK(three->program->evolve.select.descriptors[0].kind == DescriptorKind::Depth);
}

TEST_CASE("select = map_elites: bad settings give located errors", "[sema][map_elites]") {
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {"map_elites()", "map_elites", "map_elites needs one or two descriptors"},
      {"map_elites(width(range = (0, 1), bins = 2), height(range = (0, 1), bins = 2), "
       "actuators(range = (0, 9), bins = 3))",
       "actuators", "at most two descriptors: a grid of more (CVT-MAP-Elites) is not supported"},
      {"map_elites(widht(range = (0, 1), bins = 2))", "widht",
       "unknown descriptor 'widht'; did you mean 'width'?"},
      {"map_elites(width(range = (1, 0), bins = 2))", "(1, 0)", "needs LO < HI"},
      {"map_elites(width(range = 1, bins = 2))", "1, bins", "range must be (LO, HI)"},
      {"map_elites(width(range = (0, 1), bins = 0))", "0))", "bins must lie in 1..10000"},
      {"map_elites(width(range = (0, 1)))", "width", "width needs bins = N"},
      {"map_elites(width(bins = 3))", "width", "width needs range = (LO, HI)"},
      {"map_elites(width(range = (0, 1), bins = 2, step = 3))", "step",
       "unknown argument 'step' of width"},
      {"map_elites(width(range = (0, 1), bins = 2), seed = 3)", "seed",
       "unknown argument 'seed' of map_elites"},
      {"map_elites(term(upp, range = (0, 1), bins = 2))", "upp",
       "the loss has no term 'upp'; did you mean 'up'?"},
      {"map_elites(depth(range = (0, 1), bins = 2))", "depth", "this world is 2D"},
      {"map_elites(width(range = (0, 1), bins = 2), width(range = (0, 2), bins = 2))",
       "width(range = (0, 2)", "the descriptor width is given twice"},
      {"map_elites(width(range = (0, 1), bins = 2000), height(range = (0, 1), bins = 2000))",
       "map_elites", "more than 1000000 cells"},
      {"map_elites(actuators(3, range = (0, 1), bins = 2))", "3,", "takes only range"},
      {"map_elites(5)", "5", "a descriptor is KIND(range = (LO, HI), bins = N)"},
  };
  for (const auto &[select, at, message] : cases) {
    auto c = checkMapElites(select);
    INFO(select << "\n" << c->all());
    CHECK_FALSE(c->program);
    REQUIRE(!c->lines().empty());
    CHECK(c->lines()[0].find(mapElitesError(select, at)) == 0);
    CHECK(c->lines()[0].find(message) != std::string::npos);
  }
  // A loss that reports no terms: the note points at the loss.
  const std::string select = "map_elites(term(up, range = (0, 1), bins = 2))";
  auto plain = checkMapElites(select, "plain");
  INFO(plain->all());
  REQUIRE(plain->lines().size() >= 2);
  CHECK(plain->lines()[0].find(mapElitesError(select, "up,")) == 0);
  CHECK(plain->lines()[0].find("the loss reports no terms") != std::string::npos);
  CHECK(plain->lines()[1].find("t.evo:11:6: note: the loss is declared here") == 0);
}
