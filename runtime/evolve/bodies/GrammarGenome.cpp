// The grammar genome: derivation-tree copies, structural costs, the
// grammaticality check, JSON in and out, the model's construction (cheapest
// completions) and its fingerprint.
#include "evolve/bodies/GrammarInternal.h"

#include "support/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace evoc::evolve {

using namespace grammar;
using nlohmann::json;

GrammarNode::GrammarNode(const GrammarNode &o)
    : id(o.id), symbol(o.symbol), alt(o.alt), params(o.params), genes(o.genes), turn(o.turn),
      angle(o.angle) {
  children.reserve(o.children.size());
  for (const auto &c : o.children)
    children.push_back(c ? std::make_unique<GrammarNode>(*c) : nullptr);
}

GrammarNode &GrammarNode::operator=(const GrammarNode &o) {
  if (this != &o) {
    GrammarNode tmp(o);
    *this = std::move(tmp);
  }
  return *this;
}

namespace grammar {

GrammarCost ownCost(const body::GrammarBodySpec &s, const GrammarNode &n) {
  const auto &a = altOf(s, n);
  const auto &p = s.grammar.parts[a.part];
  GrammarCost c;
  c.perSymbol.assign(s.grammar.symbols.size(), 0);
  c.parts = 1;
  c.points = int(p.points.size()) - (a.attach >= 0 ? int(p.ports[a.attach].points.size()) : 0);
  c.springs = int(p.springs.size());
  c.perSymbol[n.symbol] = 1;
  return c;
}

void addCost(GrammarCost &a, const GrammarCost &b, int mult) {
  a.parts += b.parts * mult;
  a.points += b.points * mult;
  a.springs += b.springs * mult;
  if (a.perSymbol.size() < b.perSymbol.size())
    a.perSymbol.resize(b.perSymbol.size(), 0);
  for (size_t i = 0; i < b.perSymbol.size(); ++i)
    a.perSymbol[i] += b.perSymbol[i] * mult;
}

bool fits(const GrammarCost &c, const GrammarCost &budget) {
  if (c.parts > budget.parts || c.points > budget.points || c.springs > budget.springs)
    return false;
  for (size_t i = 0; i < c.perSymbol.size() && i < budget.perSymbol.size(); ++i)
    if (c.perSymbol[i] > budget.perSymbol[i])
      return false;
  return true;
}

GrammarCost divided(const GrammarCost &c, int d) {
  GrammarCost r = c;
  r.parts /= d, r.points /= d, r.springs /= d;
  for (int &x : r.perSymbol)
    x /= d;
  return r;
}

GrammarCost subtreeCost(const body::GrammarBodySpec &s, const GrammarNode &n) {
  GrammarCost c = ownCost(s, n);
  const auto &a = altOf(s, n);
  for (size_t b = 0; b < n.children.size(); ++b)
    if (n.children[b])
      addCost(c, subtreeCost(s, *n.children[b]), int(a.bindings[b].ports.size()));
  return c;
}

std::vector<double> localPoints(const body::GrammarBodySpec &s, const GrammarNode &n,
                                double levelScale) {
  const auto &p = partOf(s, n);
  const double scale = s.scale * levelScale;
  std::vector<double> out;
  out.reserve(p.points.size() * s.dim);
  for (const auto &pt : p.points)
    for (int c = 0; c < s.dim; ++c)
      out.push_back(c < int(pt.size()) ? evalScalar(pt[c], n.params.data()) * scale : 0.0);
  return out;
}

void countGenes(const GrammarNode &n, int &total, int &on) {
  total += int(n.genes.size());
  for (auto b : n.genes)
    on += b != 0;
  for (const auto &c : n.children)
    if (c)
      countGenes(*c, total, on);
}

void ensureActuated(GrammarNode &root, EvoRng &rng) {
  int total = 0, on = 0;
  countGenes(root, total, on);
  if (total == 0 || on > 0)
    return;
  int pick = int(rng.below(uint64_t(total)));
  std::vector<GrammarNode *> stack{&root};
  while (!stack.empty()) {
    GrammarNode *n = stack.back();
    stack.pop_back();
    if (pick < int(n->genes.size())) {
      n->genes[pick] = 1;
      return;
    }
    pick -= int(n->genes.size());
    for (auto it = n->children.rbegin(); it != n->children.rend(); ++it)
      if (*it)
        stack.push_back(it->get());
  }
}

} // namespace grammar

