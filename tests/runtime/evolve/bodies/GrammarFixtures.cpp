// The grammar body test fixtures, written as sema would hand them over.
#include "GrammarFixtures.h"

#include <cmath>
#include <map>

namespace evoc::test {

using body::AlternativeSpec;
using body::BindingSpec;
using body::PartSpec;
using body::Scalar;

namespace {

Scalar K(double v) { return Scalar::constant(v); }
/// The part parameter `i` plus `offset` (postfix: param, const, add).
Scalar P(int i, double offset = 0) {
  Scalar s;
  s.code.push_back({Scalar::Op::Param, 0, i});
  s.code.push_back({Scalar::Op::Const, offset, -1});
  s.code.push_back({Scalar::Op::Add, 0, -1});
  return s;
}
Scalar negP(int i) {
  Scalar s;
  s.code.push_back({Scalar::Op::Param, 0, i});
  s.code.push_back({Scalar::Op::Neg, 0, -1});
  return s;
}

PartSpec makePart(const std::string &name, std::vector<std::vector<Scalar>> pts,
                  const std::vector<std::pair<int, int>> &springs, double stiffness,
                  double actuation) {
  PartSpec p;
  p.name = name;
  p.points = std::move(pts);
  for (auto [a, b] : springs)
    p.springs.push_back({a, b, stiffness, actuation, -1});
  return p;
}
/// One actuation gene per listed spring.
void actuateEach(PartSpec &p, const std::vector<int> &springs) {
  for (int s : springs) {
    p.springs[s].gene = int(p.genes.size());
    p.genes.push_back({"s" + std::to_string(s), {s}});
  }
}
void group(PartSpec &p, const std::string &name, const std::vector<int> &springs) {
  for (int s : springs)
    p.springs[s].gene = int(p.genes.size());
  p.genes.push_back({name, springs});
}
BindingSpec bind(int port, int symbol, bool optional) { return {{port}, symbol, optional}; }
AlternativeSpec alt(int part, int attach, std::vector<BindingSpec> b, double w = 1) {
  AlternativeSpec a;
  a.part = part, a.attach = attach, a.bindings = std::move(b), a.weight = w;
  return a;
}
/// The body spec of `grammar` over `parts`, started at symbol 0, with its
/// size limits.
struct Limits {
  double scale, groundY;
  int maxParts, maxPoints, maxSprings, maxDepth;
};
body::GrammarBodySpec bodySpec(const char *name, const char *grammar, std::vector<PartSpec> parts,
                               Limits l) {
  body::GrammarBodySpec s;
  s.name = name;
  s.grammar.name = grammar;
  s.grammar.parts = std::move(parts);
  s.grammar.start = 0;
  s.scale = l.scale, s.groundY = l.groundY;
  s.maxParts = l.maxParts, s.maxPoints = l.maxPoints;
  s.maxSprings = l.maxSprings, s.maxDepth = l.maxDepth;
  return s;
}

} // namespace

body::GrammarBodySpec triangleGrammar() {
  double h = std::sqrt(3.0) / 2;
  PartSpec t = makePart("tri", {{K(0), K(0)}, {K(1), K(0)}, {K(0.5), K(h)}},
                        {{0, 1}, {1, 2}, {2, 0}}, 3e4, 0.1);
  actuateEach(t, {0, 1, 2});
  t.ports = {{"e0", {0, 1}}, {"e1", {1, 2}}, {"e2", {2, 0}}};
  body::GrammarBodySpec s = bodySpec("Lattice", "Triangles", {t}, {0.05, 0.1, 24, 40, 90, 8});
  // 0: Body -> tri(e0: Cell?, e1: Cell?, e2: Cell?); 1: Cell -> tri<e0>(e1: Cell?, e2: Cell?)
  s.grammar.symbols = {
      {"Body", {alt(0, -1, {bind(0, 1, true), bind(1, 1, true), bind(2, 1, true)})}, -1},
      {"Cell", {alt(0, 0, {bind(1, 1, true), bind(2, 1, true)})}, -1}};
  return s;
}

body::GrammarBodySpec voxelGrammar() {
  std::vector<std::vector<Scalar>> sq = {{K(0), K(0)}, {K(1), K(0)}, {K(1), K(1)}, {K(0), K(1)}};
  std::vector<std::pair<int, int>> sp = {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {0, 2}, {1, 3}};
  std::vector<body::PortSpec> ports = {
      {"bottom", {0, 1}}, {"right", {1, 2}}, {"top", {2, 3}}, {"left", {3, 0}}};
  PartSpec rigid = makePart("rigid", sq, sp, 6e4, 0.1);
  PartSpec soft = makePart("soft", sq, sp, 1e4, 0.1);
  PartSpec hact = makePart("h_act", sq, sp, 3e4, 0.1);
  group(hact, "h", {0, 2});
  PartSpec vact = makePart("v_act", sq, sp, 3e4, 0.1);
  group(vact, "v", {1, 3});
  for (auto *p : {&rigid, &soft, &hact, &vact})
    p->ports = ports;
  body::GrammarBodySpec s =
      bodySpec("Voxels", "Voxel", {rigid, soft, hact, vact}, {0.1, 0, 25, 60, 160, 6});
  std::vector<AlternativeSpec> root, cell;
  for (int p = 0; p < 4; ++p) {
    root.push_back(alt(
        p, -1, {bind(0, 1, true), bind(1, 1, true), bind(2, 1, true), bind(3, 1, true)}, p + 1));
    // attach by the left side; grow right, up and down
    cell.push_back(alt(p, 3, {bind(1, 1, true), bind(2, 1, true), bind(0, 1, true)}, p + 1));
  }
  s.grammar.symbols = {{"Body", root, -1}, {"Voxel", cell, -1}};
  return s;
}

body::GrammarBodySpec walkerGrammar() {
  // Trunk: bottom edge 0-4-5-1 (hips), CCW 0,4,5,1,2,3; mirror about x = 1.
  PartSpec trunk = makePart(
      "trunk",
      {{K(0), K(0)}, {K(2), K(0)}, {K(2), K(1)}, {K(0), K(1)}, {K(0.5), K(0)}, {K(1.5), K(0)}},
      {{0, 4}, {4, 5}, {5, 1}, {1, 2}, {2, 3}, {3, 0}, {0, 2}, {1, 3}, {3, 4}, {2, 5}}, 3e4, 0.1);
  group(trunk, "core", {6, 7});
  trunk.ports = {{"left", {3, 0}}, {"right", {1, 2}}, {"hip_l", {0, 4}}, {"hip_r", {5, 1}}};
  trunk.mirror = {1, 0, 3, 2, 5, 4};
  // Leg segment hanging from its top edge; len in 0.5 .. 2.
  PartSpec seg =
      makePart("segment", {{K(0), K(0)}, {K(0.5), K(0)}, {K(0.5), negP(0)}, {K(0), negP(0)}},
               {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {0, 2}, {1, 3}}, 3e4, 0.1);
  seg.params = {{"len", 1, 0.5, 2}};
  actuateEach(seg, {0, 1, 2, 3, 4, 5});
  seg.ports = {{"top", {1, 0}}, {"bottom", {3, 2}}, {"tip", {2}}};
  seg.mirror = {1, 0, 3, 2};
  PartSpec foot = makePart("foot", {{K(0), K(0)}, {K(0.4), K(-0.3)}, {K(-0.1), K(-0.3)}},
                           {{0, 1}, {1, 2}, {2, 0}}, 3e4, 0.1);
  actuateEach(foot, {1});
  foot.ports = {{"ankle", {0}}};
  body::GrammarBodySpec s =
      bodySpec("Walker2D", "Walker", {trunk, seg, foot}, {0.05, 0.1, 16, 80, 300, 6});
  BindingSpec legs{{2, 3}, 2, true};
  AlternativeSpec footAlt = alt(2, 0, {});
  footAlt.hasAngle = true, footAlt.angleLo = -30, footAlt.angleHi = 30;
  // 0 Body, 1 Trunk, 2 Leg, 3 Foot
  s.grammar.symbols = {{"Body", {alt(0, -1, {bind(1, 1, true), legs})}, -1},
                       {"Trunk", {alt(0, 0, {bind(1, 1, true), legs}, 2), alt(0, 0, {})}, -1},
                       {"Leg", {alt(1, 0, {bind(1, 2, true), bind(2, 3, true)})}, 6},
                       {"Foot", {footAlt}, -1}};
  return s;
}

body::GrammarBodySpec limbGrammar() {
  PartSpec block =
      makePart("block", {{K(0), K(0)}, {K(0.4), K(0)}, {K(0.4), K(0.4)}, {K(0), K(0.4)}},
               {{0, 1}, {1, 2}, {2, 3}, {3, 0}, {0, 2}, {1, 3}}, 3e4, 0.1);
  block.ports = {{"arm", {1, 2}}};
  // Segment along +x of length len, CCW 0,1,2,5,4,3; side port on the top edge.
  PartSpec seg = makePart(
      "limb",
      {{K(0), K(0)},
       {P(0), K(0)},
       {P(0), K(0.4)},
       {K(0), K(0.4)},
       {K(0.3), K(0.4)},
       {K(0.7), K(0.4)}},
      {{0, 1}, {1, 2}, {2, 5}, {5, 4}, {4, 3}, {3, 0}, {0, 2}, {1, 3}, {0, 4}, {1, 5}}, 3e4, 0.1);
  seg.params = {{"len", 1, 0.8, 1.6}};
  group(seg, "flex", {6, 7});
  actuateEach(seg, {0});
  seg.ports = {{"base", {3, 0}}, {"end", {1, 2}}, {"side", {5, 4}}};
  PartSpec tip = makePart("tip", {{K(0), K(0)}, {K(0.3), K(0.2)}, {K(0), K(0.4)}},
                          {{0, 1}, {1, 2}, {2, 0}}, 3e4, 0.1);
  tip.ports = {{"base", {2, 0}}};
  body::GrammarBodySpec s = bodySpec("Sims", "Limb", {block, seg, tip}, {0.05, 0, 8, 60, 120, 7});
  s.grammar.symbols = {
      {"Body", {alt(0, -1, {bind(0, 1, false)})}, -1},
      {"Limb", {alt(1, 0, {bind(1, 1, true), bind(2, 1, true)}, 3), alt(2, 0, {})}, 6}};
  s.overlap = body::Overlap::Prune;
  return s;
}

std::vector<std::pair<std::string, body::GrammarBodySpec>> allGrammars() {
  return {{"triangle", triangleGrammar()},
          {"voxel", voxelGrammar()},
          {"walker", walkerGrammar()},
          {"limb", limbGrammar()}};
}

namespace {
/// 1 / actuators (RateVar kActuators), as `flip actuator p = 1 / actuators`.
Scalar perActuator() {
  Scalar s;
  s.code = {{Scalar::Op::Const, 1, -1},
            {Scalar::Op::Param, 0, body::kActuators},
            {Scalar::Op::Div, 0, -1}};
  return s;
}
} // namespace

body::GrammarMutationSpec mixedMutation() {
  body::GrammarMutationSpec m;
  m.add = K(0.3), m.remove = K(0.2), m.swap = K(0.1), m.rearrange = K(0.1), m.combine = K(0.1);
  m.perturb = K(0.2);
  m.flip = perActuator();
  m.untilChanged = true;
  m.maxAttempts = 20;
  return m;
}

body::GrammarMutationSpec onlyMutation(const std::string &op) {
  body::GrammarMutationSpec m;
  m.untilChanged = true;
  m.maxAttempts = 10;
  using Spec = body::GrammarMutationSpec;
  const std::map<std::string, Scalar Spec::*> structural = {{"add", &Spec::add},
                                                            {"remove", &Spec::remove},
                                                            {"swap", &Spec::swap},
                                                            {"rearrange", &Spec::rearrange},
                                                            {"combine", &Spec::combine}};
  if (auto it = structural.find(op); it != structural.end())
    m.*(it->second) = K(1);
  else if (op == "perturb")
    m.perturb = K(0.2);
  else if (op == "flip")
    m.flip = perActuator();
  return m;
}

} // namespace evoc::test
