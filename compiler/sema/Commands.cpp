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

/// The block's own settings: only `period = N;` (at least one step).
void checkPeriod(Checker &C, const SettingsBlock &b, body::CommandSpec &spec) {
  for (const auto &s : b.settings)
    if (s.key.name != "period")
      C.diags.error(s.key.range, "unknown commands setting " + q(s.key.name) +
                                     "; commands holds 'period = N;', one block per task "
                                     "(NAME { p = ..; COMMAND = ..; }) and 'validate { ... }'");
    else {
      Expr *e = C.single(s, "commands.period");
      if (auto v = e ? C.evalInt(*e, "commands.period") : std::nullopt) {
        if (*v < 1)
          C.diags.error(e->range, "commands.period must be at least 1 step");
        else
          spec.period = *v;
      }
    }
}

/// `uniform(lo, hi)`: its bounds ((0, 0) after an error), or nullopt if `x`
/// is not a call of uniform.
std::optional<std::pair<double, double>> uniformBounds(Checker &C, const Expr &x,
                                                       const std::string &what) {
  auto *c = dynCast<CallExpr>(&x);
  if (!c || c->callee.name != "uniform")
    return std::nullopt;
  const_cast<CallExpr *>(c)->ref = CallRef::Setting;
  if (c->args.size() != 2 || !c->namedArgs.empty()) {
    C.diags.error(c->range, "uniform takes two numbers: uniform(lo, hi)");
    return std::make_pair(0.0, 0.0);
  }
  auto lo = C.evalNumber(*c->args[0], what), hi = C.evalNumber(*c->args[1], what);
  if (!lo || !hi)
    return std::make_pair(0.0, 0.0);
  if (*lo > *hi)
    C.diags.error(c->range, "uniform(lo, hi) needs lo <= hi");
  return std::make_pair(*lo, *hi);
}

/// A value: a number, uniform(lo, hi), or a number plus or minus uniform(lo, hi).
std::optional<body::CommandDraw> commandDraw(Checker &C, const Expr &e, const std::string &what) {
  body::CommandDraw out;
  if (auto u = uniformBounds(C, e, what)) {
    out.lo = u->first, out.hi = u->second;
    return out;
  }
  if (auto *bin = dynCast<BinaryExpr>(&e);
      bin && (bin->op == BinaryOp::Add || bin->op == BinaryOp::Sub)) {
    auto ur = uniformBounds(C, *bin->rhs, what);
    auto ul = bin->op == BinaryOp::Add ? uniformBounds(C, *bin->lhs, what) : std::nullopt;
    if (ur || ul) {
      const Expr &other = ur ? *bin->lhs : *bin->rhs;
      auto base = C.evalNumber(other, what);
      if (!base)
        return std::nullopt;
      auto u = ur ? *ur : *ul;
      out.base = *base;
      out.lo = bin->op == BinaryOp::Sub ? -u.second : u.first;
      out.hi = bin->op == BinaryOp::Sub ? -u.first : u.second;
      return out;
    }
  }
  auto v = C.evalNumber(e, what);
  if (!v)
    return std::nullopt;
  out.base = *v;
  return out;
}

/// A command's value: a draw, or vec2(..) / vec3(..) of draws (a vector command).
std::optional<std::vector<body::CommandDraw>> commandValue(Checker &C, const Expr &e,
                                                           const std::string &what) {
  auto *c = dynCast<CallExpr>(&e);
  if (c && (c->callee.name == "vec2" || c->callee.name == "vec3")) {
    const_cast<CallExpr *>(c)->ref = CallRef::Setting;
    const size_t w = c->callee.name == "vec2" ? 2 : 3;
    if (c->args.size() != w || !c->namedArgs.empty()) {
      C.diags.error(c->range, c->callee.name + " takes " + std::to_string(w) + " values");
      return std::nullopt;
    }
    std::vector<body::CommandDraw> out;
    for (const auto &a : c->args) {
      auto d = commandDraw(C, *a, what);
      if (!d)
        return std::nullopt;
      out.push_back(*d);
    }
    return out;
  }
  auto d = commandDraw(C, e, what);
  if (!d)
    return std::nullopt;
  return std::vector<body::CommandDraw>{*d};
}

/// A task's settings other than `p`, by command name.
using TaskValues = std::vector<std::pair<std::string, const Setting *>>;

/// The first task declares the commands, in its order, and their widths.
void declareCommands(Checker &C, const NestedBlock &nb, const TaskValues &values,
                     body::CommandSpec &spec) {
  for (auto &[name, s] : values) {
    if (C.commandIndex(name) >= 0) {
      C.diags.error(s->key.range, "command " + q(name) + " is set twice in this task");
      continue;
    }
    spec.names.push_back(name);
    auto *c = s->values.size() == 1 ? dynCast<CallExpr>(s->values[0].get()) : nullptr;
    spec.comps.push_back(c && c->callee.name == "vec2" ? 2 : c && c->callee.name == "vec3" ? 3 : 1);
  }
  if (spec.names.empty())
    C.diags.error(nb.name.range,
                  "task " + q(nb.name.name) + " sets no command; write e.g. 'v = uniform(-1, 1);'");
}