GrammarCost GrammarBody::cost(const GrammarGenome &g) const { return subtreeCost(spec_, g.root); }

GrammarCost GrammarBody::remaining(const GrammarCost &used) const {
  auto lim = [](int limit, int u) { return limit > 0 ? limit - u : kUnlimited; };
  GrammarCost r;
  r.parts = lim(spec_.maxParts, used.parts);
  r.points = lim(spec_.maxPoints, used.points);
  r.springs = lim(spec_.maxSprings, used.springs);
  size_t ns = spec_.grammar.symbols.size();
  r.perSymbol.assign(ns, kUnlimited);
  for (size_t i = 0; i < ns; ++i)
    r.perSymbol[i] =
        lim(spec_.grammar.symbols[i].limit, i < used.perSymbol.size() ? used.perSymbol[i] : 0);
  return r;
}

namespace {

/// Checks one node and its subtree; returns the first problem, naming the node.
std::string checkNode(const body::GrammarBodySpec &s, const GrammarNode &n, int depth,
                      uint64_t nextId, std::set<uint64_t> &ids, std::vector<int> &onPath) {
  const auto &gs = s.grammar;
  std::string at = fmt::format("node {}", n.id);
  if (n.symbol < 0 || n.symbol >= int(gs.symbols.size()))
    return fmt::format("{}: symbol index {} is not a symbol of grammar {}", at, n.symbol, gs.name);
  const auto &sym = gs.symbols[n.symbol];
  at += " (" + sym.name + ")";
  if (!ids.insert(n.id).second)
    return fmt::format("{}: id {} is used twice", at, n.id);
  if (n.id >= nextId)
    return fmt::format("{}: id {} is not below next_id {}", at, n.id, nextId);
  if (s.maxDepth > 0 && depth > s.maxDepth)
    return fmt::format("{}: depth {} exceeds max_depth {}", at, depth, s.maxDepth);
  if (sym.depthLimit > 0 && onPath[size_t(n.symbol)] + 1 > sym.depthLimit)
    return fmt::format("{}: {} nodes of {} on its path from the root exceed its depth {}", at,
                       onPath[size_t(n.symbol)] + 1, sym.name, sym.depthLimit);
  if (n.alt < 0 || n.alt >= int(sym.alternatives.size()))
    return fmt::format("{}: alternative {} out of range ({} has {})", at, n.alt, sym.name,
                       sym.alternatives.size());
  const auto &a = sym.alternatives[n.alt];
  const auto &p = gs.parts[a.part];
  if (n.params.size() != p.params.size())
    return fmt::format("{}: {} params, part {} has {}", at, n.params.size(), p.name,
                       p.params.size());
  for (size_t i = 0; i < p.params.size(); ++i)
    if (!(n.params[i] >= p.params[i].lo && n.params[i] <= p.params[i].hi))
      return fmt::format("{}: param {} = {} is outside {} .. {}", at, p.params[i].name, n.params[i],
                         p.params[i].lo, p.params[i].hi);
  if (n.genes.size() != p.genes.size())
    return fmt::format("{}: {} actuation genes, part {} has {}", at, n.genes.size(), p.name,
                       p.genes.size());
  for (auto b : n.genes)
    if (b > 1)
      return fmt::format("{}: an actuation gene is {}, not 0 or 1", at, int(b));
  if (n.turn < 0 || n.turn >= numTurns(s, a))
    return fmt::format("{}: turn {} out of range 0 .. {}", at, n.turn, numTurns(s, a) - 1);
  if (a.hasAngle ? !(n.angle >= a.angleLo && n.angle <= a.angleHi) : n.angle != 0)
    return fmt::format("{}: angle {} outside the alternative's range", at, n.angle);
  if (n.children.size() != a.bindings.size())
    return fmt::format("{}: {} child slots, the alternative has {} bindings", at, n.children.size(),
                       a.bindings.size());
  for (size_t b = 0; b < a.bindings.size(); ++b) {
    const auto &bs = a.bindings[b];
    const auto &c = n.children[b];
    if (!c) {
      if (!bs.optional)
        return fmt::format("{}: required binding {} is empty", at, b);
      continue;
    }
    if (c->symbol != bs.symbol)
      return fmt::format(
          "{}: child {} of binding {} is a {}, the binding wants {}", at, c->id, b,
          c->symbol >= 0 && c->symbol < int(gs.symbols.size()) ? gs.symbols[c->symbol].name : "?",
          gs.symbols[bs.symbol].name);
    ++onPath[size_t(n.symbol)];
    auto e = checkNode(s, *c, depth + 1, nextId, ids, onPath);
    --onPath[size_t(n.symbol)];
    if (!e.empty())
      return e;
  }
  return "";
}

} // namespace

