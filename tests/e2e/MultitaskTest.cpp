// Multi-task losses end to end (docs/multitask.md): commands, windows over
// earlier states, running max/min inside nonlinear terms, conditions on
// commands. Gradients against central finite differences; the CPU back end
// against the interpreter; checkpointed against a full tape.
#include "Close.h"
#include <catch2/catch.hpp>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "TestBodies.h"
#include "app/BodyModels.h"
#include "app/Driver.h"
#include "app/Pipeline.h"
#include "codegen/cpu/CpuBackend.h"
#include "core/Commands.h"
#include "core/FixedTrain.h"
#include "core/Population.h"
#include "core/Rollout.h"
#include "evolve/engine/EvoRng.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

using namespace evoc;
using namespace evoc::runtime;

namespace {

struct Compiled {
  sema::CheckedProgram prog;
  ir::Module m;
};

sema::CheckedProgram checkEvo(const std::string &file) {
  app::CommonOptions o;
  o.file = std::string(EVOC_SOURCE_DIR) + "/" + file;
  SourceManager sources;
  DiagnosticEngine diags(sources);
  auto prog = app::loadChecked(o, sources, diags);
  REQUIRE(prog);
  return std::move(*prog);
}

Compiled compileEvo(const std::string &file) {
  app::CompiledFile c = app::compileFile(std::string(EVOC_SOURCE_DIR) + "/" + file);
  return {std::move(c.program), std::move(c.module)};
}

Robot ladder() { return test::ladder(0.3, 0.1); }

// Training the ladder under `c`'s commands: batches of 3 episodes from seed 3,
// Adam with lr 0.01.
TrainOptions batchOptions(const Compiled &c) {
  TrainOptions o;
  o.steps = c.prog.world.steps;
  o.groundHeight = 0.1;
  o.seed = 3;
  o.batch = 3;
  o.commands = &c.prog.commands;
  o.optimizer.kind = OptimizerKind::Adam;
  o.optimizer.lr = 0.01;
  return o;
}

struct Run {
  double loss;
  std::vector<double> terms, grad;
};

Run rollout(const ModuleInfo &info, const codegen::Executable &exe, Population &pop,
            const RolloutConfig &rc, bool backward) {
  Rollout ro(info, exe);
  RolloutOutcome o = ro.run(pop, 0, rc, backward);
  REQUIRE(o.valid);
  Run r{o.loss, o.terms, {}};
  if (backward) {
    const double *g = reinterpret_cast<const double *>(pop.arena(0, Arena::Grad));
    r.grad.assign(g, g + pop.layout(0).paramCount);
  }
  return r;
}

} // namespace