/// A task's command values: each command once, with the first task's width.
void checkTaskValues(Checker &C, const NestedBlock &nb, const TaskValues &values,
                     const body::CommandSpec &spec, body::CommandTask &task) {
  task.values.resize(size_t(spec.columns()));
  std::vector<char> seen(spec.names.size(), 0);
  for (auto &[name, s] : values) {
    int i = C.commandIndex(name);
    if (i < 0) {
      C.diags.error(s->key.range, "command " + q(name) + " is not set by the first task " +
                                      q(spec.tasks.empty() ? task.name : spec.tasks[0].name) +
                                      "; every task sets the same commands");
      continue;
    }
    if (seen[i]) {
      if (!spec.tasks.empty())
        C.diags.error(s->key.range, "command " + q(name) + " is set twice in this task");
      continue;
    }
    seen[i] = 1;
    Expr *e = C.single(*s, task.name + "." + name);
    if (!e)
      continue;
    auto dr = commandValue(C, *e, task.name + "." + name);
    if (!dr)
      continue;
    if (int(dr->size()) != spec.width(size_t(i))) {
      C.diags.error(e->range, "command " + q(name) + " is " + widthName(spec.width(size_t(i))) +
                                  " in the first task, but " + widthName(int(dr->size())) +
                                  " here");
      continue;
    }
    for (size_t j = 0; j < dr->size(); ++j)
      task.values[size_t(spec.column(size_t(i))) + j] = (*dr)[j];
  }
  for (size_t i = 0; i < spec.names.size(); ++i)
    if (!seen[i])
      C.diags.error(nb.name.range, "task " + q(task.name) + " does not set command " +
                                       q(spec.names[i]) + "; every task sets every command");
}

/// One task block `NAME { p = ..; COMMAND = ..; }`, into spec.tasks.
void checkTask(Checker &C, const NestedBlock &nb, body::CommandSpec &spec) {
  body::CommandTask task;
  task.name = nb.name.name;
  bool haveP = false;
  TaskValues values;
  for (const auto &s : nb.block->settings) {
    if (s.key.name == "p") {
      Expr *e = C.single(s, task.name + ".p");
      if (auto v = e ? C.evalNumber(*e, task.name + ".p") : std::nullopt) {
        if (*v < 0 || *v > 1)
          C.diags.error(e->range, "a task probability must lie in [0, 1]");
        task.p = *v;
        haveP = true;
      }
      continue;
    }
    values.push_back({s.key.name, &s});
  }
  if (!haveP)
    C.diags.error(nb.name.range, "task " + q(task.name) + " needs a probability: p = 0.25;");
  if (spec.tasks.empty())
    declareCommands(C, nb, values, spec);
  checkTaskValues(C, nb, values, spec, task);
  spec.tasks.push_back(std::move(task));
}

/// `validate { COMMAND = v, v, ...; }`: the validation grid, every command
/// listed, at most 100000 cases.
void checkValidateGrid(Checker &C, const NestedBlock &validate, body::CommandSpec &spec) {
  spec.grid.assign(spec.names.size(), {});
  for (const auto &s : validate.block->settings) {
    int i = C.commandIndex(s.key.name);
    if (i < 0) {
      C.diags.error(s.key.range, "validate sets " + q(s.key.name) + ", which is not a command");
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
        C.diags.error(v->range, "validate." + s.key.name + ": command " + q(s.key.name) + " is " +
                                    widthName(w) + "; write " +
                                    (w == 1 ? "numbers, e.g. 0, 0.5"
                                            : "e.g. vec" + std::to_string(w) + "(0, 0.1)"));
        continue;
      }
      for (const Expr *x : parts)
        spec.grid[i].push_back(C.evalNumber(*x, "validate." + s.key.name).value_or(0));
    }
  }
  for (size_t i = 0; i < spec.names.size(); ++i)
    if (spec.grid[i].empty())
      C.diags.error(validate.name.range, "validate lists no values for command " +
                                             q(spec.names[i]) + "; e.g. " + spec.names[i] +
                                             " = 0, 0.5;");
  if (spec.gridCases() > 100000)
    C.diags.error(validate.name.range, "the validation grid has " +
                                           std::to_string(spec.gridCases()) +
                                           " cases, above the limit of 100000");
}

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
  checkPeriod(*this, b, spec);
  const NestedBlock *validate = nullptr;
  double total = 0;
  for (const auto &nb : b.blocks) {
    if (nb.name.name == "validate") {
      validate = &nb;
      continue;
    }
    checkTask(*this, nb, spec);
    total += spec.tasks.back().p;
  }
  if (spec.tasks.empty()) {
    diags.error(d.name.range, "commands needs at least one task, e.g. "
                              "'run { p = 1; v = uniform(-0.08, 0.08); }'");
    return;
  }
  if (std::abs(total - 1) > 1e-9)
    diags.error(d.name.range,
                "the task probabilities add up to " + std::to_string(total) + ", not 1");
  if (validate)
    checkValidateGrid(*this, *validate, spec);
}

} // namespace evoc::sema