std::string GrammarBody::check(const GrammarGenome &g) const {
  if (g.root.symbol != spec_.grammar.start)
    return fmt::format("the root is not the start symbol");
  std::set<uint64_t> ids;
  std::vector<int> onPath(spec_.grammar.symbols.size(), 0);
  if (auto e = checkNode(spec_, g.root, 0, g.nextId, ids, onPath); !e.empty())
    return e;
  if (altOf(spec_, g.root).attach >= 0)
    return "the root's alternative has an attach port";
  GrammarCost c = cost(g);
  if (spec_.maxParts > 0 && c.parts > spec_.maxParts)
    return fmt::format("{} parts exceed max_parts {}", c.parts, spec_.maxParts);
  for (size_t i = 0; i < spec_.grammar.symbols.size(); ++i) {
    int lim = spec_.grammar.symbols[i].limit;
    if (lim >= 0 && c.perSymbol[i] > lim)
      return fmt::format("{} parts of {} exceed its limit {}", c.perSymbol[i],
                         spec_.grammar.symbols[i].name, lim);
  }
  return "";
}

namespace {

json nodeToJson(const body::GrammarBodySpec &s, const GrammarNode &n) {
  json j;
  j["id"] = n.id;
  j["symbol"] = s.grammar.symbols[n.symbol].name;
  j["alt"] = n.alt;
  j["params"] = n.params;
  std::vector<int> genes(n.genes.begin(), n.genes.end());
  j["genes"] = genes;
  j["turn"] = n.turn;
  j["angle"] = n.angle;
  json ch = json::array();
  for (const auto &c : n.children)
    ch.push_back(c ? nodeToJson(s, *c) : json(nullptr));
  j["children"] = ch;
  return j;
}

const json &field(const json &j, const char *name, const std::string &where) {
  if (!j.is_object() || !j.contains(name))
    throw Error(fmt::format("grammar genome: {} has no field '{}'.", where, name));
  return j.at(name);
}

GrammarNode nodeFromJson(const body::GrammarBodySpec &s, const json &j, int depth,
                         const std::string &where) {
  int maxNest = s.maxDepth > 0 ? s.maxDepth : 1000;
  if (depth > maxNest)
    throw Error(fmt::format("grammar genome: {} is nested deeper than {} levels.", where, maxNest));
  if (!j.is_object())
    throw Error(fmt::format("grammar genome: {} is not an object.", where));
  GrammarNode n;
  const auto &id = field(j, "id", where);
  if (!id.is_number_integer() || id.get<long long>() < 0)
    throw Error(fmt::format("grammar genome: {}.id is not a non-negative integer.", where));
  n.id = id.get<uint64_t>();
  std::string at = fmt::format("node {}", n.id);
  const auto &sym = field(j, "symbol", at);
  if (!sym.is_string())
    throw Error(fmt::format("grammar genome: {}.symbol is not a string.", at));
  for (size_t i = 0; i < s.grammar.symbols.size(); ++i)
    if (s.grammar.symbols[i].name == sym.get<std::string>())
      n.symbol = int(i);
  if (n.symbol < 0)
    throw Error(fmt::format("grammar genome: {}.symbol '{}' is not a symbol of grammar {}.", at,
                            sym.get<std::string>(), s.grammar.name));
  const auto &alt = field(j, "alt", at);
  if (!alt.is_number_integer())
    throw Error(fmt::format("grammar genome: {}.alt is not an integer.", at));
  n.alt = alt.get<int>();
  const auto &params = field(j, "params", at);
  const auto &genes = field(j, "genes", at);
  const auto &children = field(j, "children", at);
  if (!params.is_array() || !genes.is_array() || !children.is_array())
    throw Error(fmt::format("grammar genome: {}: params, genes and children must be arrays.", at));
  for (const auto &v : params) {
    if (!v.is_number())
      throw Error(fmt::format("grammar genome: {}.params holds a non-number.", at));
    n.params.push_back(v.get<double>());
  }
  for (const auto &v : genes) {
    if (!v.is_number_integer() || (v.get<int>() != 0 && v.get<int>() != 1))
      throw Error(fmt::format("grammar genome: {}.genes holds something other than 0 or 1.", at));
    n.genes.push_back(uint8_t(v.get<int>()));
  }
  const auto &turn = field(j, "turn", at);
  const auto &angle = field(j, "angle", at);
  if (!turn.is_number_integer() || !angle.is_number())
    throw Error(fmt::format("grammar genome: {}: turn must be an integer, angle a number.", at));
  n.turn = turn.get<int>();
  n.angle = angle.get<double>();
  int b = 0;
  for (const auto &c : children) {
    if (c.is_null())
      n.children.push_back(nullptr);
    else
      n.children.push_back(std::make_unique<GrammarNode>(
          nodeFromJson(s, c, depth + 1, fmt::format("{}.children[{}]", at, b))));
    ++b;
  }
  return n;
}

} // namespace

