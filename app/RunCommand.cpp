// `evoc run FILE [--backend B] [--out DIR] [--resume DIR] [--threads N]
// [--set key=value ...]`: evolve bodies and learn their controllers, writing
// a resumable run directory. Started by mpirun / srun as N ranks (an MPI
// build, runtime/mpi), rank 0 runs the engine and the others evaluate their
// share of every generation (docs/cluster.md).
#include <fmt/format.h>

#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "app/BodyModels.h"
#include "app/Driver.h"
#include "app/ReportSupport.h"
#include "app/Session.h"
#include "core/Device.h"
#include "evolve/engine/Evolution.h"
#include "evolve/engine/MapElites.h"
#include "evolve/train/RunMemory.h"
#include "evolve/train/TrainEvaluate.h"
#include "frontend/AstDump.h"
#include "mpi/Ranks.h"
#include "support/Error.h"
#include "support/Optimizers.h"

namespace evoc::app {
namespace {

/// Maps the checked .evo settings onto the engine's configuration.
evolve::EvolutionConfig evolutionConfig(const sema::CheckedProgram &p,
                                        const runtime::TrainOptions &train) {
  evolve::EvolutionConfig c;
  c.body = bodyModel(p);
  c.population = int(p.evolve.population);
  c.offspring = int(p.evolve.offspring); // 0: one per parent
  c.generations = int(p.evolve.generations);
  c.seed = p.evolve.seed;
  c.fitness.kind = p.evolve.fitness.kind;
  c.fitness.invalid = p.evolve.invalid;
  using Kind = sema::Select::Kind;
  switch (p.evolve.select.kind) {
  case Kind::Truncation:
    c.selection.kind = evolve::SelectionSpec::Kind::Truncation;
    break;
  case Kind::Random:
    c.selection.kind = evolve::SelectionSpec::Kind::Random;
    break;
  case Kind::Tournament:
    c.selection.kind = evolve::SelectionSpec::Kind::Tournament;
    if (p.evolve.select.tournamentSize > 0)
      c.selection.tournamentSize = int(p.evolve.select.tournamentSize);
    break;
  case Kind::MapElites: {
    c.selection.kind = evolve::SelectionSpec::Kind::MapElites;
    c.selection.qdOffset = p.evolve.select.qdOffset;
    for (const auto &d : p.evolve.select.descriptors)
      c.selection.descriptors.push_back({d.kind, d.term, d.lo, d.hi, int(d.bins)});
    break;
  }
  }
  // Forward steps per design: every iteration's rollout, and with updates one
  // more forward-only rollout of the final weights (as ELDiR;
  // docs/evolution.md, "ELDiR controller, learning and fitness").
  c.inheritWeights = p.evolve.learn.inheritWeights;
  c.robotStepsPerDesign =
      double(train.steps - 1) * (train.iterations > 0 ? train.iterations + 1 : 1);
  return c;
}

/// Holds std::cerr in a string while it lives (ranks other than 0 compile
/// quietly: rank 0 speaks for them all, and prints a rank's text only when
/// that rank alone failed).
class QuietErrors {
public:
  explicit QuietErrors(bool on) {
    if (on)
      saved_ = std::cerr.rdbuf(text_.rdbuf());
  }
  ~QuietErrors() { restore(); }
  QuietErrors(const QuietErrors &) = delete;
  QuietErrors &operator=(const QuietErrors &) = delete;
  void restore() {
    if (saved_)
      std::cerr.rdbuf(saved_);
    saved_ = nullptr;
  }
  std::string text() const { return text_.str(); }

private:
  std::ostringstream text_;
  std::streambuf *saved_ = nullptr;
};

std::string gib(int64_t bytes) { return fmt::format("{:.1f} GiB", double(bytes) / (1 << 30)); }

/// False, with a located error at evolve.population, when the run's
/// estimated peak (evolve::estimateRunMemory) exceeds the memory this
/// process can have: refused before anything is allocated or written.
bool fitsInMemory(Session &s, const evolve::EvolutionConfig &config,
                  const runtime::ModuleInfo &info, const runtime::TrainOptions &train) {
  const int64_t avail = evolve::availableMemory();
  if (avail < 0)
    return true; // nothing known to compare with
  const evolve::RunMemory need = evolve::estimateRunMemory(config, info, train.sliceBytes);
  if (need.total() <= avail)
    return true;
  const int64_t perMember = need.perDesign * need.designs / std::max<int64_t>(1, config.population);
  const int64_t most =
      std::max<int64_t>(0, (avail - need.training) / std::max<int64_t>(1, perMember));
  const std::string held = fmt::format(
      "needs about {} of memory ({} designs held at once, {} KiB each, and {} for training), "
      "but this process can have {} (the machine's available memory and swap, within its "
      "address-space limit, ulimit -v)",
      gib(need.total()), need.designs, need.perDesign / 1024, gib(need.training), gib(avail));
  if (config.selection.kind == evolve::SelectionSpec::Kind::MapElites)
    s.error(s.program().evolve.populationAt,
            fmt::format("select = map_elites keeps up to one design in each of its {} cells, so "
                        "this run {}; use fewer bins or run where there is more memory",
                        evolve::cellCount(config.selection.descriptors), held));
  else
    s.error(s.program().evolve.populationAt,
            fmt::format("evolve.population = {} {}; lower evolve.population (to at most about {} "
                        "here) or run where there is more memory",
                        config.population, held, most));
  return false;
}

/// The program as the resume fingerprint sees it: the checked AST of every
/// module (overrides applied) without source ranges or module paths, and
/// without evolve's `generations`, the one setting a resume may change. So
/// reformatting a file, editing its comments or moving it keeps a run
/// resumable; any change to what it computes does not.
std::string experimentText(const sema::CheckedProgram &p) {
  std::ostringstream dump;
  ast::dumpProgram(*p.ast, dump);
  static const std::regex ranges("<[0-9]+:[0-9]+-[0-9]+:[0-9]+>");
  std::istringstream lines(std::regex_replace(dump.str(), ranges, ""));
  std::string out;
  size_t skipDeeper = std::string::npos; // inside a `generations` setting
  for (std::string l; std::getline(lines, l);) {
    const size_t indent = std::min(l.find_first_not_of(' '), l.size());
    if (skipDeeper != std::string::npos && indent > skipDeeper)
      continue;
    skipDeeper = std::string::npos;
    if (l.compare(indent, 20, "Setting generations ") == 0) {
      skipDeeper = indent;
      continue;
    }
    // Where the files are is not the experiment: not a module's path, not
    // the file an import resolved to (the stdlib of another install).
    if (l.rfind("Module ", 0) == 0)
      l = "Module";
    else if (l.compare(indent, 7, "Import ") == 0)
      l = l.substr(0, l.find(" -> "));
    out += l + '\n';
  }
  return out;
}

/// What a resume must match beyond the engine's settings: the training
/// settings by name, then a hash of the program as checked (experimentText:
/// every module's AST with the overrides applied, without its layout,
/// comments and `generations`), which covers the loss and all else the text
/// sets.
nlohmann::json experimentFingerprint(const CommonOptions &opts, const sema::CheckedProgram &p,
                                     const runtime::TrainOptions &train) {
  std::string text = experimentText(p);
  for (const auto &[k, v] : opts.check.overrides)
    if (k != "evolve.generations")
      text += k + "=" + v + '\0';
  // A terrain file's heights, so a resume notices an edited file.
  for (const auto &[x, h] : train.terrain.profile)
    text += fmt::format("{:.17g},{:.17g};", x, h);
  for (const auto *v : {&train.terrain.field.xs, &train.terrain.field.ys, &train.terrain.field.h})
    for (double d : *v)
      text += fmt::format("{:.17g};", d);
  uint64_t h = 1469598103934665603ull; // FNV-1a
  for (unsigned char ch : text)
    h = (h ^ ch) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
  const runtime::OptimizerConfig &o = train.optimizer;
  return {{"steps", train.steps},
          {"dt", p.world.dt},
          {"iterations", train.iterations},
          {"optimizer",
           {{"kind", optimizerName(o.kind)},
            {"step", o.step},
            {"lr", o.lr},
            {"beta1", o.beta1},
            {"beta2", o.beta2},
            {"eps", o.eps}}},
          {"ground_height", train.groundHeight},
          {"text_hash", hex}};
}

/// The command that resumes the run in `dir` with the same overrides.
std::string resumeCommand(const CommonOptions &opts, const std::string &dir) {
  std::string hint = fmt::format("mpirun -np N evoc run {} --resume {}", opts.file, dir);
  for (const auto &[k, v] : opts.check.overrides)
    hint += " --set " + k + "=" + v;
  return hint;
}

void printSummary(const evolve::RunSummary &sum, const std::string &dir) {
  std::printf("evoc run: %d generations, %llu designs in %.1f s; best fitness %.6g "
              "(design %llu)\n"
              "results: %s/log.jsonl, %s/best.json; pictures: %s/*.svg\n"
              "report: %s/report.html\n",
              sum.lastGeneration + 1, (unsigned long long)sum.designsEvaluated, sum.seconds,
              sum.bestFitness, (unsigned long long)sum.bestId, dir.c_str(), dir.c_str(),
              dir.c_str(), dir.c_str());
}

int runRun(const std::vector<std::string> &args) {
  CommonOptions opts;
  if (!parseCommonOptions(args, opts))
    return 2;
  RunArgs a;
  if (!parseRunArgs(opts.rest, "evoc run", /*robot=*/false, a))
    return 2;
  std::unique_ptr<mpi::Ranks> rankSet;
  try {
    rankSet = std::make_unique<mpi::Ranks>();
  } catch (const Error &e) {
    std::fprintf(stderr, "evoc run: error: %s\n", e.what());
    return 1;
  }
  mpi::Ranks &ranks = *rankSet;
  bool started = false; // every rank has compiled the experiment (Ranks::agree)
  QuietErrors quiet(!ranks.root());
  try {
    opts.check.evolveBody = true; // a fixed body is refused where it is declared
    std::string gpu = a.backend == "cuda" ? ranks.pickGpu() : "";
    Session s(opts, a.backend, /*requireExperiment=*/true);
    if (!s.ok()) {
      quiet.restore();
      ranks.agree(false, quiet.text());
      return 1;
    }
    const sema::CheckedProgram &p = s.program();
    if (p.hasTrain && ranks.size() > 1)
      throw Error("a `train` block trains one body on one process; run it without mpirun");
    if (p.hasTrain) // a `train` block: one fixed body, no evolution
      return runTrainProgram(opts, opts.rest, &s);
    runtime::TrainOptions train = s.trainOptions();
    train.threads = ranks.threads(a.threads);
    runtime::ModuleInfo info(s.module());
    evolve::EvolutionConfig config = evolutionConfig(p, train);

    // The device refuses what it cannot train before the run directory exists.
    std::shared_ptr<runtime::TrainDevice> device = s.trainDevice(info, train.threads);
    device->check(train);
    if (ranks.root() && !fitsInMemory(s, config, info, train)) {
      quiet.restore();
      ranks.agree(false, quiet.text());
      return 1;
    }
    evolve::EvaluateFn evaluate = evolve::trainEvaluate(info, device, train, config.fitness);
    quiet.restore();
    if (!gpu.empty())
      std::fprintf(stderr, "evoc run: %s: %s\n", gpu.c_str(), device->name().c_str());
    if (!ranks.agree(true, ""))
      return 1;
    started = true;
    if (!ranks.root())
      return ranks.serve(evaluate);

    evolve::RunOptions ro;
    ro.resume = !a.resume.empty();
    ro.dir = ro.resume ? a.resume : (a.out.empty() ? defaultRunDir(opts.file) : a.out);
    ranks.setResumeHint(resumeCommand(opts, ro.dir.string()));
    // The experiment as run: every file it imports, then the main file, and
    // the overrides (applied by the checker) as comments.
    ro.resolvedSource = resolvedSource("evoc run", opts, p);
    config.experiment = experimentFingerprint(opts, p, train);
    int64_t last = train.steps - 1;
    ro.gait = evolve::trainGait(info, s.executable(), train, {0, last / 3, 2 * last / 3, last});
    ro.terrain = train.terrain;
    // report.html, refreshed after every generation; a report that fails is
    // worth a warning, never the run.
    report::ReportContext rc;
    rc.dir = ro.dir;
    rc.world = reportWorld(p, train);
    rc.model = config.body;
    rc.trajectory = reportTrajectory(info, s.executable(), train, controllerOutputField(p));
    report::RunReport rep(rc);
    bool warned = false;
    ro.afterGeneration = [&] {
      try {
        rep.write();
      } catch (const std::exception &e) {
        if (!warned)
          std::fprintf(stderr, "evoc run: warning: report.html not written: %s\n", e.what());
        warned = true;
      }
      if (runHook())
        runHook()(); // may stop the run (Python's Ctrl-C), which resumes from here
    };
    evolve::RunSummary sum = evolve::runEvolution(config, ranks.spread(evaluate), ro);
    ranks.finish(true);
    if (std::string line = ranks.statsLine(); !line.empty())
      std::fprintf(stderr, "%s\n", line.c_str());
    printSummary(sum, ro.dir.string());
    return 0;
  } catch (const Error &e) {
    quiet.restore();
    if (!started) {
      ranks.agree(false, e.what());
      if (!ranks.root())
        return 1; // rank 0 tells why
    }
    ranks.finish(false);
    if (ranks.size() > 1 && !ranks.root())
      std::fprintf(stderr, "evoc run: error (rank %d): %s\n", ranks.rank(), e.what());
    else
      std::fprintf(stderr, "evoc run: error: %s\n", e.what());
    return 1;
  }
}

[[maybe_unused]] bool registered = addSubcommand(
    {"run", "evolve bodies and learn their controllers; write a resumable run directory", runRun,
     "run FILE.evo [--out DIR | --resume DIR] [--backend B] [--threads N] [options]\n"
     "  --out DIR          the run directory to create (default: runs/<file name>)\n"
     "  --resume DIR       continue the run in DIR (only evolve.generations may change)\n"
     "  --backend B        cpu (default), interp (the IR interpreter) or cuda\n"
     "  --threads N        worker threads (0, the default: one per core)"});

} // namespace
} // namespace evoc::app