namespace {

/// The loss of FILE on `body` under episodes of several command streams:
/// terms sum to the loss, the interpreter and a full tape agree with the
/// checkpointed CPU back end, and the adjoint with central differences.
void checkMultitaskGradients(const std::string &file, const Robot &body,
                             const std::vector<std::string> &terms, int alwaysOn) {
  Compiled c = compileEvo(file);
  REQUIRE(c.m.lossTerms == terms);
  ModuleInfo info(c.m);
  REQUIRE(info.readsCommands);
  auto cpu = codegen::compile(c.m, codegen::BackendKind::Cpu);
  auto interp = codegen::compile(c.m, codegen::BackendKind::Interp);
  Population pop(info, {body});
  pop.initParams(0, 5, 0);
  {
    Rollout ro(info, *cpu);
    ro.runInit(pop, 0);
  }
  const int64_t T = c.prog.world.steps;
  RolloutConfig rc;
  rc.steps = T;
  rc.groundHeight = 0.1;
  rc.upAxis = body.dim - 1;
  // Episodes covering every task (the stream decides which).
  for (uint64_t stream : {1ull, 7ull, 12ull}) {
    CommandTable table = drawCommands(c.prog.commands, T, stream);
    bindCommands(rc, c.prog.commands, table);
    INFO("stream " << stream);
    rc.checkpointK = 4;
    Run a = rollout(info, *cpu, pop, rc, true);
    REQUIRE(a.terms.size() == terms.size());
    double sum = 0;
    for (double t : a.terms)
      sum += t;
    CHECK(test::close(sum, a.loss, 1e-12, 1e-15));
    CHECK(a.terms[size_t(alwaysOn)] > 0);

    // The interpreter, checkpointed differently, and a full tape.
    rc.checkpointK = 7;
    Run b = rollout(info, *interp, pop, rc, true);
    rc.checkpointK = 0;
    rc.fullTape = true;
    Run f = rollout(info, *cpu, pop, rc, true);
    rc.fullTape = false;
    rc.checkpointK = 4;
    CHECK(f.loss == a.loss);
    double gmax = 0;
    for (double g : a.grad)
      gmax = std::max(gmax, std::abs(g));
    REQUIRE(gmax > 0);
    // The weight gradients' window products add each entry's terms in the
    // same order whatever the window: checkpointed == full tape.
    CHECK(f.grad == a.grad);
    CHECK(test::close(b.loss, a.loss, 1e-9, 1e-15));
    for (size_t i = 0; i < a.grad.size(); ++i)
      CHECK(std::abs(b.grad[i] - a.grad[i]) <= 1e-9 * gmax);

    // Central differences on a spread of parameters.
    std::byte *p = pop.arena(0, Arena::Param);
    const int64_t n = pop.layout(0).paramCount;
    int checked = 0;
    for (int64_t i = 0; i < n; i += std::max<int64_t>(1, n / 23)) {
      double x0 = loadF(p, i, false), h = 1e-6;
      storeF(p, i, x0 + h, false);
      double lp = rollout(info, *cpu, pop, rc, false).loss;
      storeF(p, i, x0 - h, false);
      double lm = rollout(info, *cpu, pop, rc, false).loss;
      storeF(p, i, x0, false);
      double fd = (lp - lm) / (2 * h);
      INFO("param " << i << " fd " << fd << " adjoint " << a.grad[size_t(i)]);
      CHECK(std::abs(fd - a.grad[size_t(i)]) <= 1e-5 * gmax + 1e-4 * std::abs(fd));
      ++checked;
    }
    CHECK(checked > 20);
  }
}

} // namespace

TEST_CASE("Multi-task loss: gradients, back ends and checkpointing agree",
          "[multitask][gradcheck]") {
  checkMultitaskGradients("tests/data/multitask/gradcheck.evo", ladder(),
                          {"velocity", "height", "crawl"}, 1); // the min-window term is always on
}

TEST_CASE("3D multi-task loss (velocity along a vec2 command, turning): gradients and back ends",
          "[multitask][gradcheck][3d]") {
  // The cube turns under its commands, so the rotation term is never 0.
  checkMultitaskGradients("tests/data/multitask/gradcheck3d.evo", test::cube(0.1, 0.1, 0.1),
                          {"velocity", "rotation"}, 1);
}

TEST_CASE("Multi-task training lowers the batch loss and validates on the grid", "[multitask]") {
  Compiled c = compileEvo("tests/data/multitask/gradcheck.evo");
  ModuleInfo info(c.m);
  auto cpu = codegen::compile(c.m, codegen::BackendKind::Cpu);
  TrainOptions o = batchOptions(c);
  o.optimizer.beta2 = 0.9;
  FixedTrainer tr(info, *cpu, ladder(), o);
  Validation v0 = tr.validate();
  REQUIRE(v0.valid);
  REQUIRE(v0.cases.size() == 8);
  REQUIRE(v0.meanTerms.size() == 3);
  // Case order: the last command varies fastest.
  CHECK(v0.cases[1].commands == std::vector<double>{-0.04, 0.1, 1});
  CHECK(v0.cases[7].commands == std::vector<double>{0.04, 0.15, 1});
  // The same iteration twice from the same weights gives the same batch.
  ParamSet w0 = tr.params();
  BatchStep s0 = tr.iterate(0);
  REQUIRE(s0.valid);
  tr.setParams(w0);
  FixedTrainer again(info, *cpu, ladder(), o);
  BatchStep s0b = again.iterate(0);
  CHECK(s0b.loss == s0.loss);
  // A fixed batch (iteration 0's commands) gets lower with Adam steps.
  double first = s0.loss, last = first;
  for (int i = 0; i < 30; ++i)
    last = again.iterate(0).loss;
  CHECK(last < 0.8 * first);
}