json GrammarBody::toJson(const Genome &g) const {
  const auto &gg = dynamic_cast<const GrammarGenome &>(g);
  json j;
  j["next_id"] = gg.nextId;
  j["root"] = nodeToJson(spec_, gg.root);
  return j;
}

GenomePtr GrammarBody::fromJson(const json &j) const {
  auto g = std::make_shared<GrammarGenome>();
  const auto &next = field(j, "next_id", "the genome");
  if (!next.is_number_integer() || next.get<long long>() < 0)
    throw Error("grammar genome: next_id is not a non-negative integer.");
  g->nextId = next.get<uint64_t>();
  g->root = nodeFromJson(spec_, field(j, "root", "the genome"), 0, "root");
  if (auto e = check(*g); !e.empty())
    throw Error("grammar genome: " + e + ".");
  return g;
}

namespace {

json scalarJson(const body::Scalar &s) {
  json j = json::array();
  for (const auto &t : s.code)
    j.push_back({int(t.op), t.value, t.param});
  return j;
}

} // namespace

json GrammarBody::fingerprint() const {
  const auto &s = spec_;
  json parts = json::array();
  for (const auto &p : s.grammar.parts) {
    json jp;
    jp["name"] = p.name;
    jp["dim"] = p.dim;
    json pts = json::array();
    for (const auto &pt : p.points) {
      json c = json::array();
      for (const auto &x : pt)
        c.push_back(scalarJson(x));
      pts.push_back(c);
    }
    jp["points"] = pts;
    json spr = json::array();
    for (const auto &sp : p.springs)
      spr.push_back({sp.a, sp.b, sp.stiffness, sp.actuation, sp.gene});
    jp["springs"] = spr;
    json genes = json::array();
    for (const auto &ge : p.genes)
      genes.push_back({{"name", ge.name}, {"springs", ge.springs}});
    jp["genes"] = genes;
    json ports = json::array();
    for (const auto &po : p.ports) {
      json pj = {{"name", po.name}, {"points", po.points}};
      if (!po.levers.empty()) { // only when written: fingerprints without one stay as they were
        pj["lever"] = {po.levers[0], po.leverStiffness, po.leverActuation};
        if (po.levers.size() > 1)
          pj["lever2"] = po.levers[1];
      }
      ports.push_back(std::move(pj));
    }
    jp["ports"] = ports;
    json params = json::array();
    for (const auto &pa : p.params)
      params.push_back({pa.name, pa.init, pa.lo, pa.hi});
    jp["params"] = params;
    jp["mirror"] = p.mirror;
    jp["cells"] = p.cells;
    parts.push_back(jp);
  }
  json syms = json::array();
  for (const auto &sy : s.grammar.symbols) {
    json alts = json::array();
    for (const auto &a : sy.alternatives) {
      json bs = json::array();
      for (const auto &b : a.bindings)
        bs.push_back({{"ports", b.ports}, {"symbol", b.symbol}, {"optional", b.optional}});
      json alt = {{"part", a.part},
                  {"attach", a.attach},
                  {"bindings", bs},
                  {"weight", a.weight},
                  {"angle", a.hasAngle ? json({a.angleLo, a.angleHi}) : json(nullptr)}};
      if (a.fixedTurn >= 0) // only when written, so fingerprints without it stay as they were
        alt["turn"] = a.fixedTurn;
      alts.push_back(std::move(alt));
    }
    json sj = {{"name", sy.name}, {"limit", sy.limit}, {"alternatives", alts}};
    if (sy.depthLimit > 0) // only when written, so fingerprints without them stay as they were
      sj["depth"] = sy.depthLimit;
    if (sy.levelScale != 1)
      sj["scale"] = sy.levelScale;
    syms.push_back(std::move(sj));
  }
  const auto &m = mutation_;
  return {
      {"kind", "grammar"},
      {"name", s.name},
      {"grammar",
       {{"name", s.grammar.name}, {"start", s.grammar.start}, {"parts", parts}, {"symbols", syms}}},
      {"dim", s.dim},
      {"scale", s.scale},
      {"ground_y", s.groundY},
      {"max_parts", s.maxParts},
      {"max_points", s.maxPoints},
      {"max_springs", s.maxSprings},
      {"max_depth", s.maxDepth},
      {"overlap", s.overlap == body::Overlap::Prune ? "prune" : "reject"},
      {"actuator_p", s.actuatorP},
      {"mutation",
       {{"add", scalarJson(m.add)},
        {"remove", scalarJson(m.remove)},
        {"swap", scalarJson(m.swap)},
        {"rearrange", scalarJson(m.rearrange)},
        {"combine", scalarJson(m.combine)},
        {"perturb", scalarJson(m.perturb)},
        {"flip", scalarJson(m.flip)},
        {"until_changed", m.untilChanged},
        {"max_attempts", m.maxAttempts}}}};
}

