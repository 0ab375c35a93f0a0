// Scenes (docs/language.md, "Scenes"): world.scene's boxes are checked with
// located errors; which boxes float; a physics that reads the ground alone
// is refused in a world with a scene; the initial lift out of boxes.
#include "SemaTestUtil.h"

#include <catch2/catch.hpp>

#include <string>

using namespace evoc;

namespace {

/// Every diagnostic of a world with `settings` (dim = `dim`).
std::string worldErrors(const std::string &settings, int dim = 2) {
  auto c = test::checkText("world { dim = " + std::to_string(dim) + "; " + settings + " }\n");
  return c->all();
}

bool has(const std::string &text, const std::string &part) {
  INFO(text);
  return text.find(part) != std::string::npos;
}

} // namespace

TEST_CASE("scenes: good boxes check, bad ones are located errors", "[scene]") {
  CHECK(worldErrors("scene = [box(0, 0.1, 0.5, 0.3), box(1, 0, 1.2, 2 * 0.2)];").empty());
  CHECK(worldErrors("scene = [box(0, 0, 0, 0.5, 0.5, 0.3)];", 3).empty());
  CHECK(worldErrors("scene = [];").empty());
  // The caret under the offending coordinate: t.evo:LINE:COL.
  CHECK(has(worldErrors("scene = [box(0.5, 0.1, 0.4, 0.3)];"),
            "t.evo:1:41: error: this box is empty: x1 = 0.4 must be greater than x0 = 0.5"));
  CHECK(has(worldErrors("scene = [box(0, 0.3, 0.5, 0.3)];"),
            "y1 = 0.3 must be greater than y0 = 0.3"));
  CHECK(has(worldErrors("scene = [box(0, 0, 0, 1, 1, -1)];", 3),
            "z1 = -1 must be greater than z0 = 0"));
  CHECK(has(worldErrors("scene = box(0, 0.1, 0.5, 0.3);"),
            "world.scene must be a list of boxes: [box(x0, y0, x1, y1), ...]"));
  CHECK(has(worldErrors("scene = [box(0, 0.1, 0.5)];"),
            "a box in a dim = 2 world takes 4 numbers, box(x0, y0, x1, y1), not 3"));
  CHECK(has(worldErrors("scene = [box(0, 0.1, 0.5, 0.3)];", 3),
            "a box in a dim = 3 world takes 6 numbers, box(x0, y0, z0, x1, y1, z1), not 4"));
  CHECK(has(worldErrors("scene = [wall(0, 0.1, 0.5, 0.3)];"), "a scene holds boxes"));
  CHECK(has(worldErrors("scene = [box(x0 = 0, y0 = 0, x1 = 1, y1 = 1)];"), "without names"));
  CHECK(has(worldErrors("scene = [box(0, 0.1, 1e308 * 10, 0.3)];"),
            "'world.scene box x1' is not a finite number"));
  CHECK(has(worldErrors("scene = [box(0, 0.1, 2e4, 0.3)];"),
            "world.scene box x1 = 20000 lies outside [-10000, 10000]"));
  CHECK(has(worldErrors("scene = [box(0, 0.1, a, 0.3)];"), "must be a number"));
  std::string many;
  for (int i = 0; i < 65; ++i)
    many += (i ? ", " : "") + std::string("box(") + std::to_string(i) + ", 0, " +
            std::to_string(i) + ".5, 1)";
  CHECK(has(worldErrors("scene = [" + many + "];"), "a scene has at most 64 boxes"));
  CHECK(has(worldErrors("scene = [box(0, 0, 1, 1)]; scene = [];"), "'scene' is set twice"));
  CHECK(has(worldErrors("scence = [];"), "did you mean 'scene'?"));
}

