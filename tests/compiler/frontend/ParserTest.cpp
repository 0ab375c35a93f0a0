// Parser tests: every construct parses into the expected AST, with ranges.
#include "FrontendTestUtil.h"

#include "frontend/AstDump.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

using namespace evoc;
using namespace evoc::ast;

static std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_CASE("stdlib and examples parse without errors", "[parser]") {
  for (const char *f :
       {"stdlib/physics/mass_spring.evo", "stdlib/parts/triangle.evo", "stdlib/controllers/mlp.evo",
        "stdlib/losses/displacement.evo", "examples/eldir.evo", "examples/eldir_small.evo"}) {
    auto p = test::parse(readFile(std::string(EVOC_SOURCE_DIR) + "/" + f), f);
    INFO(f);
    CHECK(p->lines().empty());
    REQUIRE(p->module);
    CHECK(!p->module->decls.empty());
  }
}

TEST_CASE("physics: sets, endpoints, fields, loops, assignments", "[parser]") {
  auto p = test::parse(R"(physics P {
  set point { state x: vec2; temp dv: vec2; }
  set spring(a: point, b: point) { body rest: scalar; param k: scalar = 2; input act: scalar; }
  step {
    for s in spring { s.a.dv -= s.a.x - s.b.x; s.b.dv += vec2(0, 1); }
    for q in point { q.x = q.x + q.dv; }
  }
})");
  REQUIRE(p->lines().empty());
  auto *ph = dynCast<PhysicsDecl>(p->module->decls.at(0).get());
  REQUIRE(ph);
  CHECK(ph->name.name == "P");
  REQUIRE(ph->sets.size() == 2);
  const SetDecl &spring = *ph->sets[1];
  CHECK(spring.index == 1);
  REQUIRE(spring.endpoints.size() == 2);
  CHECK(spring.endpoints[1].setName.name == "point");
  REQUIRE(spring.fields.size() == 3);
  CHECK(spring.fields[1]->kind == FieldKind::Param);
  REQUIRE(spring.fields[1]->init);
  CHECK(spring.fields[2]->kind == FieldKind::Input);
  CHECK(spring.fields[0]->owner == &spring);
  REQUIRE(ph->step.size() == 2);
  auto *loop = dynCast<ForStmt>(ph->step[0].get());
  REQUIRE(loop);
  CHECK(loop->var.name == "s");
  CHECK(loop->setName.name == "spring");
  auto *as = dynCast<AssignStmt>(loop->body[0].get());
  REQUIRE(as);
  CHECK(as->op == AssignOp::SubFrom);
  auto *target = dynCast<MemberExpr>(as->target.get());
  REQUIRE(target);
  CHECK(target->member.name == "dv");
  // Ranges: `s.a.dv` starts on line 5, column 23.
  CHECK(as->target->range.begin.line == 5);
  CHECK(as->target->range.begin.col == 23);
  CHECK(as->target->range.end.col == 29);
}

TEST_CASE("expressions: precedence, unary, if, windows, calls", "[parser]") {
  auto p = test::parse("loss l = -mean(point.x[T].x) + 2 * sum(t in 0..T - 1: mean(point.x[t].y)) "
                       "* (if a < b && !c then 1 else 2);");
  REQUIRE(p->lines().empty());
  auto *l = dynCast<LossDecl>(p->module->decls.at(0).get());
  REQUIRE(l);
  auto *add = dynCast<BinaryExpr>(l->value.get());
  REQUIRE(add);
  CHECK(add->op == BinaryOp::Add);
  auto *neg = dynCast<UnaryExpr>(add->lhs.get());
  REQUIRE(neg);
  CHECK(neg->op == UnaryOp::Neg);
  auto *mul = dynCast<BinaryExpr>(add->rhs.get());
  REQUIRE(mul);
  CHECK(mul->op == BinaryOp::Mul);
  auto *mul2 = dynCast<BinaryExpr>(mul->lhs.get());
  REQUIRE(mul2);
  auto *win = dynCast<WindowExpr>(mul2->rhs.get());
  REQUIRE(win);
  CHECK(win->op == ReduceOp::Sum);
  CHECK(win->var.name == "t");
  CHECK(isa<BinaryExpr>(win->hi.get()));
  CHECK(isa<IfExpr>(mul->rhs.get()));
  // Negative literals fold.
  auto p2 = test::parse("world { gravity = -4.8; }");
  auto *w = dynCast<WorldDecl>(p2->module->decls.at(0).get());
  REQUIRE(w);
  auto *num = dynCast<NumberExpr>(w->body.settings.at(0).values.at(0).get());
  REQUIRE(num);
  CHECK(num->value == Approx(-4.8));
}