namespace {

nlohmann::json readJson(const std::string &rel) {
  std::ifstream in(std::string(EVOC_SOURCE_DIR) + "/" + rel);
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

// The weights of MULTITASK_NOTES.md's "formula" (zero: all zeros).
ParamSet fangWeights(const ParamSet &shapes, bool formula) {
  ParamSet p = shapes;
  for (auto &[name, t] : p) {
    int64_t rows = t.shape.at(0), cols = t.shape.size() > 1 ? t.shape[1] : 1;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        double v = 0;
        if (formula && name == "w1")
          v = std::sin(1 + 0.7 * i + 1.3 * j) / std::sqrt(double(cols));
        else if (formula && name == "b1")
          v = 0.1 * std::sin(2 + 0.9 * i);
        else if (formula && name == "w2")
          v = std::sin(3 + 0.5 * i + 1.1 * j) / std::sqrt(64.0);
        else if (formula && name == "b2")
          v = 0.1 * std::sin(4 + 0.3 * i);
        t.data[size_t(i * cols + j)] = v;
      }
  }
  return p;
}

// One of the paper's 2D designs, as stdlib/bodies/fang/ builds it.
Robot fangBody(const std::string &design) {
  std::string lower = design;
  for (auto &ch : lower)
    ch = char(std::tolower(ch));
  sema::CheckedProgram body = checkEvo("stdlib/bodies/fang/" + lower + ".evo");
  REQUIRE(body.cellBody);
  evolve::EvoRng rng(1);
  auto model = app::bodyModel(body);
  return model->express(*model->sample(rng)).robot;
}

} // namespace

TEST_CASE("Validation metric equals the independent reference term by term",
          "[multitask][reference]") {
  Compiled c = compileEvo("examples/multitask_alpaca.evo");
  ModuleInfo info(c.m);
  auto cpu = codegen::compile(c.m, codegen::BackendKind::Cpu);
  for (const char *design : {"Alpaca", "Monster", "Stool"}) {
    Robot robot = fangBody(design);
    TrainOptions o;
    o.steps = c.prog.world.steps;
    o.groundHeight = 0.1;
    o.commands = &c.prog.commands;
    FixedTrainer tr(info, *cpu, robot, o);
    for (bool formula : {false, true}) {
      INFO(design << (formula ? " formula" : " zero"));
      nlohmann::json ref = readJson(std::string("tests/data/multitask/validate_") + design +
                                    (formula ? "_formula" : "_zero") + ".json");
      tr.setParams(fangWeights(tr.params(), formula));
      Validation v = tr.validate();
      REQUIRE(v.valid);
      REQUIRE(v.cases.size() == ref["cases"].size());
      auto close = [](double a, double b) {
        return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b));
      };
      const char *names[] = {"velocity", "height", "crawl"};
      for (size_t k = 0; k < v.cases.size(); ++k) {
        const auto &rc = ref["cases"][k];
        INFO("case " << k);
        CHECK(v.cases[k].commands == std::vector<double>{rc["v"].get<double>(),
                                                         rc["h"].get<double>(),
                                                         rc["c"].get<double>()});
        for (int t = 0; t < 3; ++t)
          CHECK(close(v.cases[k].terms[size_t(t)], rc[names[t]].get<double>()));
      }
      for (int t = 0; t < 3; ++t)
        CHECK(close(v.meanTerms[size_t(t)], ref["means"][names[t]].get<double>()));
      CHECK(close(v.meanLoss, ref["means"]["total"].get<double>()));
    }
  }
}

