// ROBOTS.json / PARAMS.json readers (errors name robot and field) and the
// OUT.json writer.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/JsonIO.h"
#include "core/Train.h"
#include "support/Error.h"

using namespace evoc;
using namespace evoc::runtime;

namespace {

// The message of the evoc::Error that `parse` throws, or "" when it returns.
template <class Parse> std::string errorOf(Parse parse) {
  try {
    parse();
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

// The error message of parsing `text` as r.json / p.json, or "" when it parses.
std::string robotsError(const std::string &text) {
  return errorOf([&] { parseRobotsJson(text, "r.json"); });
}
std::string paramsError(const std::string &text) {
  return errorOf([&] { parseParamsJson(text, "p.json"); });
}

// ROBOTS.json with one robot: two points and this one spring; these points
// and no springs.
std::string oneSpring(const std::string &spring) {
  return R"({"robots": [{"points": [[0,0],[1,0]], "springs": [)" + spring + "]}]}";
}
std::string noSprings(const std::string &points) {
  return R"({"robots": [{"points": )" + points + R"(, "springs": []}]})";
}

const char *kGood = R"({"robots": [
  {"points": [[0, 0.1], [0.05, 0.1], [0.025, 0.14]],
   "springs": [[0, 1, 0.05, 30000, 0.1], [1, 2, 0.05, 30000.0, 0], [0, 2, 0.05, 3e4, 0.1]]},
  {"points": [[0, 0.1], [1, 0.2]], "springs": [[1, 0, 0.5, 10, 0]]}]})";

} // namespace

TEST_CASE("ROBOTS.json: a valid file", "[json]") {
  auto robots = parseRobotsJson(kGood);
  REQUIRE(robots.size() == 2);
  CHECK(robots[0].dim == 2);
  CHECK(robots[0].numPoints() == 3);
  CHECK(robots[0].numSprings() == 3);
  CHECK(robots[0].points[5] == 0.14);
  CHECK(robots[0].springs[2].stiffness == 3e4);
  CHECK(robots[1].springs[0].a == 1);
  CHECK(robots[1].springs[0].b == 0);
  CHECK(robots[1].springs[0].rest == 0.5);
}

TEST_CASE("ROBOTS.json: errors name the robot and the field", "[json]") {
  auto e = robotsError(R"({"robots": [{"points": [[0,0],[1,0]], "springs": [[0, 1, 1, 1, 0]]},
                                      {"points": [[0,0],[1,0]], "springs": [[0, 2, 1, 1, 0]]}]})");
  CHECK(e.find("robot 1, spring 0, endpoint b = 2 is out of range") != std::string::npos);
  CHECK(e.find("2 points") != std::string::npos);

  // (the file, what its error says)
  const std::pair<std::string, const char *> cases[] = {
      {oneSpring("[-1, 1, 1, 1, 0]"), "robot 0, spring 0, endpoint a = -1 is out of range"},
      {oneSpring("[0, 1, 0, 1, 0]"), "robot 0, spring 0, rest length is 0"},
      {oneSpring("[0, 1.5, 1, 1, 0]"), "not an integer"},
      {oneSpring("[0, 0, 1, 1, 0]"), "connects point 0 to itself"},
      {oneSpring("[0, 1, 1, 1]"), "robot 0, spring 0 has 4 entries, expected 5"},
      {noSprings("[[0,0],[1,NaN]]"), "r.json: robot 0, point 1, coordinate y is NaN"},
      {noSprings("[[0,0],[-Infinity, 1]]"), "robot 0, point 1, coordinate x is infinite"},
      {noSprings("[[0,0],[null, 1]]"), "robot 0, point 1, coordinate x is null"},
      {noSprings("[[0,0],[1,0,2]]"), "robot 0, point 1 has 3 coordinates, expected 2"},
      {noSprings("[]"), "robot 0 has no points"},
      {noSprings("[[0,\"a\"]]"), "coordinate y is a string"},
      {R"({"robots": [{"springs": []}]})", "robot 0 has no \"points\""},
      {R"({"robot": []})", "has no \"robots\""},
  };
  for (auto [text, says] : cases) {
    INFO(text);
    CHECK(robotsError(text).find(says) != std::string::npos);
  }

  e = errorOf([] {
    parseRobotsJson(R"({"robots": [{"points": [[0,0,0]], "springs": []}]})", "r.json", 2);
  });
  CHECK(e.find("point 0 has 3 coordinates, expected 2 (the experiment is 2D)") !=
        std::string::npos);
  CHECK_THROWS_WITH(readRobotsFile("/nonexistent/robots.json"), Catch::Contains("cannot read"));
}