TEST_CASE("controller, body, grammar, mutation, evolve", "[parser]") {
  auto p = test::parse(R"(controller c {
  let com = mean(point.x);
  inputs = sin_waves(10, omega = 10), 0.05 * (point.x - com), 1;
  hidden = 32 tanh, 16 relu;
  outputs = spring.act tanh;
  init = xavier_normal(w1 = 2, w2 = 3);
}
part seg { points = [(0, 0), (1, 0)]; springs = [(0, 1)]; ports = left(0), right(1); }
grammar G { start = B; B -> seg(left: B, right: _) @ 2 | seg; }
body grammar W { grammar = G; max_parts = 8; }
body lattice L { cell = seg; rows = 2; cols = 3; repair = fill_holes; }
mutation { flip cell p = 1 / cells until changed; add p = 0.3; }
evolve { population = 4; learn { iterations = 3; optimizer = adam(lr = 0.01); } }
)");
  REQUIRE(p->lines().empty());
  auto &d = p->module->decls;
  REQUIRE(d.size() == 7);
  auto *c = dynCast<ControllerDecl>(d[0].get());
  REQUIRE(c);
  CHECK(c->lets.size() == 1);
  CHECK(c->inputs.size() == 3);
  REQUIRE(c->hidden.size() == 2);
  CHECK(c->hidden[1].activation.name == "relu");
  REQUIRE(c->outputs.size() == 1);
  CHECK(c->outputs[0].activation.name == "tanh");
  CHECK(c->init);
  auto *g = dynCast<GrammarDecl>(d[2].get());
  REQUIRE(g);
  REQUIRE(g->productions.size() == 1);
  REQUIRE(g->productions[0].alternatives.size() == 2);
  CHECK(g->productions[0].alternatives[0].ports.size() == 2);
  CHECK(g->productions[0].alternatives[0].weight);
  auto *bg = dynCast<BodyDecl>(d[3].get());
  REQUIRE(bg);
  CHECK(bg->bodyKind == BodyKind::Grammar);
  auto *bl = dynCast<BodyDecl>(d[4].get());
  REQUIRE(bl);
  CHECK(bl->bodyKind == BodyKind::Lattice);
  auto *m = dynCast<MutationDecl>(d[5].get());
  REQUIRE(m);
  REQUIRE(m->rules.size() == 2);
  CHECK(m->rules[0].op.name == "flip");
  CHECK(m->rules[0].target.name == "cell");
  CHECK(m->rules[0].untilChanged);
  CHECK(m->rules[1].target.name.empty());
  auto *e = dynCast<EvolveDecl>(d[6].get());
  REQUIRE(e);
  REQUIRE(e->body.findBlock("learn"));
  CHECK(e->body.findBlock("learn")->find("optimizer"));
}

TEST_CASE("syntax errors are reported with locations and no AST", "[parser]") {
  auto p = test::parse("world {\n  dim = 2\n  dt = 0.1;\n}\n");
  CHECK(!p->module);
  REQUIRE(p->lines().size() == 1);
  CHECK(p->lines()[0] == "t.evo:2:10: error: expected ';' after '2'");

  auto q = test::parse("fn f(x: scalar) -> scalar { return (x + 1; }");
  REQUIRE(q->lines().size() == 2);
  CHECK(q->lines()[0] == "t.evo:1:42: error: expected ')' before ';'");
  CHECK(q->lines()[1] == "t.evo:1:36: note: to match this '('");
}

