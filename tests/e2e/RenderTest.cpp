// `evoc render` end to end, through the real binary: the report.html that
// `evoc run` leaves and that render rewrites (its data: every generation,
// moving gaits, gallery, lineage, learning curves), partial and killed run
// directories, one robot, a training run's validation cases, videos and the
// errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "EvocProcess.h"
#include "evolve/record/GaitLook.h"
#include "evolve/record/Svg.h"
#include "report/Report.h"
#include "report/Video.h"

namespace fs = std::filesystem;
using namespace evoc::test;
using nlohmann::json;

namespace {

// The page's data document (the JSON in <script id="data">), or another of
// its JSON scripts.
json pageData(const fs::path &page, const std::string &id = "data") {
  const std::string html = readText(page);
  const std::string open = "<script id=\"" + id + "\" type=\"application/json\">";
  size_t a = html.find(open);
  REQUIRE(a != std::string::npos);
  a += open.size();
  size_t b = html.find("</script>", a);
  REQUIRE(b != std::string::npos);
  return json::parse(html.substr(a, b - a));
}

const fs::path &smallRun() { // one small run shared by the cases below
  static fs::path dir = [] {
    fs::path d = freshDir("render-run");
    REQUIRE(runEvoc({"run", std::string(EVOC_SOURCE_DIR) + "/examples/eldir_small.evo", "--out",
                     d.string(), "--set", "evolve.population=6", "--set", "evolve.generations=3",
                     "--set", "world.steps=200", "--set", "evolve.learn.iterations=4", "--threads",
                     "2"}) == 0);
    return d;
  }();
  return dir;
}

bool moves(const json &motion) { // some frame differs from the first
  const auto &f = motion.at("f");
  for (const auto &row : f)
    if (row != f.front())
      return true;
  return false;
}

fs::path copyRun(const std::string &name) {
  fs::path d = freshDir(name);
  fs::copy(smallRun(), d, fs::copy_options::recursive);
  fs::remove(d / "report.html");
  return d;
}

} // namespace

TEST_CASE("evoc run leaves a report.html; evoc render rewrites it with every part", "[render]") {
  const fs::path &dir = smallRun();
  REQUIRE(fs::exists(dir / "report.html")); // refreshed by the run itself
  json d = pageData(dir / "report.html");
  CHECK(d["generations"].size() == 3);
  fs::remove(dir / "report.html");
  std::string err;
  REQUIRE(runEvocErr({"render", dir.string()}, err) == 0);
  REQUIRE(fs::exists(dir / "report.html"));
  d = pageData(dir / "report.html");
  CHECK(d["missing"].empty());
  REQUIRE(d["generations"].size() == 3);
  for (const auto &g : d["generations"]) {
    CHECK(g["max"].is_number());
    CHECK(g["gain"].is_number());
    CHECK(g["mono"].is_number());
    CHECK(g["cv"].is_number());
  }
  REQUIRE(d.contains("best"));
  const json &best = d["motions"][d["best"].get<size_t>()];
  CHECK(best["f"].size() > 50); // the animation's frames, sampled
  CHECK(best["f"].size() <= 200);
  // The controller's output per spring at every frame, in thousandths of
  // [-1, 1]; not all at rest (the MLP drives the springs).
  REQUIRE(best.contains("a"));
  REQUIRE(best["a"].size() == best["f"].size());
  int64_t lo = 0, hi = 0;
  for (const auto &row : best["a"]) {
    CHECK(row.size() == best["springs"].size());
    for (const auto &v : row) {
      lo = std::min(lo, v.get<int64_t>());
      hi = std::max(hi, v.get<int64_t>());
    }
  }
  CHECK(lo >= -1000);
  CHECK(hi <= 1000);
  CHECK(hi - lo > 100);
  CHECK(moves(best));
  CHECK(!d["gallery"].empty());
  for (const auto &e : d["gallery"])
    CHECK(moves(d["motions"][e["motion"].get<size_t>()]));
  CHECK(d["curves"].size() == d["gallery"].size());
  CHECK(d["curves"][0]["losses"].size() == 5); // 4 updates, then the final weights
  REQUIRE(!d["lineage"].empty());
  CHECK(d["lineage"].back()["id"] == d["best_id"]);
  CHECK(d["resolved"].get<std::string>().find("world") != std::string::npos);
  // The same gait is computed again: render is deterministic.
  const std::string first = readText(dir / "report.html");
  REQUIRE(runEvoc({"render", dir.string()}) == 0);
  CHECK(readText(dir / "report.html") == first);
}

