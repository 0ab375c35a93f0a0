// The commands block: robot-level commands, the task mixture that draws them
// per episode and per period of steps, and the validation grid.
//
//   commands {
//     period = 500;
//     still { p = 0.25; v = 0;                    h = 0.1;                   c = 0; }
//     run   { p = 0.25; v = uniform(-0.08, 0.08); h = 0.1;                   c = 0; }
//     jump  { p = 0.25; v = uniform(-0.08, 0.08); h = 0.1 + uniform(0, 0.1); c = 0; }
//     validate { v = 0, 0.02, -0.02; h = 0.1, 0.15; c = 0, 1; }
//   }
//
// A vector command is written vec2(..) / vec3(..) of draws in every task
// (`d = vec2(uniform(-0.1, 0.1), 0);`) and of numbers in the grid.
#include <cmath>

#include "sema/Checker.h"

namespace evoc::sema {

using namespace ast;

namespace {
std::string q(const std::string &s) { return "'" + s + "'"; }
std::string widthName(int w) { return w == 1 ? "a scalar" : "a vec" + std::to_string(w); }
} // namespace

int Checker::commandIndex(const std::string &name) const {
  const auto &n = out.commands.names;
  for (size_t i = 0; i < n.size(); ++i)
    if (n[i] == name)
      return int(i);
  return -1;
}

void Checker::checkCommands() {
  if (commandDecls.empty())
    return;
  const CommandsDecl &d = *commandDecls.front();
  body::CommandSpec &spec = out.commands;
  const SettingsBlock &b = d.body;
  for (const auto &s : b.settings)
    if (s.key.name != "period")
      diags.error(s.key.range, "unknown commands setting " + q(s.key.name) +
                                   "; commands holds 'period = N;', one block per task "
                                   "(NAME { p = ..; COMMAND = ..; }) and 'validate { ... }'");
    else {
      Expr *e = single(s, "commands.period");
      if (auto v = e ? evalInt(*e, "commands.period") : std::nullopt) {
        if (*v < 1)
          diags.error(e->range, "commands.period must be at least 1 step");
        else
          spec.period = *v;
      }
    }

  // A value: a number, uniform(lo, hi), or a number plus or minus uniform(lo, hi).
  auto draw = [&](const Expr &e, const std::string &what) -> std::optional<body::CommandDraw> {
    auto uniform = [&](const Expr &x) -> std::optional<std::pair<double, double>> {
      auto *c = dynCast<CallExpr>(&x);
      if (!c || c->callee.name != "uniform")
        return std::nullopt;
      const_cast<CallExpr *>(c)->ref = CallRef::Setting;
      if (c->args.size() != 2 || !c->namedArgs.empty()) {
        diags.error(c->range, "uniform takes two numbers: uniform(lo, hi)");
        return std::make_pair(0.0, 0.0);
      }
      auto lo = evalNumber(*c->args[0], what), hi = evalNumber(*c->args[1], what);
      if (!lo || !hi)
        return std::make_pair(0.0, 0.0);
      if (*lo > *hi)
        diags.error(c->range, "uniform(lo, hi) needs lo <= hi");
      return std::make_pair(*lo, *hi);
    };
    body::CommandDraw out;
    if (auto u = uniform(e)) {
      out.lo = u->first, out.hi = u->second;
      return out;
    }
    if (auto *bin = dynCast<BinaryExpr>(&e);
        bin && (bin->op == BinaryOp::Add || bin->op == BinaryOp::Sub)) {
      auto ur = uniform(*bin->rhs);
      auto ul = bin->op == BinaryOp::Add ? uniform(*bin->lhs) : std::nullopt;
      if (ur || ul) {
        const Expr &other = ur ? *bin->lhs : *bin->rhs;
        auto base = evalNumber(other, what);
        if (!base)
          return std::nullopt;
        auto u = ur ? *ur : *ul;
        out.base = *base;
        out.lo = bin->op == BinaryOp::Sub ? -u.second : u.first;
        out.hi = bin->op == BinaryOp::Sub ? -u.first : u.second;
        return out;
      }
    }
    auto v = evalNumber(e, what);
    if (!v)
      return std::nullopt;
    out.base = *v;
    return out;
  };

  // A command's value: a draw, or vec2(..) / vec3(..) of draws (a vector command).
  auto drawValue = [&](const Expr &e,
                       const std::string &what) -> std::optional<std::vector<body::CommandDraw>> {
    auto *c = dynCast<CallExpr>(&e);
    if (c && (c->callee.name == "vec2" || c->callee.name == "vec3")) {
      const_cast<CallExpr *>(c)->ref = CallRef::Setting;
      const size_t w = c->callee.name == "vec2" ? 2 : 3;
      if (c->args.size() != w || !c->namedArgs.empty()) {
        diags.error(c->range, c->callee.name + " takes " + std::to_string(w) + " values");
        return std::nullopt;
      }
      std::vector<body::CommandDraw> out;
      for (const auto &a : c->args) {
        auto d = draw(*a, what);
        if (!d)
          return std::nullopt;
        out.push_back(*d);
      }
      return out;
    }
    auto d = draw(e, what);
    if (!d)
      return std::nullopt;
    return std::vector<body::CommandDraw>{*d};
  };

  const NestedBlock *validate = nullptr;
  double total = 0;
  for (const auto &nb : b.blocks) {
    if (nb.name.name == "validate") {
      validate = &nb;
      continue;
    }
    body::CommandTask task;
    task.name = nb.name.name;
    bool haveP = false;
    std::vector<std::pair<std::string, const Setting *>> values;
    for (const auto &s : nb.block->settings) {
      if (s.key.name == "p") {
        Expr *e = single(s, task.name + ".p");
        if (auto v = e ? evalNumber(*e, task.name + ".p") : std::nullopt) {
          if (*v < 0 || *v > 1)
            diags.error(e->range, "a task probability must lie in [0, 1]");
          task.p = *v;
          haveP = true;
        }
        continue;
      }
      values.push_back({s.key.name, &s});
    }
    if (!haveP)
      diags.error(nb.name.range, "task " + q(task.name) + " needs a probability: p = 0.25;");
    total += task.p;
    if (spec.tasks.empty()) { // the first task declares the commands (and their widths)
      for (auto &[name, s] : values) {
        if (commandIndex(name) >= 0) {
          diags.error(s->key.range, "command " + q(name) + " is set twice in this task");
          continue;
        }
        spec.names.push_back(name);
        auto *c = s->values.size() == 1 ? dynCast<CallExpr>(s->values[0].get()) : nullptr;
        spec.comps.push_back(c && c->callee.name == "vec2"   ? 2
                             : c && c->callee.name == "vec3" ? 3
                                                             : 1);
      }
      if (spec.names.empty())
        diags.error(nb.name.range,
                    "task " + q(task.name) + " sets no command; write e.g. 'v = uniform(-1, 1);'");
    }
    task.values.resize(size_t(spec.columns()));
    std::vector<char> seen(spec.names.size(), 0);
    for (auto &[name, s] : values) {
      int i = commandIndex(name);
      if (i < 0) {
        diags.error(s->key.range, "command " + q(name) + " is not set by the first task " +
                                      q(spec.tasks.empty() ? task.name : spec.tasks[0].name) +
                                      "; every task sets the same commands");
        continue;
      }
      if (seen[i]) {
        if (!spec.tasks.empty())
          diags.error(s->key.range, "command " + q(name) + " is set twice in this task");
        continue;
      }
      seen[i] = 1;
      Expr *e = single(*s, task.name + "." + name);
      if (!e)
        continue;
      auto dr = drawValue(*e, task.name + "." + name);
      if (!dr)
        continue;
      if (int(dr->size()) != spec.width(size_t(i))) {
        diags.error(e->range, "command " + q(name) + " is " + widthName(spec.width(size_t(i))) +
                                  " in the first task, but " + widthName(int(dr->size())) +
                                  " here");
        continue;
      }
      for (size_t j = 0; j < dr->size(); ++j)
        task.values[size_t(spec.column(size_t(i))) + j] = (*dr)[j];
    }
    for (size_t i = 0; i < spec.names.size(); ++i)
      if (!seen[i])
        diags.error(nb.name.range, "task " + q(task.name) + " does not set command " +
                                       q(spec.names[i]) + "; every task sets every command");
    spec.tasks.push_back(std::move(task));
  }
  if (spec.tasks.empty()) {
    diags.error(d.name.range, "commands needs at least one task, e.g. "
                              "'run { p = 1; v = uniform(-0.08, 0.08); }'");
    return;
  }
  if (std::abs(total - 1) > 1e-9)
    diags.error(d.name.range,
                "the task probabilities add up to " + std::to_string(total) + ", not 1");
  if (validate) {
    spec.grid.assign(spec.names.size(), {});
    for (const auto &s : validate->block->settings) {
      int i = commandIndex(s.key.name);
      if (i < 0) {
        diags.error(s.key.range, "validate sets " + q(s.key.name) + ", which is not a command");
        continue;
      }
      const int w = spec.width(size_t(i));
      for (const auto &v : s.values) {
        auto *c = dynCast<CallExpr>(v.get());
        bool vec = c && (c->callee.name == "vec2" || c->callee.name == "vec3");
        std::vector<const Expr *> parts;
        if (vec) {
          c->ref = CallRef::Setting;
          for (const auto &a : c->args)
            parts.push_back(a.get());
        } else
          parts.push_back(v.get());
        if (int(parts.size()) != w || (vec && !c->namedArgs.empty())) {
          diags.error(v->range, "validate." + s.key.name + ": command " + q(s.key.name) + " is " +
                                    widthName(w) + "; write " +
                                    (w == 1 ? "numbers, e.g. 0, 0.5"
                                            : "e.g. vec" + std::to_string(w) + "(0, 0.1)"));
          continue;
        }
        for (const Expr *x : parts)
          spec.grid[i].push_back(evalNumber(*x, "validate." + s.key.name).value_or(0));
      }
    }
    for (size_t i = 0; i < spec.names.size(); ++i)
      if (spec.grid[i].empty())
        diags.error(validate->name.range, "validate lists no values for command " +
                                              q(spec.names[i]) + "; e.g. " + spec.names[i] +
                                              " = 0, 0.5;");
    if (spec.gridCases() > 100000)
      diags.error(validate->name.range, "the validation grid has " +
                                            std::to_string(spec.gridCases()) +
                                            " cases, above the limit of 100000");
  }
}

} // namespace evoc::sema
