// `evoc render RUN_DIR [--video OUT.mp4|OUT.gif] [--design ID]`: the run's
// report.html (or a video of a gait), recomputed from the saved weights with
// the experiment of its resolved.evo; `evoc render BEST.json` and `evoc
// render ROBOTS.json PARAMS.json [--evo FILE]` for one robot.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "app/BodyModels.h"
#include "app/Driver.h"
#include "app/ReportSupport.h"
#include "app/Session.h"
#include "core/JsonIO.h"
#include "evolve/record/RunDir.h"
#include "report/Video.h"
#include "support/Error.h"
#include "support/OptionTable.h"

namespace evoc::app {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct RenderArgs {
  std::vector<std::string> paths;
  std::string video, out, evo;
  int64_t design = -1;
};

bool parseRenderArgs(const std::vector<std::string> &args, RenderArgs &a) {
  OptionTable t("evoc render");
  t.text("--video", a.video)
      .text("--out", a.out)
      .text("--evo", a.evo)
      .custom("--design",
              [&a](const std::string &v) {
                if (v.empty() || v.size() > 18 ||
                    v.find_first_not_of("0123456789") != std::string::npos)
                  return "--design expects a design id (a whole number), got '" + v + "'";
                a.design = std::stoll(v);
                return std::string();
              })
      .positionals(a.paths);
  if (!t.parse(args))
    return false;
  if (a.paths.empty() || a.paths.size() > 2) {
    std::fprintf(stderr, "usage: evoc render RUN_DIR [--video OUT.mp4|OUT.gif] [--design ID]\n"
                         "       evoc render BEST.json | ROBOTS.json PARAMS.json [--evo FILE] "
                         "[--out PAGE.html] [--video OUT]\n");
    return false;
  }
  return true;
}

} // namespace

std::unique_ptr<Experiment> loadExperiment(const fs::path &source,
                                           std::vector<std::string> &notes) {
  CommonOptions opts;
  opts.warnings = false;
  std::string tmpPath, text = evolve::readTextFile(source);
  // A run's resolved.evo ("// evoc run FILE", then every module after a
  // "// ----- PATH -----" line, imports first) and the --set options as
  // comments: drop the imports, re-apply the options.
  const bool resolved =
      text.rfind("// evoc ", 0) == 0 && text.find("\n// ----- ") != std::string::npos;
  if (resolved) {
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line) && line.rfind("//", 0) == 0;)
      if (line.rfind("// --set ", 0) == 0 && line.find('=') != std::string::npos) {
        const size_t eq = line.find('=');
        opts.check.overrides.push_back({line.substr(9, eq - 9), line.substr(eq + 1)});
      }
    text = std::regex_replace(text, std::regex(R"(\bimport\s+"[^"]*"\s*;)"), "");
    char name[] = "/tmp/evoc-render-XXXXXX.evo";
    int fd = mkstemps(name, 4);
    if (fd < 0)
      throw Error("cannot create a temporary file for the experiment");
    FILE *f = fdopen(fd, "w");
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
    tmpPath = opts.file = name;
  } else {
    opts.file = source.string();
  }
  auto e = std::make_unique<Experiment>();
  try {
    e->session = std::make_unique<Session>(opts, "cpu");
  } catch (...) {
    if (!tmpPath.empty())
      fs::remove(tmpPath);
    throw;
  }
  if (!tmpPath.empty())
    fs::remove(tmpPath);
  if (!e->session->ok()) {
    notes.push_back(fmt::format("the experiment ({}) does not compile with this evoc (errors "
                                "above); gaits show the rest pose",
                                source.string()));
    return nullptr;
  }
  e->train = e->session->trainOptions();
  e->info = std::make_unique<runtime::ModuleInfo>(e->session->module());
  e->world = reportWorld(e->session->program(), e->train);
  return e;
}