TEST_CASE("ROBOTS.json: malformed JSON reports line and column", "[json]") {
  auto e = robotsError("{\"robots\": [\n  {\"points\": [[0, 0]],\n   \"springs\": [}]}");
  CHECK(e.find("r.json:3:") != std::string::npos);
  CHECK(e.find("not valid JSON") != std::string::npos);
  e = robotsError("");
  CHECK(e.find("not valid JSON") != std::string::npos);
}

TEST_CASE("PARAMS.json: shapes and errors", "[json]") {
  auto ps =
      parseParamsJson(R"({"params": [{"w1": [[1, 2, 3], [4, 5, 6]], "b1": [7, 8], "s": 9}]})");
  REQUIRE(ps.size() == 1);
  CHECK(ps[0]["w1"].shape == std::vector<int64_t>{2, 3});
  CHECK(ps[0]["w1"].data == std::vector<double>{1, 2, 3, 4, 5, 6});
  CHECK(ps[0]["b1"].shape == std::vector<int64_t>{2});
  CHECK(ps[0]["s"].shape.empty());
  CHECK(ps[0]["s"].data == std::vector<double>{9});

  auto e = paramsError(R"({"params": [{"w1": [[1]]}, {"w1": [[1, 2], [3]]}]})");
  CHECK(e.find("p.json: robot 1, field 'w1'[1] has 1 entries, but the first row") !=
        std::string::npos);
  e = paramsError(R"({"params": [{"b1": [1, NaN]}]})");
  CHECK(e.find("robot 0, field 'b1'[1] is NaN") != std::string::npos);
  e = paramsError(R"({"params": [{"b1": [1, [2]]}]})");
  CHECK(e.find("nested deeper") != std::string::npos);
  e = paramsError(R"({"params": [{"b1": [1, 2]]})");
  CHECK(e.find("p.json:1:") != std::string::npos);
}

TEST_CASE("OUT.json: round trip of results", "[json]") {
  SimResult r;
  TrainResult t;
  t.loss = -0.1234567890123456789;
  t.losses = {0.5, t.loss};
  t.grad["w1"] = {{2, 2}, {1, 2, 3, 4.000000000000001}};
  t.grad["b1"] = {{2}, {5, 6}};
  r.results.push_back(t);
  TrainResult bad;
  bad.valid = false;
  bad.error = "robot 1: the loss is NaN or infinite";
  r.results.push_back(bad);
  r.seconds = 1.5;
  r.robotStepsPerSecond = 1000;
  std::string path = "runtime_test_out.json";
  writeJsonFile(path, simResultToJson(r));
  std::ifstream in(path);
  auto j = nlohmann::json::parse(in);
  std::remove(path.c_str());
  CHECK(j["results"][0]["loss"].get<double>() == t.loss);
  CHECK(j["results"][0]["grad"]["w1"][1][1].get<double>() == 4.000000000000001);
  CHECK(j["results"][0]["grad"]["b1"][0].get<double>() == 5);
  CHECK(j["results"][0]["losses"].size() == 2);
  CHECK(j["results"][1]["loss"].is_null());
  CHECK(j["results"][1]["valid"] == false);
  CHECK(j["seconds"].get<double>() == 1.5);
  CHECK(j["robot_steps_per_second"].get<double>() == 1000);
  // A robot written as JSON reads back as the same robot.
  auto robots = parseRobotsJson(kGood);
  nlohmann::json doc = {{"robots", {robotToJson(robots[0])}}};
  auto back = parseRobotsJson(doc.dump());
  CHECK(back[0].points == robots[0].points);
  CHECK(back[0].springs.size() == robots[0].springs.size());
}