bool GrammarBody::altCompletion(int symbol, int alt, GrammarCost &cost, int &height) const {
  const auto &a = spec_.grammar.symbols[symbol].alternatives[alt];
  GrammarNode probe;
  probe.symbol = symbol, probe.alt = alt;
  cost = ownCost(spec_, probe);
  height = 0;
  for (const auto &b : a.bindings) {
    if (b.optional)
      continue;
    if (minAlt_[b.symbol] < 0)
      return false;
    addCost(cost, minCost_[b.symbol], int(b.ports.size()));
    height = std::max(height, 1 + minHeight_[b.symbol]);
  }
  return true;
}

GrammarBody::GrammarBody(body::GrammarBodySpec spec, body::GrammarMutationSpec mutation)
    : spec_(std::move(spec)), mutation_(std::move(mutation)) {
  const auto &gs = spec_.grammar;
  int ns = int(gs.symbols.size());
  if (gs.start < 0 || gs.start >= ns)
    throw Error(fmt::format("grammar {} has no start symbol.", gs.name));
  if (spec_.dim != 2 && spec_.dim != 3)
    throw Error(fmt::format("body {}: dimension must be 2 or 3.", spec_.name));
  // Cheapest completions by fixed-point iteration: a symbol's cost is its
  // cheapest alternative with every required child at its own cheapest.
  minCost_.assign(ns, GrammarCost{});
  minAlt_.assign(ns, -1);
  minHeight_.assign(ns, kUnlimited);
  auto key = [](const GrammarCost &c) { return std::tuple(c.parts, c.points, c.springs); };
  for (bool changed = true; changed;) {
    changed = false;
    for (int si = 0; si < ns; ++si) {
      const auto &sym = gs.symbols[si];
      for (int ai = 0; ai < int(sym.alternatives.size()); ++ai) {
        GrammarCost c;
        int height = 0;
        if (!altCompletion(si, ai, c, height))
          continue;
        if (minAlt_[si] < 0 || key(c) < key(minCost_[si])) {
          minCost_[si] = c, minAlt_[si] = ai, changed = true;
        }
        if (height < minHeight_[si])
          minHeight_[si] = height, changed = true;
      }
    }
  }
  for (int si = 0; si < ns; ++si)
    if (minAlt_[si] < 0)
      throw Error(
          fmt::format("grammar {}: symbol {} can never finish.", gs.name, gs.symbols[si].name));
  if (!fits(minCost_[gs.start], remaining(GrammarCost{})) ||
      (spec_.maxDepth > 0 && minHeight_[gs.start] > spec_.maxDepth))
    throw Error(fmt::format("body {}: the smallest body grammar {} derives exceeds the limits.",
                            spec_.name, gs.name));
}

} // namespace evoc::evolve