// One picture of a robot with a passive spring and actuated ones at rest,
// stretched and compressed, side by side: each is drawn in the same colour by
// the SVG pictures and the video, with and without controller outputs, and
// the page receives the description both use (evolve/record/GaitLook.h).
TEST_CASE("gaits look alike in the SVG, the video and the page", "[render]") {
  namespace look = evoc::evolve::look;
  evoc::runtime::Robot robot;
  const double rests[4] = {0.1, 0.1, 0.09, 0.12}, actuations[4] = {0, 0.2, 0.2, 0.2};
  for (int s = 0; s < 4; ++s) {
    const double y = 0.3 + 0.1 * s;
    robot.points.insert(robot.points.end(), {0.0, y, 0.1, y});
    robot.springs.push_back({2 * s, 2 * s + 1, rests[s], 1e4, actuations[s]});
  }
  for (const std::vector<double> &outputs :
       {std::vector<double>{}, std::vector<double>{0.3, -0.5, 0.7, 1.0}}) {
    evoc::evolve::GaitFrame frame{robot.points, outputs, ""};
    const std::string svg = evoc::evolve::renderGait(robot, {frame});
    std::vector<std::string> svgColours; // the springs' strokes, in order
    const std::regex line("<line [^>]*stroke=\"([^\"]+)\" stroke-width=\"(2\\.5|1\\.2)\"");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), line); it != std::sregex_iterator();
         ++it)
      svgColours.push_back((*it)[1]);
    REQUIRE(svgColours.size() == 4);
    CHECK(svgColours[0] == look::kPassiveSpring);
    CHECK(svgColours[1] == (outputs.empty() ? "rgb(230,140,20)" : "rgb(215,70,10)"));

    evoc::report::World world;
    evoc::report::Motion motion{"", robot, {0}, {robot.points}, {}, {}, {}};
    if (!outputs.empty())
      motion.outputs = {outputs};
    const evoc::report::Image img = evoc::report::drawFrame(world, motion, 0, 640, 360);
    std::set<std::array<long, 3>> drawn;
    for (size_t p = 0; p + 2 < img.rgb.size(); p += 3)
      drawn.insert({img.rgb[p], img.rgb[p + 1], img.rgb[p + 2]});
    for (const std::string &c : svgColours) {
      long r = 0, g = 0, b = 0;
      const look::Rgb rgb = c[0] == '#' ? look::parse(c)
                            : std::sscanf(c.c_str(), "rgb(%ld,%ld,%ld)", &r, &g, &b) == 3
                                ? look::Rgb{r, g, b}
                                : look::Rgb{-1, -1, -1};
      INFO("the SVG's spring colour " << c);
      CHECK(drawn.count({rgb.r, rgb.g, rgb.b}) == 1);
    }
  }
  // The page draws with the description it is given, not with constants of
  // its own: the gait player sets no colour but its text's.
  const fs::path &page = smallRun() / "report.html";
  CHECK(pageData(page, "look") == look::lookJson());
  const std::string html = readText(page);
  const size_t player = html.find("// ---- the gait player"), end = html.find("var players = [];");
  REQUIRE(player != std::string::npos);
  REQUIRE(end != std::string::npos);
  std::istringstream script(html.substr(player, end - player));
  const std::regex colour("'(#[0-9a-fA-F]{3,6}|rgba?\\([0-9])");
  for (std::string l; std::getline(script, l);)
    if (l.find("fillText") == std::string::npos && l.find(".font") == std::string::npos) {
      INFO(l);
      CHECK(!std::regex_search(l, colour));
    }
}

TEST_CASE("evoc render: partial and killed runs render what is there and say what is missing",
          "[render]") {
  std::string err;
  SECTION("a missing generation") {
    fs::path d = copyRun("render-gap");
    fs::remove(d / "gen_0001" / "population.json");
    REQUIRE(runEvocErr({"render", d.string()}, err) == 0);
    CHECK(err.find("generation 1") != std::string::npos);
    json data = pageData(d / "report.html");
    CHECK(data["generations"].size() == 3);
    CHECK(data["missing"].dump().find("gen_0001/population.json is missing") != std::string::npos);
  }
  SECTION("a generation in progress (files written, state.json not yet)") {
    fs::path d = copyRun("render-progress");
    json state = json::parse(readText(d / "state.json"));
    state["generation"] = 1; // as if generation 2 had not committed
    std::ofstream(d / "state.json") << state.dump();
    REQUIRE(runEvocErr({"render", d.string()}, err) == 0);
    CHECK(err.find("generation 2 is in progress") != std::string::npos);
    CHECK(pageData(d / "report.html")["generations"].size() == 2);
  }
  SECTION("killed before its first generation") {
    fs::path d = copyRun("render-empty");
    for (const char *f : {"state.json", "log.jsonl", "best.json"})
      fs::remove(d / f);
    for (int g = 0; g < 3; ++g)
      fs::remove_all(d / ("gen_000" + std::to_string(g)));
    REQUIRE(runEvocErr({"render", d.string()}, err) == 0);
    CHECK(err.find("no generation has completed") != std::string::npos);
    json data = pageData(d / "report.html");
    CHECK(data["generations"].empty());
    CHECK(!data.contains("best"));
  }
  SECTION("a damaged log line") {
    fs::path d = copyRun("render-damaged");
    std::ofstream(d / "log.jsonl", std::ios::app) << "{not json\n";
    REQUIRE(runEvocErr({"render", d.string()}, err) == 0);
    CHECK(err.find("log.jsonl line 4 is damaged") != std::string::npos);
  }
}

