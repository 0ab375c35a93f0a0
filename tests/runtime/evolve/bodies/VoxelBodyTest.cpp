// VoxelBody's BodyModel contract (docs/grammars.md, Voxel bodies): sampled
// and mutated bodies follow Evolution Gym's rules (face-connected, an
// actuator), mutation changes the body under `until changed`, repairs a
// hopeless draw, clamps a rate above 1 and says so, JSON round-trips and
// refuses what does not fit, and 3D bodies are cubes of 28 springs.
#include "evolve/bodies/VoxelBody.h"
#include "evolve/engine/CanonicalHash.h"
#include "support/Error.h"

#include <catch2/catch.hpp>

#include <set>

using namespace evoc;
using namespace evoc::evolve;

namespace {

body::VoxelBodySpec evogym(std::vector<int> size) {
  body::VoxelBodySpec s;
  s.name = "V";
  s.dim = int(size.size());
  s.size = std::move(size);
  s.origin.assign(size_t(s.dim), 0.0);
  s.origin.back() = 0.1;
  s.materials = {{"rigid", 2e4, 0.1, body::CellTemplate::None, "#262626"},
                 {"soft", 5e3, 0.1, body::CellTemplate::None, ""},
                 {"h_act", 1e4, 0.1, body::CellTemplate::Horizontal, ""},
                 {"v_act", 1e4, 0.1, body::CellTemplate::Vertical, ""}};
  s.weights = {0.6, 0.2, 0.2, 0.2, 0.2};
  return s;
}

} // namespace

TEST_CASE("voxel bodies: samples and children are connected and have an actuator",
          "[voxel][body]") {
  VoxelBody model(evogym({5, 5}), {}, 0.1);
  EvoRng rng(3);
  std::set<std::vector<uint8_t>> distinct;
  for (int i = 0; i < 300; ++i) {
    GenomePtr g = model.sample(rng);
    const auto &cells = VoxelBody::cells(*g);
    REQUIRE(model.invalidReason(cells).empty());
    distinct.insert(cells);
    Variation v = model.vary(*g, {}, rng);
    REQUIRE(!v.fallback);
    REQUIRE(v.ops == std::vector<std::string>{"resample voxel"});
    const auto &child = VoxelBody::cells(*v.genome);
    REQUIRE(model.invalidReason(child).empty());
    REQUIRE(child != cells); // until changed
    Phenotype p = model.express(*v.genome);
    REQUIRE(p.valid);
    REQUIRE(p.pointKeys.size() == size_t(p.robot.numPoints()));
    REQUIRE(p.springKeys.size() == size_t(p.robot.numSprings()));
    REQUIRE(std::set<uint64_t>(p.pointKeys.begin(), p.pointKeys.end()).size() ==
            p.pointKeys.size());
    // Resting on the ground: the lowest point at 0.1.
    double low = 1e9;
    for (int k = 0; k < p.robot.numPoints(); ++k)
      low = std::min(low, p.robot.points[size_t(2 * k + 1)]);
    REQUIRE(std::abs(low - 0.1) < 1e-12);
  }
  CHECK(distinct.size() > 290);
}

TEST_CASE("voxel bodies: invalid cells are named, a hopeless draw is repaired", "[voxel][body]") {
  VoxelBody model(evogym({3, 2}), {}, 0.1);
  // Grid order, bottom row first.
  CHECK(model.invalidReason({0, 0, 0, 0, 0, 0}) == "the body has no voxel");
  CHECK(model.invalidReason({3, 0, 3, 0, 0, 0}) == "the voxels are not connected (face to face)");
  CHECK(model.invalidReason({1, 1, 2, 0, 0, 0}) == "no voxel is of an actuated material");
  CHECK(model.invalidReason({1, 1, 2, 0, 5, 0}).find("material 5") != std::string::npos);
  CHECK(model.invalidReason({1, 3, 2, 0, 1, 0}).empty());
  CHECK_FALSE(model.express(*VoxelBody::make({3, 0, 3, 0, 0, 0})).valid);

  // Nearly always empty: rejection gives up and the last draw is repaired.
  auto sparse = evogym({6, 6});
  sparse.weights = {1000, 0, 0, 1, 0};
  VoxelBody rare(sparse, {}, 0.1);
  EvoRng rng(5);
  for (int i = 0; i < 5; ++i)
    CHECK(rare.invalidReason(VoxelBody::cells(*rare.sample(rng))).empty());
}

TEST_CASE("voxel bodies: a rate above 1 is clamped and reported; a body that cannot change "
          "falls back to its parent",
          "[voxel][body]") {
  body::VoxelMutationSpec m;
  m.resample = body::Scalar{{{body::Scalar::Op::Const, 3, -1},
                             {body::Scalar::Op::Param, 0, body::kVoxels},
                             {body::Scalar::Op::Div, 0, -1}}}; // 3 / voxels
  VoxelBody model(evogym({2, 1}), m, 0.1);
  EvoRng rng(9);
  auto parent = VoxelBody::make({3, 3});
  Variation v = model.vary(*parent, {}, rng);
  REQUIRE(v.clampedRates.count("resample voxel"));
  CHECK(v.clampedRates.at("resample voxel") == 1.5);

  // One cell, one material that can be drawn: nothing else is possible.
  auto one = evogym({1, 1});
  one.weights = {0, 0, 0, 1, 0};
  VoxelBody fixed(one, {}, 0.1);
  Variation f = fixed.vary(*VoxelBody::make({3}), {}, rng);
  CHECK(f.fallback);
  CHECK(f.fallbackOp == "resample voxel");
  CHECK(VoxelBody::cells(*f.genome) == std::vector<uint8_t>{3});
}

