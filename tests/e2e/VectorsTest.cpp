// The reference vectors: examples/eldir.evo (its physics, controller and
// loss, compiled by evoc) must reproduce independently computed losses (1e-8
// relative) and gradients (1e-6 of the largest entry), both contact models,
// on every back end present. Two sets: the reference vectors of
// docs/evolution.md ("The reference vectors", two robots) and tests/data/eldir-extra (six random
// lattice robots of 4 to 45 points, one on the paper's 13x22 lattice), the latter computed by the
// independent PyTorch implementation in tests/reference/eldir_reference.py
// (see tests/data/eldir-extra/README.md).
#include <catch2/catch.hpp>

#include <string>

#include "ReferenceVectors.h"

using namespace evoc;

namespace {

const std::string kSharedDir = std::string(EVOC_SHARED_DIR) + "/testdata/eldir-vectors/";
const std::string kExtraDir = std::string(EVOC_SOURCE_DIR) + "/tests/data/eldir-extra/";

/// A set of ELDiR vectors: examples/eldir.evo with each contact model.
test::Reference eldirSet(const std::string &dir) {
  return {dir, 2, "robots.json", "params.json", "expected_", [](const std::string &c, int T) {
            return test::programFile(std::string(EVOC_SOURCE_DIR) + "/examples/", "eldir.evo", T,
                                     "mass_spring_" + c);
          }};
}

const test::Reference kShared = eldirSet(kSharedDir);
const test::Reference kExtra = eldirSet(kExtraDir);

using test::checkReference;

} // namespace

TEST_CASE("eldir vectors, T = 100, interpreter", "[vectors][interp]") {
  checkReference(kShared, "interp", "noslip", 100);
  checkReference(kShared, "interp", "friction", 100);
}

TEST_CASE("eldir vectors, T = 100 and 1000, CPU back end", "[vectors][cpu]") {
  for (const char *contact : {"noslip", "friction"})
    for (int steps : {100, 1000})
      checkReference(kShared, "cpu", contact, steps);
}

TEST_CASE("extra eldir vectors, T = 100 and 1000, CPU back end", "[vectors][extra][cpu]") {
  for (const char *contact : {"noslip", "friction"})
    for (int steps : {100, 1000})
      checkReference(kExtra, "cpu", contact, steps);
}

TEST_CASE("extra eldir vectors, T = 100, interpreter, one small robot",
          "[vectors][extra][interp]") {
  // Robot 0: 8 points, 13 springs (9 actuated). The interpreter is slow, so
  // only this one at T = 100.
  checkReference(kExtra, "interp", "noslip", 100, {0});
  checkReference(kExtra, "interp", "friction", 100, {0});
}