TEST_CASE("Batch loss and gradient equal the independent reference", "[multitask][reference]") {
  Compiled c = compileEvo("examples/multitask_alpaca.evo");
  ModuleInfo info(c.m);
  auto cpu = codegen::compile(c.m, codegen::BackendKind::Cpu);
  const body::CommandSpec &spec = c.prog.commands;
  REQUIRE(spec.names == std::vector<std::string>{"v", "h", "c"});
  nlohmann::json episodes = readJson("tests/data/multitask/commands_alpaca.json")["episodes"];
  for (const char *design : {"alpaca", "stool"}) {
    INFO(design);
    nlohmann::json ref =
        readJson(std::string("tests/data/multitask/batchgrad_") + design + ".json");
    Population pop(info, {fangBody(design)});
    pop.initParams(0, 1, 0);
    {
      Rollout ro(info, *cpu);
      ro.runInit(pop, 0);
    }
    pop.setParams(0, fangWeights(pop.params(0), true));
    const double B = double(episodes.size());
    REQUIRE(B == ref["batch"].get<double>());
    RolloutConfig rc;
    rc.steps = c.prog.world.steps;
    rc.groundHeight = 0.1;
    double loss = 0;
    std::vector<double> terms(3, 0.0);
    ParamSet grad;
    for (const auto &ep : episodes) {
      CommandTable t;
      for (const auto &row : ep) {
        for (const char *k : {"v", "h", "c"})
          t.values.push_back(row[k].get<double>());
        ++t.rows;
      }
      bindCommands(rc, spec, t);
      Run r = rollout(info, *cpu, pop, rc, true);
      loss += r.loss / B;
      for (int k = 0; k < 3; ++k)
        terms[size_t(k)] += r.terms[size_t(k)] / B;
      ParamSet g = pop.grads(0);
      if (grad.empty())
        grad = g;
      else
        for (auto &[name, tensor] : grad)
          for (size_t i = 0; i < tensor.data.size(); ++i)
            tensor.data[i] += g.at(name).data[i];
    }
    auto close = [](double a, double b) {
      return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b));
    };
    CHECK(close(loss, ref["loss"]["total"].get<double>()));
    const char *names[] = {"velocity", "height", "crawl"};
    for (int k = 0; k < 3; ++k)
      CHECK(close(terms[size_t(k)], ref["loss"][names[k]].get<double>()));
    double gmax = 0;
    for (auto &[name, tensor] : grad)
      for (double &v : tensor.data)
        gmax = std::max(gmax, std::abs(v /= B));
    REQUIRE(gmax > 0);
    int compared = 0;
    for (const auto &[name, tensor] : grad) {
      INFO(name);
      const nlohmann::json &rg = ref["grad"].at(name);
      int64_t cols = tensor.shape.size() > 1 ? tensor.shape[1] : 1;
      REQUIRE(int64_t(rg.size()) == tensor.shape.at(0));
      for (int64_t i = 0; i < tensor.shape[0]; ++i)
        for (int64_t j = 0; j < cols; ++j) {
          double want = cols > 1 || rg[size_t(i)].is_array()
                            ? rg[size_t(i)][size_t(j)].get<double>()
                            : rg[size_t(i)].get<double>();
          double got = tensor.data[size_t(i * cols + j)];
          if (std::abs(got - want) > 1e-8 * gmax)
            FAIL_CHECK(name << "[" << i << "][" << j << "]: " << got << " vs " << want);
          ++compared;
        }
    }
    int want = 0; // every reference entry has been compared
    for (const auto &[name, rg] : ref["grad"].items())
      for (const auto &row : rg)
        want += row.is_array() ? int(row.size()) : 1;
    CHECK(compared == want);
    CHECK(grad.size() == ref["grad"].size());
  }
}