TEST_CASE("voxel bodies: JSON round-trips and refuses a genome of another body",
          "[voxel][body][json]") {
  VoxelBody model(evogym({3, 2}), {}, 0.1);
  auto g = VoxelBody::make({1, 3, 2, 0, 4, 0});
  nlohmann::json j = model.toJson(*g);
  CHECK(j.at("cells") == nlohmann::json({1, 3, 2, 0, 4, 0}));
  CHECK(VoxelBody::cells(*model.fromJson(j)) == VoxelBody::cells(*g));
  auto refuse = [&](nlohmann::json bad, const std::string &says) {
    try {
      model.fromJson(bad);
      FAIL("accepted " << bad.dump());
    } catch (const Error &e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(says) != std::string::npos);
    }
  };
  auto with = [&](const char *k, nlohmann::json v) {
    nlohmann::json b = j;
    b[k] = std::move(v);
    return b;
  };
  refuse(with("size", {5, 5}), "box is [3,2]");
  refuse(with("materials", {"soft", "rigid", "h_act", "v_act"}), "lists them differently");
  refuse(with("cells", {1, 2}), "an array of 6 numbers");
  refuse(with("cells", {1, 3, 2, 0, 9, 0}), "cell 4 of the voxel genome is 9");
  refuse(with("kind", "lattice"), "\"voxel\"");
  refuse(nlohmann::json::object(), "needs the field 'kind'");
}

TEST_CASE("voxel bodies in 3D: cubes of 28 springs sharing faces, drawn by material",
          "[voxel][body][3d]") {
  auto spec = evogym({2, 1, 2});
  spec.materials[3].actuated = body::CellTemplate::Leg;
  VoxelBody model(spec, {}, 0.1);
  // Two cubes side by side at the bottom, one on top of the first.
  auto g = VoxelBody::make({4, 1, 2, 0});
  Phenotype p = model.express(*g);
  REQUIRE(p.valid);
  CHECK(p.robot.dim == 3);
  CHECK(p.robot.numPoints() == 16);
  CHECK(p.robot.numSprings() == 3 * 28 - 2 * 6); // two shared faces of 6 springs
  int actuated = 0;
  for (const auto &s : p.robot.springs)
    actuated += s.actuation > 0;
  CHECK(actuated == 12); // the leg cube's 4 vertical edges and 8 side diagonals
  std::set<std::string> kinds;
  for (const auto &o : p.outlines) {
    kinds.insert(o.part);
    CHECK(o.points.size() == 4);
    if (o.part == "rigid")
      CHECK(o.colour == "#262626");
  }
  CHECK(kinds == std::set<std::string>{"rigid", "soft", "v_act"});
  CHECK(p.outlines.size() == 3 * 6 - 2 * 2); // faces on the surface
  // Sampling in 3D follows the same rules.
  EvoRng rng(2);
  for (int i = 0; i < 50; ++i)
    REQUIRE(model.invalidReason(VoxelBody::cells(*model.sample(rng))).empty());
}

TEST_CASE("voxel bodies: evoc's add, remove and swap each change one voxel", "[voxel][body]") {
  auto one = [](const char *op) {
    body::VoxelMutationSpec m;
    m.resample = body::Scalar::constant(0);
    m.untilChanged = true;
    (std::string(op) == "add"      ? m.add
     : std::string(op) == "remove" ? m.remove
                                   : m.swap) = body::Scalar::constant(1);
    return m;
  };
  EvoRng rng(21);
  VoxelBody sampler(evogym({5, 5}), {}, 0.1);
  for (const char *op : {"add", "remove", "swap"}) {
    VoxelBody model(evogym({5, 5}), one(op), 0.1);
    for (int i = 0; i < 100; ++i) {
      GenomePtr g = sampler.sample(rng);
      const auto &a = VoxelBody::cells(*g);
      Variation v = model.vary(*g, {}, rng);
      INFO(op);
      if (v.fallback)
        continue; // e.g. nothing removable from a body of one actuator
      REQUIRE(v.ops == std::vector<std::string>{std::string(op) + " voxel"});
      const auto &b = VoxelBody::cells(*v.genome);
      REQUIRE(model.invalidReason(b).empty());
      int changed = 0, grown = 0, emptied = 0;
      for (size_t c = 0; c < a.size(); ++c) {
        changed += a[c] != b[c];
        grown += a[c] == 0 && b[c] != 0;
        emptied += a[c] != 0 && b[c] == 0;
      }
      CHECK(changed == 1);
      CHECK(grown == (std::string(op) == "add" ? 1 : 0));
      CHECK(emptied == (std::string(op) == "remove" ? 1 : 0));
    }
  }
}