TEST_CASE("scenes: a box floats when its bottom is above the highest ground under it", "[scene]") {
  auto c = test::checkText("world { dim = 2; ground = flat(height = 0.1);\n"
                           "  scene = [box(0, 0.05, 1, 0.2), box(0, 0.1, 1, 0.2),\n"
                           "           box(0, 0.3, 1, 0.4)]; }\n");
  REQUIRE(c->program);
  const auto &scene = c->program->world.ground.scene;
  REQUIRE(scene.size() == 3);
  CHECK(!scene[0].floating); // sunk into the ground
  CHECK(!scene[1].floating); // resting on it
  CHECK(scene[2].floating);
  CHECK(scene[2].lo[1] == 0.3);
  CHECK(scene[2].hi[0] == 1);
  // On a terrain, the highest ground under the footprint counts: a hill at
  // x = 0.5 rises to 0.16 under the first box, not under the second.
  GroundShape hills;
  hills.profile = {{0.0, 0.1}, {0.5, 0.16}, {1.0, 0.1}};
  SceneBox over{{0.4, 0.12, 0}, {0.6, 0.2, 0}};
  SceneBox beside{{0.9, 0.12, 0}, {1.5, 0.2, 0}};
  CHECK(hills.highestUnder(over, 2, 0) == 0.16);
  CHECK(std::abs(hills.highestUnder(beside, 2, 0) - 0.112) < 1e-15);
  HeightField f;
  f.xs = {0, 1};
  f.ys = {0, 1};
  f.h = {0, 1, 2, 4};
  GroundShape field;
  field.field = f;
  SceneBox corner{{0.25, 0.25, 3}, {0.5, 0.5, 4}};
  CHECK(field.highestUnder(corner, 3, 0) == f.h[0] + 0.5 * 1 + 0.5 * 2 + 0.25 * 1); // at (0.5, 0.5)
}

TEST_CASE("scenes: a body is lifted as little as it takes out of every box", "[scene]") {
  GroundShape g;
  g.boxes = {SceneBox{{0, 0.1, 0}, {0.2, 0.2, 0}}, SceneBox{{0.1, 0.2, 0}, {0.3, 0.35, 0}}};
  // Point A inside the first box needs 0.08; lifted so, point B is inside
  // the second, which needs 0.2; A then clears both.
  const double pts[] = {0.05, 0.12, 0.15, 0.15};
  CHECK(g.liftOutOfBoxes(pts, 2, 2, 0) == 0.35 - 0.15);
  // Already above them: the ground's lift stands.
  CHECK(g.liftOutOfBoxes(pts, 2, 2, 0.5) == 0.5);
  // On a face is not inside.
  const double onTop[] = {0.05, 0.2};
  CHECK(g.liftOutOfBoxes(onTop, 1, 2, 0) == 0);
  const double point3[] = {0.5, 0.5, 0.05};
  GroundShape g3;
  g3.boxes = {SceneBox{{0, 0, 0}, {1, 1, 0.1}, false}};
  CHECK(g3.liftOutOfBoxes(point3, 1, 3, 0) == 0.1 - 0.05);
}

TEST_CASE("scenes: a physics that reads the ground alone is refused, located", "[scene]") {
  auto fang = test::checkText("import \"physics/mass_spring_fang.evo\";\n"
                              "world { dim = 2; scene = [box(0.5, 0, 0.6, 0.2)];\n"
                              "  physics = mass_spring_fang; }\n");
  CHECK(!fang->program);
  CHECK(has(fang->all(), "mass_spring_fang.evo:"));
  CHECK(has(fang->all(), "world.ground.height is the ground's height alone, and this world has "
                         "a scene: physics 'mass_spring_fang' cannot honour its boxes"));
  auto ground = test::checkText("world { dim = 2; scene = [box(0.5, 0, 0.6, 0.2)]; }\n"
                                "physics P {\n"
                                "  set point { state x: vec2; }\n"
                                "  step { for p in point { p.x = vec2(p.x.x, ground_gap(p.x, "
                                "p.x.x)); } }\n"
                                "}\n");
  CHECK(!ground->program);
  CHECK(has(ground->all(), "t.evo:4:45: error: 'ground_gap' reads the ground alone, and this "
                           "world has a scene: physics 'P' must read the contact surface"));
  // The stdlib's models honour it, in 2D and 3D.
  for (const char *physics : {"mass_spring_noslip", "mass_spring_friction"}) {
    auto ok = test::checkText("import \"physics/mass_spring.evo\";\n"
                              "import \"controllers/mlp.evo\";\n"
                              "world { dim = 2; scene = [box(0.5, 0, 0.6, 0.2)]; physics = " +
                              std::string(physics) + "; }\n");
    CHECK(ok->all().empty());
  }
  for (const char *physics : {"mass_spring3_noslip", "mass_spring3_friction"}) {
    auto ok = test::checkText("import \"physics/mass_spring3.evo\";\n"
                              "import \"controllers/mlp.evo\";\n"
                              "world { dim = 3; scene = [box(0.5, 0, 0, 0.6, 1, 0.2)]; physics = " +
                              std::string(physics) + "; }\n");
    CHECK(ok->all().empty());
  }
  // The contact built-ins take positions of the world's dimension.
  auto bad =
      test::checkText("world { dim = 3; }\n"
                      "fn f(x: vec3) -> scalar { return contact_gap(x, vec2(x.x, x.y)); }\n");
  CHECK(has(bad->all(), "'contact_gap' takes two vec3, not vec2"));
}