TEST_CASE("evoc render: bad arguments are clear errors", "[render]") {
  std::string err;
  CHECK(runEvocErr({"render", "/nonexistent/run"}, err) == 1);
  CHECK(err.find("'/nonexistent/run' does not exist") != std::string::npos);
  CHECK(runEvocErr({"render"}, err) == 2);
  CHECK(err.find("usage: evoc render") != std::string::npos);
  CHECK(runEvocErr({"render", smallRun().string(), "--design", "x"}, err) == 2);
  CHECK(runEvocErr({"render", smallRun().string(), "--video", "a.avi"}, err) == 1);
  CHECK(err.find(".mp4 or .gif") != std::string::npos);
  CHECK(runEvocErr({"render", smallRun().string(), "--video", "/tmp/x.gif", "--design", "999999"},
                   err) == 1);
  CHECK(err.find("design 999999") != std::string::npos);
}

TEST_CASE("evoc render: one robot from best.json", "[render]") {
  fs::path d = copyRun("render-one");
  REQUIRE(runEvoc({"render", (d / "best.json").string()}) == 0);
  json data = pageData(d / "best.html");
  REQUIRE(data["motions"].size() == 1);
  CHECK(moves(data["motions"][0]));
  CHECK(data["plots"][0]["series"][0]["pts"].size() == 5);
  // The same robot as ROBOTS.json + PARAMS.json (the experiment given with --evo).
  json best = json::parse(readText(d / "best.json"));
  fs::path other = freshDir("render-one-files");
  fs::create_directories(other);
  std::ofstream(other / "robots.json")
      << json{{"robots", {{{"points", best["points"]}, {"springs", best["springs"]}}}}}.dump();
  std::ofstream(other / "params.json") << json{{"params", {best["params"]}}}.dump();
  std::string err;
  REQUIRE(
      runEvocErr({"render", (other / "robots.json").string(), (other / "params.json").string(),
                  "--evo", (d / "resolved.evo").string(), "--out", (other / "page.html").string()},
                 err) == 0);
  CHECK(pageData(other / "page.html")["motions"][0]["f"] == data["motions"][0]["f"]);
  // Without an experiment: the rest pose, and a note saying why.
  REQUIRE(runEvocErr({"render", (other / "robots.json").string()}, err) == 0);
  CHECK(err.find("resolved.evo is missing") != std::string::npos);
  CHECK(pageData(other / "robots.html")["motions"][0]["f"].size() == 1);
}

TEST_CASE("evoc render --video: a GIF with ffmpeg, a clear error without it", "[render]") {
  fs::path d = copyRun("render-video");
  const char *path = std::getenv("PATH");
  const std::string saved = path ? path : "";
  std::string err;
  ::setenv("PATH", "/nonexistent", 1);
  int rc = runEvocErr({"render", d.string(), "--video", (d / "best.gif").string()}, err);
  ::setenv("PATH", saved.c_str(), 1);
  CHECK(rc == 1);
  CHECK(err.find("apt-get install ffmpeg") != std::string::npos);
  if (std::system("command -v ffmpeg >/dev/null 2>&1") != 0) {
    WARN("ffmpeg is not installed: the video itself is not checked");
    return;
  }
  REQUIRE(runEvocErr({"render", d.string(), "--video", (d / "best.gif").string()}, err) == 0);
  CHECK(readText(d / "best.gif").substr(0, 4) == "GIF8");
  REQUIRE(runEvocErr({"render", d.string(), "--video", (d / "best.mp4").string()}, err) == 0);
  CHECK(readText(d / "best.mp4").find("ftyp") != std::string::npos);
}

TEST_CASE("evoc train leaves a report with one gait per validation command", "[render][train]") {
  fs::path d = freshDir("render-train");
  REQUIRE(runEvoc({"train", std::string(EVOC_SOURCE_DIR) + "/examples/multitask_alpaca.evo",
                   "--out", d.string(), "--threads", "2", "--set", "train.learn.iterations=2",
                   "--set", "train.learn.batch=2", "--set", "train.validate_every=2"}) == 0);
  REQUIRE(fs::exists(d / "robot.json"));
  json data = pageData(d / "report.html");
  CHECK(data["extra"] == 54);
  CHECK(data["motions"].size() == 54);
  CHECK(data["motions"][7]["label"].get<std::string>().find("v = -0.06") != std::string::npos);
  CHECK(moves(data["motions"][0]));
  CHECK(data["plots"][0]["series"][0]["pts"].size() == 2);
  fs::remove(d / "report.html");
  REQUIRE(runEvoc({"render", d.string()}) == 0);
  CHECK(pageData(d / "report.html")["motions"].size() == 54);
}