TEST_CASE("hostile input: bad UTF-8, NUL, deep nesting", "[parser]") {
  auto a = test::parse(std::string("world { dim = 2; }\n\xff\xfe"));
  REQUIRE(a->lines().size() == 1);
  CHECK(a->lines()[0] == "t.evo:2:1: error: source file is not valid UTF-8");
  // Overlong encodings and surrogates (found by libFuzzer: ANTLR's decoder
  // threw on them).
  for (const char *bad : {"\xc0\xa3", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80"}) {
    auto o = test::parse(std::string("let x = 1; // ") + bad + "\n");
    REQUIRE(o->lines().size() == 1);
    CHECK(o->lines()[0] == "t.evo:1:15: error: source file is not valid UTF-8");
  }
  auto ok = test::parse("// caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\xa4\x96\nworld { dim = 2; }\n");
  CHECK(ok->lines().empty());
  auto b = test::parse(std::string("world {\0}", 9));
  REQUIRE(b->lines().size() == 1);
  CHECK(b->lines()[0] == "t.evo:1:8: error: unexpected NUL byte in source file");
  std::string deep = "loss l = " + std::string(5000, '(') + "1" + std::string(5000, ')') + ";";
  auto c = test::parse(deep);
  REQUIRE(c->lines().size() == 1);
  CHECK(c->lines()[0].find("nesting deeper than") != std::string::npos);
  std::string chain = "loss l = 1";
  for (int i = 0; i < 3000; ++i)
    chain += " + 1";
  auto d = test::parse(chain + ";");
  REQUIRE(d->lines().size() == 1);
  CHECK(d->lines()[0].find("nested too deeply") != std::string::npos);
  auto e = test::parse("loss l = " + std::string(3000, '-') + "1;");
  REQUIRE(e->lines().size() == 1);
  CHECK(e->lines()[0].find("nesting deeper than") != std::string::npos);
}

TEST_CASE("the AST dump shows nodes with ranges", "[parser]") {
  auto p = test::parse("fn f(x: scalar) -> scalar {\n  return x * 2;\n}\n");
  REQUIRE(p->module);
  Program prog;
  prog.modules.push_back(std::move(p->module));
  std::ostringstream out;
  dumpProgram(prog, out);
  std::string s = out.str();
  CHECK(s.find("Fn f -> scalar <1:1-3:2>") != std::string::npos);
  CHECK(s.find("    Param x: scalar <1:6-1:15>") != std::string::npos);
  CHECK(s.find("      Binary * <2:10-2:15>") != std::string::npos);
}

TEST_CASE("parts: params, spring triples, actuators, groups, mirror, cells", "[parser]") {
  auto p = test::parse(R"(part leg {
  param len = 1 in 0.5 .. 2;
  param w = 0.5 in 0.1 .. 1;
  points = [(0, 0), (w, 0), (0, len), (w, len)];
  springs = [(0, 1), (2, 3, 1e4)];
  actuators = [0, 1];
  groups = side(0, 1);
  ports = top(2, 3), bottom(1, 0);
  mirror = [1, 0, 3, 2];
  cells = [(0, 1, 3, 2)];
}
)");
  INFO((p->lines().empty() ? std::string() : p->lines()[0]));
  REQUIRE(p->lines().empty());
  auto *d = dynCast<PartDecl>(p->module->decls.at(0).get());
  REQUIRE(d);
  REQUIRE(d->params.size() == 2);
  CHECK(d->params[0].name.name == "len");
  CHECK(d->params[0].range.begin.line == 2);
  CHECK(dynCast<NumberExpr>(d->params[0].lo.get())->value == Approx(0.5));
  CHECK(dynCast<NumberExpr>(d->params[1].hi.get())->value == Approx(1));
  CHECK(d->body.settings.size() == 7);
  CHECK(d->body.find("mirror"));
  // `param` stays a plain name outside the param form; the wrong word is an error.
  auto bad = test::parse("part q { parm x = 1 in 0 .. 2; points = [(0, 0)]; }");
  REQUIRE(bad->lines().size() == 1);
  CHECK(bad->lines()[0] ==
        "t.evo:1:10: error: expected 'param' here ('param NAME = DEFAULT in LO .. HI;'), found "
        "'parm'");
}