namespace {

void printNotes(const std::vector<std::string> &notes) {
  for (const auto &n : notes)
    std::fprintf(stderr, "evoc render: note: %s\n", n.c_str());
}

int renderEvolveRun(const fs::path &dir, const RenderArgs &a, Experiment *e,
                    std::vector<std::string> notes) {
  report::ReportContext ctx;
  ctx.dir = dir;
  if (e) {
    ctx.world = e->world;
    ctx.model = bodyModel(e->session->program());
    ctx.trajectory = reportTrajectory(*e->info, e->session->executable(), e->train,
                                      controllerOutputField(e->session->program()));
  }
  report::RunReport rep(ctx);
  if (!a.video.empty()) {
    const uint64_t id = a.design >= 0 ? uint64_t(a.design) : rep.bestId();
    report::Motion m = rep.designMotion(id, 200);
    report::writeVideo(ctx.world, m, a.video);
    printNotes(rep.missing());
    std::printf("evoc render: %s (design %llu, %zu frames)\n", a.video.c_str(),
                (unsigned long long)id, m.frames.size());
    return 0;
  }
  auto t0 = std::chrono::steady_clock::now();
  fs::path out = rep.write();
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  notes.insert(notes.end(), rep.missing().begin(), rep.missing().end());
  printNotes(notes);
  std::printf("evoc render: %s (%.0f KB in %.2f s)\n", out.c_str(),
              double(fs::file_size(out)) / 1024.0, secs);
  return 0;
}

// A robot and its weights from BEST.json (robot + "params") or ROBOTS.json
// + PARAMS.json (robot --design, default 0).
std::pair<runtime::Robot, json> oneRobot(const RenderArgs &a, int dim) {
  const size_t pick = a.design >= 0 ? size_t(a.design) : 0;
  json first = json::parse(evolve::readTextFile(a.paths[0]));
  // BEST.json is one robot entry (points, springs, params, ...), not a list.
  const json robotsDoc = first.is_object() && !first.contains("robots")
                             ? json{{"robots", json::array({first})}}
                             : first;
  auto robots = runtime::parseRobotsJson(robotsDoc.dump(), a.paths[0], dim);
  if (pick >= robots.size())
    throw Error(
        fmt::format("{} holds {} robots; there is no robot {}", a.paths[0], robots.size(), pick));
  json params;
  if (a.paths.size() == 2) {
    json doc = json::parse(evolve::readTextFile(a.paths[1]));
    if (!doc.contains("params") || !doc["params"].is_array() || pick >= doc["params"].size())
      throw Error(fmt::format("{} has no parameter set {} (\"params\": [...])", a.paths[1], pick));
    params = doc["params"][pick];
  } else if (first.contains("params")) {
    params = first["params"];
  }
  return {robots[pick], params};
}

int renderOneRobot(const RenderArgs &a, Experiment *e, std::vector<std::string> notes) {
  const fs::path src = a.paths[0];
  auto [robot, params] = oneRobot(a, e ? e->world.dim : 0);
  report::World world = e ? e->world : report::World{};
  report::Motion m;
  m.label = src.filename().string();
  m.robot = robot;
  m.times = report::sampleTimes(world.steps, 200);
  if (e && params.is_object())
    m.frames = reportTrajectory(*e->info, e->session->executable(), e->train,
                                controllerOutputField(e->session->program()))(
        robot, params, m.times, &m.outputs, &m.objects);
  else
    notes.push_back(params.is_object() ? "no experiment to simulate it with: the rest pose"
                                       : "no weights (\"params\"): the rest pose");
  if (m.frames.empty()) {
    m.frames.assign(1, robot.points);
    m.times.assign(1, 0);
    m.objects.clear();
  }
  printNotes(notes);
  if (!a.video.empty()) {
    report::writeVideo(world, m, a.video);
    std::printf("evoc render: %s (%zu frames)\n", a.video.c_str(), m.frames.size());
    return 0;
  }
  std::vector<double> losses;
  json doc = json::parse(evolve::readTextFile(src));
  if (doc.contains("losses") && doc["losses"].is_array())
    for (const auto &l : doc["losses"])
      losses.push_back(l.is_number() ? l.get<double>() : NAN);
  fs::path out = a.out.empty() ? fs::path(src).replace_extension(".html") : fs::path(a.out);
  evolve::writeFileAtomic(out, report::singleRobotPage(world, m, losses, src.string()));
  std::printf("evoc render: %s\n", out.c_str());
  return 0;
}

int runRender(const std::vector<std::string> &args) {
  RenderArgs a;
  if (!parseRenderArgs(args, a))
    return 2;
  try {
    for (const auto &p : a.paths)
      if (!fs::exists(p))
        throw Error(fmt::format("'{}' does not exist; give a run directory (evoc run's --out), "
                                "a BEST.json, or ROBOTS.json and PARAMS.json",
                                p));
    const fs::path first = a.paths[0];
    const bool isDir = fs::is_directory(first);
    if (isDir && a.paths.size() > 1)
      throw Error("give one run directory, or a ROBOTS.json and a PARAMS.json");
    std::vector<std::string> notes;
    const fs::path evo = !a.evo.empty() ? fs::path(a.evo)
                         : isDir        ? first / "resolved.evo"
                                        : first.parent_path() / "resolved.evo";
    std::unique_ptr<Experiment> e;
    if (fs::exists(evo))
      e = loadExperiment(evo, notes);
    else
      notes.push_back(fmt::format("{} is missing, so gaits cannot be recomputed (give the "
                                  "experiment with --evo FILE)",
                                  evo.string()));
    if (!isDir)
      return renderOneRobot(a, e.get(), notes);
    if (fs::exists(first / "state.json") &&
        json::parse(evolve::readTextFile(first / "state.json")).value("kind", "") == "train") {
      if (!e)
        throw Error(fmt::format("'{}' is a training run, and its experiment cannot be "
                                "compiled, so there is nothing to draw",
                                first.string()));
      fs::path out =
          writeTrainReport(first, *e->session, *e->info, e->train, a.video, a.design, notes);
      printNotes(notes);
      std::printf("evoc render: %s\n", out.c_str());
      return 0;
    }
    return renderEvolveRun(first, a, e.get(), notes);
  } catch (const Error &e) {
    std::fprintf(stderr, "evoc render: error: %s\n", e.what());
    return 1;
  } catch (const json::exception &e) {
    std::fprintf(stderr, "evoc render: error: a damaged JSON file: %s\n", e.what());
    return 1;
  }
}

[[maybe_unused]] bool registered = addSubcommand(
    {"render", "draw a run's report.html (or a video of a gait) from its saved weights", runRender,
     "render RUN_DIR [--video OUT.mp4|OUT.gif] [--design ID]\n"
     "       evoc render BEST.json | ROBOTS.json PARAMS.json [--evo FILE] [--out PAGE.html]\n"
     "                   [--video OUT]\n"
     "  --video OUT        a video of the gait instead of the page (needs ffmpeg)\n"
     "  --design ID        another design of the run than its best\n"
     "  --evo FILE         the experiment of a robot outside a run directory\n"
     "  --out PAGE.html    where the page goes (default: beside the robot's file)",
     /*commonOptions=*/false});

} // namespace
} // namespace evoc::app