TEST_CASE("objects: good boxes check, bad ones and misused object sets are located errors",
          "[objects]") {
  CHECK(
      worldErrors("objects = [box(0.3, 0.1, 0.4, 0.2), box(0, 0.5, 0.1, 0.6, mass = 2)];").empty());
  CHECK(worldErrors("objects = [box(0, 0, 0.1, 0.1, 0.1, 0.2)];", 3).empty());
  CHECK(has(worldErrors("objects = box(0.3, 0.1, 0.4, 0.2);"),
            "world.objects must be a list of boxes: [box(x0, y0, x1, y1, mass = M), ...]"));
  CHECK(has(worldErrors("objects = [ball(0.3, 0.1, 0.4, 0.2)];"), "world.objects holds boxes"));
  CHECK(has(worldErrors("objects = [box(0.3, 0.1, 0.2, 0.2)];"),
            "this box is empty: x1 = 0.2 must be greater than x0 = 0.3"));
  CHECK(has(worldErrors("objects = [box(0.3, 0.1, 0.4, 0.2, mass = -1)];"),
            "an object's mass must lie in (0, 1000000], not -1"));
  CHECK(has(worldErrors("objects = [box(0.3, 0.1, 0.4, 0.2, weight = 1)];"),
            "box() in world.objects takes its corners as numbers and mass = M, not 'weight'"));
  CHECK(has(worldErrors("objects = [box(0.3, 0.1, 2e4, 0.2)];"),
            "world.objects box x1 = 20000 lies outside [-10000, 10000]"));
  // Where it starts: on or above the ground, outside the scene's boxes.
  CHECK(has(worldErrors("ground = flat(height = 0.1); objects = [box(0.3, 0.05, 0.4, 0.2)];"),
            "t.evo:1:58: error: object 0 starts in the ground: its bottom 0.05 lies below the "
            "ground's 0.1 under it"));
  CHECK(has(worldErrors("scene = [box(0, 0.1, 1, 0.3)]; objects = [box(0.3, 0.25, 0.4, 0.35)];"),
            "object 0 starts inside scene box 0"));
  CHECK(worldErrors("scene = [box(0, 0.1, 1, 0.3)]; objects = [box(0.3, 0.3, 0.4, 0.4)];").empty());
  std::string many;
  for (int i = 0; i < 17; ++i)
    many += (i ? ", " : "") + std::string("box(") + std::to_string(i) + ", 0.1, " +
            std::to_string(i) + ".5, 1)";
  CHECK(has(worldErrors("objects = [" + many + "];"), "a world has at most 16 objects"));

  // The physics' sets the world fills.
  auto physics = [](const std::string &sets, const std::string &world = "") {
    return test::checkText("world { dim = 2; " + world +
                           " physics = P; }\nphysics P {\n"
                           "  set point { state x: vec2; }\n  set spring(a: point, b: point) {}\n" +
                           sets + "\n  step { }\n}\n")
        ->all();
  };
  // (Warnings only: this step writes nothing.)
  CHECK(!has(physics("set object { state x: vec2; state v: vec2; body half: vec2; body mass: "
                     "scalar; temp dv: vec2; }\nset touch(p: point, o: object) { temp t: scalar; }",
                     "objects = [box(0.3, 0.1, 0.4, 0.2)];"),
             "error"));
  CHECK(has(physics("", "objects = [box(0.3, 0.1, 0.4, 0.2)];"),
            "this world has objects, but physics 'P' has no 'set object { state x: vec2; ... }'"));
  CHECK(has(physics("set object { state v: vec2; }"), "set 'object' needs 'state x: vec2;'"));
  CHECK(has(physics("set object { state x: vec2; param k: scalar; }"),
            "nothing trains or drives 'object.k'"));
  CHECK(has(physics("set object { state x: vec2; body size: vec2; }"),
            "cannot fill body field 'object.size'"));
  CHECK(has(physics("set object { state x: vec2; body half: scalar; }"),
            "cannot fill body field 'object.half'"));
  CHECK(has(physics("set object { state x: vec2; }\nset touch(o: object) {}"),
            "it takes one endpoint in point and one in object"));
  CHECK(has(physics("set object { state x: vec2; }\nset touch(p: point, o: object) { state s: "
                    "scalar; }"),
            "a set of (point, object) pairs holds only temps"));
}