TEST_CASE("Continued episodes start from the previous final states", "[multitask]") {
  Compiled c = compileEvo("tests/data/multitask/gradcheck.evo");
  ModuleInfo info(c.m);
  auto cpu = codegen::compile(c.m, codegen::BackendKind::Cpu);
  Continuation cont;
  cont.after = 1;
  cont.resetEvery = 2;
  cont.resetEveryMax = 3;
  cont.growEvery = 2;
  // The schedule: afresh before `after`; then one in every step(it) resets.
  CHECK(!cont.continues(0, 0));
  CHECK(cont.step(1) == 2);
  CHECK(cont.step(2) == 2);
  CHECK(cont.step(3) == 3);
  CHECK(cont.step(100) == 3);
  CHECK(cont.continues(1, 0));
  CHECK(!cont.continues(1, 1));
  CHECK(!cont.continues(3, 0));
  CHECK(cont.continues(3, 1));
  CHECK(!cont.continues(3, 3));

  TrainOptions o = batchOptions(c);
  o.continuation = cont;
  FixedTrainer tr(info, *cpu, ladder(), o);
  REQUIRE(tr.iterate(0).valid);
  std::vector<std::string> finals = tr.carry().save();
  REQUIRE(finals.size() == 3);
  ParamSet w1 = tr.params();
  BatchStep s1 = tr.iterate(1); // episodes 0 and 2 continue, 1 starts afresh

  // The same episodes by hand, with the weights after iteration 0.
  Population pop(info, {ladder()});
  pop.initParams(0, 3, 0);
  {
    Rollout ro(info, *cpu);
    ro.runInit(pop, 0);
  }
  pop.setParams(0, w1);
  EpisodeCarry hand(cont, 3, pop.layout(0).stateBytes());
  hand.load(finals);
  double mean = 0;
  std::vector<double> fresh;
  for (int b = 0; b < 3; ++b) {
    RolloutConfig rc = rolloutConfig(o);
    CommandTable t = drawCommands(c.prog.commands, o.steps, episodeStream(3, 0, 1, b));
    bindCommands(rc, c.prog.commands, t);
    RolloutConfig plain = rc;
    hand.bind(rc, 1, b);
    CHECK((rc.startState != nullptr) == (b != 1));
    double l = rollout(info, *cpu, pop, rc, false).loss;
    mean += l / 3;
    fresh.push_back(rollout(info, *cpu, pop, plain, false).loss);
    if (b != 1)
      CHECK(l != fresh.back()); // a continued episode is not a fresh one
    else
      CHECK(l == fresh.back());
  }
  CHECK(test::close(s1.loss, mean, 1e-12, 1e-15));
  // A resumed trainer (weights, optimiser, carried states) continues the same.
  FixedTrainer again(info, *cpu, ladder(), o);
  again.optimizer().load(tr.optimizer().save()); // after iteration 1: compare iteration 2
  again.carry().load(tr.carry().save());
  again.setParams(tr.params());
  CHECK(again.iterate(2).loss == tr.iterate(2).loss);
}

