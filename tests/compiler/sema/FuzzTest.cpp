// A bounded fuzz run of parse + check: mutated copies of the stdlib, example
// and golden files (byte flips, token deletion / duplication / swaps / inserts,
// truncation) must never crash or hang the front end. EVOC_FUZZ_SECONDS
// (default 5) bounds the time, EVOC_FUZZ_SEED (default 1) picks the inputs.
#include "Fuzz.h"
#include "SemaTestUtil.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>

using namespace evoc;

namespace {

const char *const kSeeds[] = {
    "examples/eldir.evo",         "examples/eldir_small.evo",
    "stdlib/controllers/mlp.evo", "stdlib/losses/displacement.evo",
    "stdlib/parts/triangle.evo",  "stdlib/physics/mass_spring.evo",
};

const char *const kDictionary[] = {
    "import",     "world",  "fn",     "physics",   "set",   "step",     "for",    "in",
    "let",        "return", "part",   "grammar",   "body",  "mutation", "until",  "changed",
    "controller", "loss",   "evolve", "learn",     "if",    "then",     "else",   "true",
    "false",      "{",      "}",      "(",         ")",     "[",        "]",      ";",
    ",",          ".",      "..",     ":",         "->",    "|",        "@",      "=",
    "+=",         "-=",     "+",      "-",         "*",     "/",        "<",      "<=",
    "==",         "!=",     "&&",     "||",        "!",     "0",        "1",      "-1",
    "1e308",      "1e-400", "0.5",    "T",         "t",     "point",    "spring", "x",
    "v",          "dv",     "act",    "world.dt",  "sum",   "mean",     "min",    "max",
    "norm",       "vec2",   "vec3",   "sin_waves", "\"s\"", "p",        "cells",  "edges",
    "_",          "state",  "temp",   "input",     "param", "/*",       "//",     "\n",
};

/// Splits text into tokens: identifier/number runs, whitespace runs, or
/// single other characters.
std::vector<std::string> tokenize(const std::string &s) {
  std::vector<std::string> out;
  size_t i = 0;
  auto word = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
  };
  while (i < s.size()) {
    size_t j = i + 1;
    if (word(s[i]))
      while (j < s.size() && word(s[j]))
        ++j;
    else if (std::isspace(static_cast<unsigned char>(s[i])))
      while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j])))
        ++j;
    out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string mutate(const std::string &src, std::mt19937_64 &rng) {
  auto pick = [&](size_t n) { return n == 0 ? size_t(0) : size_t(rng() % n); };
  std::string s = src;
  int rounds = 1 + int(rng() % 4);
  for (int r = 0; r < rounds; ++r) {
    auto toks = tokenize(s);
    if (toks.empty())
      return s;
    switch (rng() % 7) {
    case 0: { // byte flip
      if (s.empty())
        break;
      size_t at = pick(s.size());
      s[at] = rng() % 4 == 0 ? char(rng() % 256) : char(32 + rng() % 95);
      continue;
    }
    case 1: // token deletion
      toks.erase(toks.begin() + long(pick(toks.size())));
      break;
    case 2: { // token duplication
      size_t at = pick(toks.size());
      toks.insert(toks.begin() + long(at), toks[at]);
      break;
    }
    case 3: // token swap
      std::swap(toks[pick(toks.size())], toks[pick(toks.size())]);
      break;
    case 4: // dictionary insert
      toks.insert(toks.begin() + long(pick(toks.size())),
                  kDictionary[pick(sizeof kDictionary / sizeof *kDictionary)]);
      break;
    case 5: // dictionary replace
      toks[pick(toks.size())] = kDictionary[pick(sizeof kDictionary / sizeof *kDictionary)];
      break;
    case 6: // truncation
      s = s.substr(0, pick(s.size() + 1));
      continue;
    }
    s.clear();
    for (auto &t : toks)
      s += t;
  }
  return s;
}

} // namespace

TEST_CASE("fuzz: mutated programs never crash or hang the checker", "[fuzz]") {
  const auto [seconds, seed] = evoc::test::fuzzBudget(5);
  std::mt19937_64 rng(seed);
  std::vector<std::pair<std::string, std::string>> seeds;
  for (const char *f : kSeeds) {
    std::string path = std::string(EVOC_SOURCE_DIR) + "/" + f;
    seeds.push_back({path, test::readFile(path)});
    REQUIRE(!seeds.back().second.empty());
  }
  // The golden programs reach the error paths of every check.
  std::vector<std::string> golden;
  for (const auto &e :
       std::filesystem::directory_iterator(std::string(EVOC_SOURCE_DIR) + "/tests/golden"))
    if (e.path().extension() == ".evo")
      golden.push_back(e.path().string());
  std::sort(golden.begin(), golden.end());
  for (const auto &g : golden)
    seeds.push_back({g, test::readFile(g)});
  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  long tried = 0, rejected = 0;
  double slowest = 0;
  std::string slowestInput;
  while (std::chrono::duration<double>(Clock::now() - start).count() < seconds) {
    const auto &[path, text] = seeds[rng() % seeds.size()];
    std::string input = mutate(text, rng);
    auto t0 = Clock::now();
    auto c = test::checkText(input, path);
    double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    if (dt > slowest) {
      slowest = dt;
      slowestInput = input;
    }
    ++tried;
    // Errors and a checked program exclude each other; every diagnostic renders.
    if (c->diags.hasErrors()) {
      ++rejected;
      REQUIRE(!c->program);
    }
    for (const auto &d : c->diags.diagnostics()) {
      std::string r = c->diags.render(d);
      REQUIRE(!r.empty());
      if (d.range.valid()) {
        REQUIRE(d.range.begin.line >= 1);
        REQUIRE(d.range.begin.col >= 1);
      }
    }
  }
  INFO("slowest input:\n" << slowestInput);
  CHECK(slowest < 2.0);
  WARN("fuzz: " << tried << " inputs (" << rejected << " rejected), slowest " << slowest << " s");
  CHECK(tried > 0);
}
