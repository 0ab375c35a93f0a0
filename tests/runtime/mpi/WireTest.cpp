// The bytes between ranks (mpi/Wire.h): batches and evaluations round-trip
// bit for bit (NaN payloads, -0, subnormals included), JSON parameters
// exactly; a short or damaged message is an evoc::Error naming its sender.
#include <catch2/catch.hpp>

#include "mpi/Wire.h"
#include "support/Error.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace evoc;

namespace {

uint64_t bits(double d) {
  uint64_t u = 0;
  std::memcpy(&u, &d, sizeof u);
  return u;
}

double fromBits(uint64_t u) {
  double d = 0;
  std::memcpy(&d, &u, sizeof d);
  return d;
}

std::vector<double> awkwardDoubles(std::mt19937_64 &rng, size_t n) {
  std::vector<double> v = {0.0,
                           -0.0,
                           std::numeric_limits<double>::denorm_min(),
                           -std::numeric_limits<double>::max(),
                           std::numeric_limits<double>::infinity(),
                           fromBits(0x7ff8000000000123ull), // a NaN with a payload
                           0.1,
                           1.0 / 3.0};
  while (v.size() < n)
    v.push_back(fromBits(rng()));
  return v;
}

bool sameBits(const std::vector<double> &a, const std::vector<double> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (bits(a[i]) != bits(b[i]))
      return false;
  return true;
}

// PARAMS.json-shaped parameters with doubles that do not survive a short
// decimal form.
nlohmann::json params(std::mt19937_64 &rng) {
  std::normal_distribution<double> g;
  nlohmann::json w = nlohmann::json::array();
  for (int r = 0; r < 3; ++r) {
    nlohmann::json row = nlohmann::json::array();
    for (int c = 0; c < 4; ++c)
      row.push_back(g(rng));
    w.push_back(row);
  }
  return {{"w1", w}, {"b1", {g(rng), 0.5f, -0.0}}, {"n", 3}};
}

} // namespace

TEST_CASE("wire: a batch round-trips bit for bit", "[mpi]") {
  std::mt19937_64 rng(7);
  evolve::EvalBatch b;
  b.generation = 12;
  for (int k = 0; k < 3; ++k) {
    b.ids.push_back(1000 + uint64_t(k));
    b.seeds.push_back(rng());
    runtime::Robot r;
    r.dim = k == 2 ? 3 : 2;
    r.points = awkwardDoubles(rng, 12);
    r.springs = {{0, 1, fromBits(rng()), 3e4, 0.25}, {2, 3, 0.05, -0.0, fromBits(rng())}};
    b.robots.push_back(r);
    evolve::Inheritance in;
    if (k > 0)
      in.parentParams = params(rng);
    in.pointKeys = {rng(), rng()};
    in.springKeys = {rng()};
    in.parentPointKeys = {7, 8, 9};
    b.inherit.push_back(in);
  }
  mpi::Writer w;
  mpi::writeBatch(w, b);
  std::vector<char> bytes = w.take();
  mpi::Reader r(bytes, "rank 1");
  evolve::EvalBatch c = mpi::readBatch(r);
  r.end();
  CHECK(c.generation == 12);
  CHECK(c.ids == b.ids);
  CHECK(c.seeds == b.seeds);
  REQUIRE(c.robots.size() == 3);
  for (size_t k = 0; k < 3; ++k) {
    CHECK(c.robots[k].dim == b.robots[k].dim);
    CHECK(sameBits(c.robots[k].points, b.robots[k].points));
    REQUIRE(c.robots[k].springs.size() == 2);
    for (size_t s = 0; s < 2; ++s) {
      const auto &x = c.robots[k].springs[s], &y = b.robots[k].springs[s];
      CHECK(x.a == y.a);
      CHECK(x.b == y.b);
      CHECK(sameBits({x.rest, x.stiffness, x.actuation}, {y.rest, y.stiffness, y.actuation}));
    }
    CHECK(c.inherit[k].parentParams == b.inherit[k].parentParams);
    CHECK(c.inherit[k].parentParams.dump() == b.inherit[k].parentParams.dump());
    CHECK(c.inherit[k].pointKeys == b.inherit[k].pointKeys);
    CHECK(c.inherit[k].springKeys == b.inherit[k].springKeys);
    CHECK(c.inherit[k].parentPointKeys == b.inherit[k].parentPointKeys);
    CHECK(c.inherit[k].parentSpringKeys.empty());
  }
  CHECK(c.inherit[0].parentParams.is_null());
}