TEST_CASE("A vector command equals its components as scalar commands", "[multitask]") {
  Compiled vec = compileEvo("tests/data/multitask/vector_commands.evo");
  const body::CommandSpec &spec = vec.prog.commands;
  REQUIRE(spec.names == std::vector<std::string>{"d", "s"});
  REQUIRE(spec.comps == std::vector<int>{2, 1});
  REQUIRE(spec.columns() == 3);
  REQUIRE(spec.gridCases() == 6);
  CommandTable g1 = gridCommands(spec, 40, 1), g4 = gridCommands(spec, 40, 4);
  CHECK(std::vector<double>(g1.values.begin(), g1.values.begin() + 3) ==
        std::vector<double>{-0.04, 0, 1});
  CHECK(std::vector<double>(g4.values.begin(), g4.values.begin() + 3) ==
        std::vector<double>{0, 0.03, 0});
  for (uint64_t stream = 1; stream < 40; ++stream) {
    CommandTable t = drawCommands(spec, 40, stream);
    REQUIRE(t.rows == 2);
    for (int64_t r = 0; r < t.rows; ++r) {
      const double *row = &t.values[size_t(r * 3)];
      if (t.tasks[size_t(r)] == 0)
        CHECK((row[1] == 0 && row[2] == 1 && std::abs(row[0]) <= 0.05));
      else
        CHECK((row[0] == 0 && row[1] >= 0.02 && row[1] <= 0.05 && row[2] >= 0 && row[2] <= 2));
    }
  }

  // The same experiment with d written as two scalar commands dx, dy.
  std::string text;
  {
    std::ifstream in(std::string(EVOC_SOURCE_DIR) + "/tests/data/multitask/vector_commands.evo");
    std::stringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  auto replace = [&](const std::string &from, const std::string &to) {
    size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  };
  replace("d = vec2(uniform(-0.05, 0.05), 0);", "dx = uniform(-0.05, 0.05); dy = 0;");
  replace("d = vec2(0, 0.02 + uniform(0, 0.03));", "dx = 0; dy = 0.02 + uniform(0, 0.03);");
  replace("d = vec2(-0.04, 0), vec2(0.04, 0), vec2(0, 0.03);", "dx = -0.04, 0.04, 0; dy = 0;");
  replace("repeat(2, d / 0.05)", "dx / 0.05, dy / 0.05, dx / 0.05, dy / 0.05");
  replace("d[t - 5].x", "dx[t - 5]");
  replace("d[t - 5].y", "dy[t - 5]");
  const std::string path = (std::filesystem::temp_directory_path() / "evoc-scalar-cmds.evo");
  std::ofstream(path) << text;
  app::CompiledFile c = app::compileFile(path);
  const auto *prog = &c.program;
  const ir::Module *m = &c.module;
  REQUIRE(prog->commands.columns() == 3);

  ModuleInfo vi(vec.m), si(*m);
  auto vcpu = codegen::compile(vec.m, codegen::BackendKind::Cpu);
  auto scpu = codegen::compile(*m, codegen::BackendKind::Cpu);
  auto vinterp = codegen::compile(vec.m, codegen::BackendKind::Interp);
  Population vp(vi, {ladder()}), sp(si, {ladder()});
  vp.initParams(0, 4, 0);
  sp.initParams(0, 4, 0);
  sp.setParams(0, vp.params(0));
  RolloutConfig rc;
  rc.steps = vec.prog.world.steps;
  rc.groundHeight = 0.1;
  for (uint64_t stream : {3ull, 8ull}) {
    CommandTable t = drawCommands(spec, rc.steps, stream);
    RolloutConfig a = rc, b = rc;
    bindCommands(a, spec, t);
    bindCommands(b, prog->commands, t); // the same columns: dx, dy, s
    Run rv = rollout(vi, *vcpu, vp, a, true), rs = rollout(si, *scpu, sp, b, true);
    Run ri = rollout(vi, *vinterp, vp, a, true);
    CHECK(rv.loss > 0);
    CHECK(std::abs(rv.loss - rs.loss) <= 1e-14 * rs.loss);
    CHECK(std::abs(rv.loss - ri.loss) <= 1e-9 * rs.loss);
    REQUIRE(rv.grad.size() == rs.grad.size());
    double gmax = 0;
    for (double x : rs.grad)
      gmax = std::max(gmax, std::abs(x));
    REQUIRE(gmax > 0);
    for (size_t i = 0; i < rv.grad.size(); ++i) {
      CHECK(std::abs(rv.grad[i] - rs.grad[i]) <= 1e-12 * gmax);
      CHECK(std::abs(rv.grad[i] - ri.grad[i]) <= 1e-9 * gmax);
    }
  }
}

namespace {

// Iterations of a batch of 6 under `exe`, or 4 of them in lanes on
// `lanesExe` and 2 one at a time: the batches and the weights after.
struct Trained {
  std::vector<BatchStep> steps;
  ParamSet params;
};

Trained trainBatches(const Compiled &c, const Robot &body, const codegen::Executable &exe,
                     const codegen::Executable *lanesExe, int lanes) {
  ModuleInfo info(c.m);
  TrainOptions o = batchOptions(c);
  o.batch = 6;
  o.threads = 2;
  o.continuation.after = 1; // from iteration 1 on, episodes continue where they stopped
  o.continuation.resetEvery = 2;
  o.continuation.resetEveryMax = 2;
  FixedTrainer tr(info, exe, body, o, lanesExe, lanes);
  Trained t;
  for (int it = 0; it < 3; ++it) {
    t.steps.push_back(tr.iterate(it));
    REQUIRE(t.steps.back().valid);
  }
  t.params = tr.params();
  return t;
}

} // namespace

TEST_CASE("A batch in lanes trains as one episode at a time does, bit for bit in strict mode "
          "(f64 and f32)",
          "[multitask][lanes]") {
  for (const char *file : {"tests/data/multitask/gradcheck.evo", "examples/multitask_alpaca.evo"}) {
    INFO(file);
    Compiled c = compileEvo(file);
    const bool alpaca = std::string(file).find("alpaca") != std::string::npos;
    if (alpaca)
      c.prog.world.steps = 300; // three command periods of 100 steps, in less time
    const Robot body = alpaca ? fangBody("Alpaca") : ladder();
    for (int mode = 0; mode < 3; ++mode) { // strict f64, fast f64, strict f32
      const codegen::cpu::FpMode fp =
          mode == 1 ? codegen::cpu::FpMode::Fast : codegen::cpu::FpMode::Strict;
      const bool strict = fp == codegen::cpu::FpMode::Strict;
      c.m.precision = mode == 2 ? ir::Precision::F32 : ir::Precision::F64;
      INFO((strict ? "strict" : "fast") << (mode == 2 ? " f32" : " f64"));
      codegen::CompileOptions co;
      co.useCache = false;
      auto one = codegen::cpu::compileCpu(c.m, co, fp);
      co.lanes = 4;
      auto four = codegen::cpu::compileCpu(c.m, co, fp);
      Trained a = trainBatches(c, body, *one, nullptr, 1);
      Trained b = trainBatches(c, body, *one, four.get(), 4);
      // Strict: the same numbers (== also takes -0 for 0, which a lane
      // whose window seed is 0 may add where one episode skips the call).
      const double tol = strict ? 0.0 : 1e-9;
      for (size_t it = 0; it < a.steps.size(); ++it) {
        INFO("iteration " << it);
        CHECK(test::close(b.steps[it].loss, a.steps[it].loss, tol, 0));
        CHECK(test::close(b.steps[it].gradNorm, a.steps[it].gradNorm, tol, 0));
        REQUIRE(b.steps[it].terms.size() == a.steps[it].terms.size());
        for (size_t k = 0; k < a.steps[it].terms.size(); ++k)
          CHECK(test::close(b.steps[it].terms[k], a.steps[it].terms[k], tol, 0));
        CHECK(b.steps[it].robotSteps == a.steps[it].robotSteps);
      }
      for (const auto &[name, t] : a.params) {
        const auto &u = b.params.at(name).data;
        REQUIRE(u.size() == t.data.size());
        for (size_t i = 0; i < u.size(); ++i)
          CHECK(test::close(u[i], t.data[i], strict ? 0.0 : 1e-7, strict ? 0.0 : 1e-9));
      }
    }
  }
}
