// Every fitness form of a .evo file on a fake learning curve: the reduction
// and the sign each kind applies.
#include "evolve/engine/Fitness.h"

#include <catch2/catch.hpp>

#include <string>

using namespace evoc::evolve;

namespace {

double fitnessOf(const std::string &reduce, double sign, const std::vector<double> &curve) {
  auto kind = fitnessKind(reduce, sign);
  REQUIRE(kind);
  FitnessSpec spec;
  spec.kind = *kind;
  Verdict v = judge(curve, spec);
  REQUIRE(v.valid);
  return v.fitness;
}

} // namespace

TEST_CASE("fitness: every reduction of -loss and of +loss", "[fitness]") {
  // first 0.4, min -0.3, max 0.5, last 0.2, mean 0.2
  const std::vector<double> curve = {0.4, -0.3, 0.5, 0.2, 0.2};
  CHECK(fitnessOf("max", -1, curve) == 0.3);
  CHECK(fitnessOf("min", -1, curve) == -0.5);
  CHECK(fitnessOf("mean", -1, curve) == Approx(-0.2));
  CHECK(fitnessOf("last", -1, curve) == -0.2);
  CHECK(fitnessOf("first", -1, curve) == -0.4);
  CHECK(fitnessOf("max", 1, curve) == 0.5); // max(loss) keeps its sign
  CHECK(fitnessOf("min", 1, curve) == -0.3);
  CHECK(fitnessOf("mean", 1, curve) == Approx(0.2));
  CHECK(fitnessOf("last", 1, curve) == 0.2);
  CHECK(fitnessOf("first", 1, curve) == 0.4);
}

TEST_CASE("fitness: the kinds map one to one and keep the old names", "[fitness]") {
  CHECK(*fitnessKind("max", -1) == FitnessKind::MaxNegLoss);
  CHECK(*fitnessKind("last", -1) == FitnessKind::LastNegLoss);
  CHECK(*fitnessKind("mean", -1) == FitnessKind::MeanNegLoss);
  CHECK(std::string(fitnessName(FitnessKind::MaxNegLoss)) == "max(-loss)");
  CHECK(std::string(fitnessName(*fitnessKind("max", 1))) == "max(loss)");
  CHECK(std::string(fitnessName(*fitnessKind("min", 1))) == "min(loss)");
  CHECK_FALSE(fitnessKind("median", -1));
  CHECK_FALSE(fitnessKind("max", 2));
}