TEST_CASE("grammars: attach ports, angles, optional and tied bindings, limits", "[parser]") {
  auto p = test::parse(R"(grammar Walker {
  start = Body;
  limit Leg = 4;
  Body -> trunk(right: Trunk?, [hip_l, hip_r]: Leg?, up: _);
  Trunk -> trunk<left>(right: Trunk?) @ 2 | trunk<left>;
  Leg -> seg<top>(bottom: Leg) | foot<top, angle = -30 .. 30> | foot<angle = 0 .. 45.5>;
}
)");
  INFO((p->lines().empty() ? std::string() : p->lines()[0]));
  REQUIRE(p->lines().empty());
  auto *g = dynCast<GrammarDecl>(p->module->decls.at(0).get());
  REQUIRE(g);
  REQUIRE(g->limits.size() == 1);
  CHECK(g->limits[0].symbol.name == "Leg");
  CHECK(g->body.settings.size() == 1); // `limit` is not a setting
  REQUIRE(g->productions.size() == 3);
  const auto &body = g->productions[0].alternatives.at(0);
  CHECK(body.attach.name.empty());
  REQUIRE(body.ports.size() == 3);
  CHECK(body.ports[0].port.name == "right");
  CHECK(body.ports[0].optional);
  CHECK(!body.ports[0].tied);
  CHECK(body.ports[1].tied);
  CHECK(body.ports[1].port.name == "hip_l");
  CHECK(body.ports[1].port2.name == "hip_r");
  CHECK(body.ports[1].symbol.name == "Leg");
  CHECK(body.ports[1].optional);
  CHECK(body.ports[2].symbol.name == "_");
  CHECK(!body.ports[2].optional);
  const auto &trunk = g->productions[1].alternatives;
  REQUIRE(trunk.size() == 2);
  CHECK(trunk[0].attach.name == "left");
  CHECK(trunk[0].weight);
  CHECK(trunk[1].attach.name == "left");
  CHECK(!trunk[1].hasAngle);
  const auto &leg = g->productions[2].alternatives;
  REQUIRE(leg.size() == 3);
  CHECK(!leg[0].ports[0].optional);
  CHECK(leg[1].attach.name == "top");
  CHECK(leg[1].hasAngle);
  CHECK(leg[1].angleLo == Approx(-30));
  CHECK(leg[1].angleHi == Approx(30));
  CHECK(leg[2].attach.name.empty());
  CHECK(leg[2].hasAngle);
  CHECK(leg[2].angleHi == Approx(45.5));
  // `limit` is a contextual word: still usable as a name elsewhere.
  auto n = test::parse("fn limit(x: scalar) -> scalar { return x; }\n"
                       "grammar G { start = A; limt A = 2; A -> p; }");
  REQUIRE(n->lines().size() == 1);
  CHECK(n->lines()[0] == "t.evo:2:24: error: expected 'limit', 'depth' or 'scale' here ('limit "
                         "SYMBOL = N;', 'depth SYMBOL = N;', 'scale SYMBOL = F;'), found 'limt'");
}

TEST_CASE("grammar-body mutation rules and the AST dump of grammars", "[parser]") {
  auto p = test::parse(R"(grammar G {
  limit B = 3;
  B -> seg<left>([a, b]: B?) @ 2 | foot<top, angle = -10 .. 10>;
}
mutation {
  add p = 0.3; swap p = 0.1; perturb p = 0.2;
  flip actuator p = 1 / actuators until changed;
}
)");
  REQUIRE(p->lines().empty());
  auto *m = dynCast<MutationDecl>(p->module->decls.at(1).get());
  REQUIRE(m);
  REQUIRE(m->rules.size() == 4);
  CHECK(m->rules[1].op.name == "swap");
  CHECK(m->rules[3].target.name == "actuator");
  CHECK(m->rules[3].untilChanged);
  Program prog;
  prog.modules.push_back(std::move(p->module));
  std::ostringstream out;
  dumpProgram(prog, out);
  std::string s = out.str();
  CHECK(s.find("    Limit limit B <2:3-2:15>") != std::string::npos);
  CHECK(s.find("Alternative seg<left> [a,b]:B? <3:8-3:33>") != std::string::npos);
  CHECK(s.find("Alternative foot<top, angle -10..10> <3:36-3:64>") != std::string::npos);
}