TEST_CASE("ROBOTS.json / PARAMS.json: a number beyond a double names robot and point", "[json]") {
  std::string e = robotsError(R"({"robots": [{"points": [[0,0],[0, 1e400]], "springs": []}]})");
  CHECK(e.find("r.json: robot 0, point 1, coordinate y is too large for a double") !=
        std::string::npos);
  e = robotsError(
      R"({"robots": [{"points": [[0,0]], "springs": []}, {"points": [[-2.5e999, 0]], "springs": []}]})");
  CHECK(e.find("robot 1, point 0, coordinate x is too large for a double") != std::string::npos);
  e = paramsError(R"({"params": [{"b1": [1, 1E+309]}]})");
  CHECK(e.find("p.json: robot 0, field 'b1'[1] is too large for a double") != std::string::npos);
  // Large but finite numbers, -Infinity and numbers inside strings are unchanged.
  auto robots = parseRobotsJson(
      R"({"robots": [{"points": [[0, 1.5e308], [-1e-400, 0.1]], "springs": [], "x": "1e400"}]})",
      "r.json");
  REQUIRE(robots.size() == 1);
  CHECK(robots[0].points[1] == 1.5e308);
  e = robotsError(R"({"robots": [{"points": [[0,0],[-Infinity, 1]], "springs": []}]})");
  CHECK(e.find("is infinite") != std::string::npos);
}

TEST_CASE("ROBOTS.json: a directory is named as one", "[json]") {
  std::string dir = std::filesystem::temp_directory_path().string();
  CHECK_THROWS_WITH(readRobotsFile(dir), Catch::Contains("'" + dir + "': it is a directory") &&
                                             !Catch::Contains("not valid JSON"));
  CHECK_THROWS_WITH(readParamsFile(dir), Catch::Contains("it is a directory"));
}

TEST_CASE("robots for evoc sim: a run's best.json and a generation's population.json",
          "[json][sim]") {
  const std::string robot = R"({"points": [[0, 0.1], [0.05, 0.1], [0.025, 0.14]],
    "springs": [[0, 1, 0.05, 30000, 0.1], [1, 2, 0.05, 30000, 0], [0, 2, 0.05, 30000, 0.1]]})";
  // ROBOTS.json as before.
  RobotsInput in = parseRobotsInput(kGood, "r.json");
  CHECK(in.kind == "robots");
  CHECK(in.robots.size() == 2);
  CHECK(!in.params);
  // best.json: one robot at the top level, with its trained weights.
  const std::string best = robot.substr(0, robot.size() - 1) +
                           R"(, "id": 7, "fitness": 0.06, "losses": [-0.01, null],
                              "params": {"w": [[1, 2], [3, 4]], "b": [0.5, -0.5]}})";
  in = parseRobotsInput(best, "best.json", 2);
  CHECK(in.kind == "robot");
  REQUIRE(in.robots.size() == 1);
  CHECK(in.robots[0].numPoints() == 3);
  CHECK(in.robots[0].springs[2].actuation == 0.1);
  REQUIRE(in.params);
  REQUIRE(in.params->size() == 1);
  CHECK(in.params->at(0).at("w").shape == std::vector<int64_t>{2, 2});
  CHECK(in.params->at(0).at("b").data == std::vector<double>{0.5, -0.5});
  // evoc train's robot.json: a robot without weights.
  in = parseRobotsInput(robot, "robot.json");
  CHECK(in.robots.size() == 1);
  CHECK(!in.params);
  // population.json: members in rank order, each its robot, or its genome
  // expressed by the experiment's body.
  const std::string pop = R"({"generation": 3, "population": [
      {"id": 4, "genome": {"n": 1}, "robot": )" +
                          robot + R"(},
      {"id": 9, "genome": {"n": 2}}]})";
  int expressed = 0;
  auto express = [&](const nlohmann::json &g) {
    ++expressed;
    Robot r = parseRobotsInput(robot, "x").robots[0];
    r.points[0] = -double(g["n"].get<int>());
    return r;
  };
  in = parseRobotsInput(pop, "population.json", 2, express);
  CHECK(in.kind == "population");
  REQUIRE(in.robots.size() == 2);
  CHECK(in.robots[0].points[0] == 0);
  CHECK(in.robots[1].points[0] == -2);
  CHECK(expressed == 1);
  // Without a body to express genomes, the member is named.
  CHECK_THROWS_WITH(parseRobotsInput(pop, "population.json"),
                    Catch::Contains("population.json: population member 1 has no \"robot\""));
  // A member's robot is checked like any other.
  std::string bad = pop;
  bad.replace(bad.find("[1, 2, 0.05"), 11, "[1, 9, 0.05");
  CHECK_THROWS_WITH(parseRobotsInput(bad, "population.json", 2, express),
                    Catch::Contains("population member 0, \"robot\", spring 1, endpoint b = 9"));
  // Anything else says what it expected.
  CHECK_THROWS_WITH(parseRobotsInput(R"({"log": []})", "x.json"),
                    Catch::Contains("x.json holds no robots: expected ROBOTS.json"));
}