TEST_CASE("wire: an evaluation round-trips bit for bit; paramsFn stays behind", "[mpi]") {
  std::mt19937_64 rng(11);
  evolve::Evaluation e;
  e.losses = awkwardDoubles(rng, 37);
  e.valid = false;
  e.reason = "the simulation blew up: \"point.v\"\n";
  e.params = params(rng);
  e.robotSteps = (int64_t(1) << 40) + 3;
  e.gradNorms = awkwardDoubles(rng, 36);
  e.inherited = 42;
  e.terms = {{"velocity", awkwardDoubles(rng, 37)}, {"height", awkwardDoubles(rng, 37)}};
  e.notTrained = "nothing to learn";
  e.paramsFn = [] { return nlohmann::json(); };
  evolve::Evaluation lazy;
  lazy.losses = {-0.25};
  lazy.paramsFn = [] { return nlohmann::json{{"w1", 1}}; };
  mpi::Writer w;
  mpi::writeEvaluation(w, e);
  mpi::writeEvaluation(w, lazy);
  std::vector<char> bytes = w.take();
  mpi::Reader r(bytes, "rank 2");
  evolve::Evaluation f = mpi::readEvaluation(r), g = mpi::readEvaluation(r);
  r.end();
  CHECK(sameBits(f.losses, e.losses));
  CHECK(sameBits(f.gradNorms, e.gradNorms));
  CHECK(!f.valid);
  CHECK(f.reason == e.reason);
  CHECK(f.params == e.params);
  // Every double of the parameters, by its bits (JSON equality alone would
  // accept a near miss printed the same).
  CHECK(f.params["w1"][1][2].get<double>() == e.params["w1"][1][2].get<double>());
  CHECK(bits(f.params["w1"][2][3].get<double>()) == bits(e.params["w1"][2][3].get<double>()));
  CHECK(std::signbit(f.params["b1"][2].get<double>()));
  CHECK(f.robotSteps == e.robotSteps);
  CHECK(f.inherited == 42);
  REQUIRE(f.terms.size() == 2);
  CHECK(f.terms[1].first == "height");
  CHECK(sameBits(f.terms[1].second, e.terms[1].second));
  CHECK(f.notTrained == "nothing to learn");
  CHECK(g.terms.empty());
  CHECK(g.notTrained.empty());
  CHECK(!f.paramsFn);
  CHECK(g.valid);
  CHECK(g.params.is_null());
  CHECK(!g.paramsFn);
}

TEST_CASE("wire: short, long or damaged messages are errors naming the sender", "[mpi]") {
  evolve::Evaluation e;
  e.losses = {1, 2, 3};
  e.reason = "x";
  mpi::Writer w;
  mpi::writeEvaluation(w, e);
  std::vector<char> bytes = w.take();
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    std::vector<char> shorter(bytes.begin(), bytes.begin() + long(cut));
    mpi::Reader r(shorter, "rank 3");
    CHECK_THROWS_WITH(mpi::readEvaluation(r), Catch::Contains("rank 3"));
  }
  std::vector<char> longer = bytes;
  longer.push_back('\0');
  mpi::Reader r(longer, "rank 3");
  mpi::readEvaluation(r);
  CHECK_THROWS_WITH(r.end(), Catch::Contains("1 bytes are left over"));
  // A count far beyond the message is refused before anything is allocated.
  std::vector<char> huge = bytes;
  std::memset(huge.data(), 0xff, 8);
  mpi::Reader h(huge, "rank 3");
  CHECK_THROWS_AS(mpi::readEvaluation(h), Error);
  mpi::Writer j;
  j.u8(2); // neither null nor CBOR
  std::vector<char> bad = j.take();
  mpi::Reader b(bad, "rank 4");
  CHECK_THROWS_WITH(b.json(), Catch::Contains("neither null nor CBOR"));
}

TEST_CASE("wire: subBatch keeps the chosen bodies in the given order", "[mpi]") {
  evolve::EvalBatch b;
  b.generation = 3;
  b.ids = {10, 11, 12, 13};
  b.seeds = {20, 21, 22, 23};
  b.robots.resize(4);
  for (size_t i = 0; i < 4; ++i)
    b.robots[i].points = {double(i), 0};
  evolve::EvalBatch s = mpi::subBatch(b, {3, 1});
  CHECK(s.generation == 3);
  CHECK(s.ids == std::vector<uint64_t>{13, 11});
  CHECK(s.seeds == std::vector<uint64_t>{23, 21});
  CHECK(s.robots[0].points[0] == 3);
  CHECK(s.inherit.empty());
}
