// checkFile: load a program, collect its top-level names, apply --set
// overrides, and run every check in order.
#include "frontend/Imports.h"
#include "frontend/Parser.h"
#include "sema/Checker.h"
#include "sema/Limits.h"
#include "sema/SettingKeys.h"
#include "support/SourceManager.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace evoc::sema {

using namespace ast;

int editDistance(const std::string &a, const std::string &b) {
  std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    prev[j] = int(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = int(i);
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string closest(const std::string &name, const std::vector<std::string> &candidates) {
  // Allow about one typo per three letters, never a whole short name.
  int maxD = name.size() <= 3 ? 1 : name.size() <= 6 ? 2 : 3;
  std::string best;
  int bestD = maxD + 1;
  for (const auto &c : candidates) {
    int d = editDistance(name, c);
    if (d < bestD && d < int(name.size()) && d < int(c.size())) {
      bestD = d;
      best = c;
    }
  }
  return best;
}

static const char *declWord(DeclKind k) {
  switch (k) {
  case DeclKind::Fn:
    return "fn";
  case DeclKind::Physics:
    return "physics";
  case DeclKind::Material:
    return "material";
  case DeclKind::Part:
    return "part";
  case DeclKind::Grammar:
    return "grammar";
  case DeclKind::Body:
    return "body";
  case DeclKind::Controller:
    return "controller";
  case DeclKind::Loss:
    return "loss";
  default:
    return "declaration";
  }
}

void Checker::collect(Program &program) {
  auto once = [&](auto &list, Decl *d, const char *what) {
    using T = typename std::remove_reference_t<decltype(list)>::value_type;
    if (!list.empty())
      diags.error(d->name.range, std::string("more than one '") + what + "' block; merge them")
          .note(list.front()->name.range, std::string("the first '") + what + "' block is here");
    list.push_back(static_cast<T>(d));
  };
  for (auto &m : program.modules) {
    for (auto &dp : m->decls) {
      Decl *d = dp.get();
      switch (d->kind) {
      case DeclKind::Import:
        continue;
      case DeclKind::World:
        once(worlds, d, "world");
        continue;
      case DeclKind::Evolve:
        once(evolves, d, "evolve");
        continue;
      case DeclKind::Commands:
        once(commandDecls, d, "commands");
        continue;
      case DeclKind::Train:
        once(trains, d, "train");
        continue;
      case DeclKind::Mutation:
        once(mutations, d, "mutation");
        continue;
      case DeclKind::Requires:
        // Several in one file are allowed: a run's resolved.evo holds every
        // module's (docs/language.md, Libraries).
        requirements.push_back({cast<RequiresDecl>(d), m.get()});
        continue;
      default:
        break;
      }
      auto [it, fresh] = names.emplace(d->name.name, d);
      if (!fresh) {
        diags.error(d->name.range, "'" + d->name.name + "' is already declared")
            .note(it->second->name.range, std::string("the ") + declWord(it->second->kind) + " '" +
                                              d->name.name + "' is declared here");
        continue;
      }
      switch (d->kind) {
      case DeclKind::Fn:
        fns.push_back(cast<FnDecl>(d));
        break;
      case DeclKind::Physics:
        physicsDecls.push_back(cast<PhysicsDecl>(d));
        break;
      case DeclKind::Material:
        materials.push_back(cast<MaterialDecl>(d));
        break;
      case DeclKind::Part:
        parts.push_back(cast<PartDecl>(d));
        break;
      case DeclKind::Grammar:
        grammars.push_back(cast<GrammarDecl>(d));
        break;
      case DeclKind::Body:
        bodies.push_back(cast<BodyDecl>(d));
        break;
      case DeclKind::Controller:
        controllers.push_back(cast<ControllerDecl>(d));
        break;
      case DeclKind::Loss:
        losses.push_back(cast<LossDecl>(d));
        break;
      default:
        break;
      }
    }
  }
  haveWorld = !worlds.empty();
  dimKnown = haveWorld;
}

const std::vector<std::string> &worldKeys() { return settingKeys("world"); }
const std::vector<std::string> &learnKeys() { return settingKeys("learn"); }
static const std::vector<std::string> &kEvolveKeys = settingKeys("evolve");
static const std::vector<std::string> &kTrainKeys = settingKeys("train");

bool Checker::applyOverrides() {
  bool ok = true;
  for (const auto &[key, value] : options.overrides) {
    std::vector<std::string> path;
    size_t start = 0;
    while (true) {
      size_t dot = key.find('.', start);
      path.push_back(key.substr(start, dot == std::string::npos ? dot : dot - start));
      if (dot == std::string::npos)
        break;
      start = dot + 1;
    }
    SettingsBlock *block = nullptr;
    const std::vector<std::string> *known = nullptr;
    std::string leaf = path.back();
    if (path.size() == 2 && path[0] == "world") {
      known = &worldKeys();
      if (!worlds.empty())
        block = &worlds.front()->body;
    } else if (path.size() == 2 && path[0] == "evolve") {
      known = &kEvolveKeys;
      if (!evolves.empty())
        block = &evolves.front()->body;
    } else if (path.size() == 2 && path[0] == "train") {
      known = &kTrainKeys;
      if (!trains.empty())
        block = &trains.front()->body;
    } else if (path.size() == 3 && (path[0] == "evolve" || path[0] == "train") &&
               path[1] == "learn") {
      known = &learnKeys();
      SettingsBlock *outer = path[0] == "evolve"
                                 ? (evolves.empty() ? nullptr : &evolves.front()->body)
                                 : (trains.empty() ? nullptr : &trains.front()->body);
      if (outer)
        for (auto &nb : outer->blocks)
          if (nb.name.name == "learn")
            block = nb.block.get();
    }
    if (!known || std::find(known->begin(), known->end(), leaf) == known->end()) {
      std::string hint;
      std::vector<std::string> all;
      for (auto &k : worldKeys())
        all.push_back("world." + k);
      for (auto &k : kEvolveKeys)
        all.push_back("evolve." + k);
      for (auto &k : learnKeys())
        all.push_back("evolve.learn." + k), all.push_back("train.learn." + k);
      for (auto &k : kTrainKeys)
        all.push_back("train." + k);
      std::string c = closest(key, all);
      diags.error("unknown setting '" + key + "' in --set" +
                  (c.empty() ? std::string("") : "; did you mean '" + c + "'?"));
      ok = false;
      continue;
    }
    if (!block) {
      diags.error("--set " + key + ": the program has no '" + key.substr(0, key.rfind('.')) +
                  "' block to override");
      ok = false;
      continue;
    }
    // Parse the value as the value of a setting in a small buffer of its own.
    // Diagnostics show what was typed; the value keeps its column, since
    // "world { leaf = " is never longer than "--set block.leaf=".
    const std::string typed = "--set " + key + "=";
    std::string head = "world { " + leaf + " = ";
    head.insert(head.size() - 2, typed.size() > head.size() ? typed.size() - head.size() : 0, ' ');
    int file = sources.addBuffer("<--set " + key + ">", head + value + "; }", typed + value);
    auto module = frontend::parseModule(file, sources, diags);
    if (!module || module->decls.empty()) {
      ok = false;
      continue;
    }
    auto *w = dynCast<WorldDecl>(module->decls.front().get());
    if (!w || w->body.settings.size() != 1 || module->decls.size() != 1 ||
        !w->body.blocks.empty()) {
      diags.error("--set " + key + ": the value must be one expression, not '" + value + "'");
      ok = false;
      continue;
    }
    Setting s = std::move(w->body.settings.front());
    bool replaced = false;
    for (auto &old : block->settings)
      if (old.key.name == leaf) {
        old.values = std::move(s.values);
        old.suffixes = std::move(s.suffixes);
        replaced = true;
      }
    if (!replaced)
      block->settings.push_back(std::move(s));
  }
  return ok;
}

namespace {

/// Where a setting of a block is written, or the block's name.
SourceRange settingAt(const SettingsBlock &b, const char *key, SourceRange fallback) {
  if (const Setting *s = b.find(key); s && !s->values.empty())
    return s->values.front()->range;
  return fallback;
}

/// Refuses sizes the runtime cannot hold before anything is allocated: a
/// lattice side above kMaxLatticeSide, and a run whose kept rollout states
/// (points x dim x 2 (x, v) x precision bytes, times the states a
/// checkpointed rollout keeps, times the population trained together) need
/// more than kMaxRunBytes.
void checkSizes(Checker &C, CheckedProgram &out) {
  if (!out.hasBody)
    return;
  const BodyDecl *bd = nullptr;
  for (const BodyDecl *d : C.bodies)
    if (d->name.name == out.body.name)
      bd = d;
  if (!bd)
    return;
  int64_t points = 0;
  if (out.body.kind == BodyKind::Lattice) {
    bool ok = true;
    for (const char *k : {"rows", "cols"}) {
      int64_t v = std::string(k) == "rows" ? out.body.rows : out.body.cols;
      if (v > kMaxLatticeSide) {
        C.diags.error(settingAt(bd->body, k, bd->name.range),
                      "a lattice of " + std::to_string(v) + " " + k + " is above the limit of " +
                          std::to_string(kMaxLatticeSide) + "; lower '" + k + "'");
        ok = false;
      }
    }
    if (!ok)
      return;
    points = (out.body.rows + 1) * ((out.body.cols + 1) / 2 + 1); // lattice nodes
  } else if (out.grammarBody && out.grammarBody->maxPoints > 0) {
    points = out.grammarBody->maxPoints;
  } else if (out.cellBody) {
    points = cellBodyPoints(*out.cellBody);
  } else if (out.voxelBody) {
    points = 1; // the box's corners
    for (int s : out.voxelBody->size)
      points *= s + 1;
  }
  if (points <= 0 || !out.hasEvolve || C.evolves.empty())
    return;
  const World &w = out.world;
  const double steps = double(w.steps);
  const double k =
      w.checkpoint ? double(*w.checkpoint) : std::max(1.0, std::round(std::sqrt(steps)));
  const double kept = std::ceil(steps / k) + std::min(k, steps); // checkpoints + one window
  const double stateBytes =
      double(points) * double(w.dim) * 2 * (w.precision == Precision::F32 ? 4 : 8);
  // Controller weights, with their gradients and two optimizer moments: the
  // hidden layers chained, the first fed by the points' coordinates, the
  // last feeding about 3 springs a point.
  double weights = 0;
  if (const ControllerDecl *c = out.evolve.learn.controller) {
    double prev = double(points) * double(w.dim);
    for (const auto &h : c->hidden) {
      weights += prev * double(h.unitsValue);
      prev = double(h.unitsValue);
    }
    weights += prev * 3.0 * double(points);
  }
  const double weightBytes = weights * 8 * 4;
  const double perRobot = stateBytes * kept + weightBytes;
  // The robots trained together: the population in generation 0, lambda in
  // every later one.
  const bool byOffspring = out.evolve.offspring > out.evolve.population;
  const int64_t robots = byOffspring ? out.evolve.offspring : out.evolve.population;
  const double bytes = perRobot * double(robots);
  if (bytes <= kMaxRunBytes)
    return;
  const SettingsBlock &eb = C.evolves.front()->body;
  const char *count = byOffspring ? "offspring" : "population";
  char msg[500];
  std::snprintf(msg, sizeof msg,
                "this run would need about %.1f GiB (%lld robots x %.1f MiB: %.0f rollout states "
                "kept x %.0f bytes, and %.1f MiB of controller weights), above the limit of "
                "%.0f GiB; lower evolve.%s, world.steps, the hidden layers or the body's "
                "size, or raise world.checkpoint",
                bytes / double(1ull << 30), (long long)robots, perRobot / double(1 << 20), kept,
                stateBytes, weightBytes / double(1 << 20), kMaxRunBytes / double(1ull << 30),
                count);
  C.diags.error(settingAt(eb, count, C.evolves.front()->name.range), msg);
}

} // namespace

std::optional<CheckedProgram> Checker::run(std::unique_ptr<Program> program) {
  collect(*program);
  if (!applyOverrides()) {
    out.ast = std::move(program);
    return std::nullopt;
  }
  checkWorld();
  selectPhysics();
  const int errorsBeforeCommands = diags.errorCount();
  checkCommands();
  commandsOk = diags.errorCount() == errorsBeforeCommands;
  if (!checkRequires(*program)) {
    // The libraries do not fit this world: what they declare is not checked
    // here (it would only repeat the mismatch), nor what depends on it.
    out.ast = std::move(program);
    return std::nullopt;
  }
  checkMaterials();
  checkParts();
  checkGrammars();
  checkBody();
  checkMutations();
  checkEvolve();
  checkTrain();
  checkFns();
  for (auto *p : physicsDecls)
    checkPhysics(*p);
  if (!diags.hasErrors()) {
    checkBodyFields();
    checkObjectSets();
  }
  for (auto *c : controllers)
    checkController(*c);
  for (auto *l : losses)
    checkLoss(*l);
  if (!diags.hasErrors())
    checkSizes(*this, out);
  for (auto *f : fns)
    out.fns[f->name.name] = f;
  out.physics = out.world.physics;
  const Learn &learn = out.hasTrain ? out.train.learn : out.evolve.learn;
  out.controller = learn.controller;
  out.loss = learn.loss;
  if (options.requireExperiment && !diags.hasErrors()) {
    SourceRange at;
    if (program->main() && !program->main()->decls.empty())
      at = program->main()->decls.front()->range;
    at.end = at.begin;
    if (!haveWorld)
      diags.error(at, "this program is not an experiment: it has no 'world' block");
    else if (!out.physics)
      diags.error(at, "this program has no physics (import one, e.g. "
                      "import \"physics/mass_spring.evo\";)");
    if (!out.hasBody)
      diags.error(at, "this program has no body (declare 'body lattice NAME { ... }')");
    if (!out.hasEvolve && !out.hasTrain)
      diags.error(at, "this program has no 'evolve' block (or 'train' block, to train one "
                      "fixed body)");
  }
  if (options.evolveBody && out.cellBody && !out.hasTrain && !diags.hasErrors()) {
    for (const BodyDecl *bd : bodies)
      if (bd->name.name == out.body.name) {
        DiagBuilder d =
            diags.error(bd->name.range,
                        "body '" + bd->name.name +
                            "' is a fixed body: it does not evolve, so there is "
                            "nothing to evolve; train its controller with a 'train { ... }' block "
                            "or simulate it with 'evoc sim FILE'");
        if (!evolves.empty())
          d.note(evolves.front()->name.range, "the evolve block is here");
      }
  }
  out.ast = std::move(program);
  if (diags.hasErrors())
    return std::nullopt;
  return std::move(out);
}

std::optional<CheckedProgram> checkFile(const std::string &path, const CheckOptions &options,
                                        SourceManager &sources, DiagnosticEngine &diags) {
  frontend::ImportOptions io;
  io.stdlibDirs = options.stdlibDirs;
  io.useEnv = !options.ignoreEnv;
  auto program = frontend::loadProgram(path, io, sources, diags);
  if (!program)
    return std::nullopt;
  Checker checker(options, sources, diags);
  return checker.run(std::move(program));
}

std::optional<CheckedProgram> checkBuffer(int file, const CheckOptions &options,
                                          SourceManager &sources, DiagnosticEngine &diags) {
  frontend::ImportOptions io;
  io.stdlibDirs = options.stdlibDirs;
  io.useEnv = !options.ignoreEnv;
  auto program = frontend::loadProgramFromFile(file, io, sources, diags);
  if (!program)
    return std::nullopt;
  Checker checker(options, sources, diags);
  return checker.run(std::move(program));
}

std::shared_ptr<const CheckedProgram> analyseBuffer(int file, const CheckOptions &options,
                                                    SourceManager &sources,
                                                    DiagnosticEngine &diags) {
  frontend::ImportOptions io;
  io.stdlibDirs = options.stdlibDirs;
  io.useEnv = !options.ignoreEnv;
  auto program = frontend::loadProgramFromFile(file, io, sources, diags);
  if (!program)
    return nullptr;
  Checker checker(options, sources, diags);
  std::optional<CheckedProgram> checked = checker.run(std::move(program));
  return std::make_shared<const CheckedProgram>(std::move(checked ? *checked : checker.out));
}

} // namespace evoc::sema
