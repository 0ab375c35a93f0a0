// Fault tests of the run directory: damaged state files of every shape and
// damaged logs are refused with a sentence and leave the directory as it
// was; a resume with changed experiment settings is refused by name; a
// creation killed before run.json, and two runs claiming one directory;
// and the process stopped (EVOC_FAULT_AFTER_WRITES) at every atomic write
// of a run, then resumed, ends bit for bit as an uninterrupted run.
#include "TestSupport.h"

#include "evolve/engine/Evolution.h"
#include "evolve/record/RunDir.h"
#include "support/Error.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <fmt/format.h>

#include <cstdlib>
#include <functional>
#include <map>
#include <sys/wait.h>
#include <unistd.h>

using namespace evoc::evolve;
using namespace evoc::evolve::test;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

// Every file under `dir` (path relative to it -> content), the lock aside.
std::map<std::string, std::string> snapshot(const fs::path &dir) {
  std::map<std::string, std::string> out;
  for (const auto &e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename() != ".lock")
      out[fs::relative(e.path(), dir).string()] = readTextFile(e.path());
  return out;
}

// snapshot() with the timing fields of the log and the state removed.
std::map<std::string, std::string> withoutTiming(const fs::path &dir) {
  auto files = snapshot(dir);
  std::string log;
  for (const auto &line : logWithoutTiming(dir))
    log += line + "\n";
  files["log.jsonl"] = log;
  if (files.count("state.json")) {
    json s = json::parse(files["state.json"]);
    s.erase("elapsed_seconds");
    files["state.json"] = s.dump();
  }
  return files;
}

// Runs `fn` in a forked child with `env` set; returns its wait status.
int inChild(const std::vector<std::pair<const char *, std::string>> &env,
            const std::function<void()> &fn) {
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    for (const auto &[k, v] : env)
      ::setenv(k, v.c_str(), 1);
    try {
      fn();
    } catch (...) {
      ::_exit(2);
    }
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

} // namespace

TEST_CASE("fault: damaged state.json of every shape is refused, directory untouched",
          "[resume][fault]") {
  auto root = scratchDir("damaged-state");
  const fs::path dir = root / "run";
  runEvolution(smallConfig(4, 2), fakeEvaluate(), quiet(dir));
  const std::string good = readTextFile(dir / "state.json");
  const json state = json::parse(good);
  REQUIRE(state["next_id"].get<uint64_t>() > 0);

  // (what to write: a JSON edit of the good state or a whole text, what the
  // refusal must say)
  using Edit = std::function<void(json &)>;
  struct Case {
    std::string name;
    Edit edit;
    std::string text; // used when edit is empty
    std::string says;
  };
  auto set = [](const json::json_pointer &at, json v) {
    return Edit([at, v](json &s) { s[at] = v; });
  };
  auto drop = [](const json::json_pointer &parent, std::string key) {
    return Edit([parent, key](json &s) { s[parent].erase(key); });
  };
  using P = json::json_pointer;
  const std::vector<Case> cases = {
      {"array", {}, "[]", "holds an array"},
      {"null", {}, "null", "holds null"},
      {"number", {}, "42", "holds 42"},
      {"string", {}, "\"state\"", "holds \"state\""},
      {"empty object", {}, "{}", "not an evoc run state"},
      {"format a number", set(P("/format"), 3), "", "not an evoc run state"},
      {"version a string", set(P("/version"), "2"), "", "version"},
      {"config an array", set(P("/config"), json::array()), "", "config must be an object"},
      {"generation a string", set(P("/generation"), "1"), "", "generation must be a whole"},
      {"generation -7", set(P("/generation"), -7), "", "generation must be a whole"},
      {"generation 10^9", set(P("/generation"), 1000000000), "", "log.jsonl holds 2 of"},
      {"generation 10^12", set(P("/generation"), int64_t(1e12)), "", "generation must be"},
      {"generation missing", drop(P(""), "generation"), "", "generation is missing"},
      {"next_id -1", set(P("/next_id"), -1), "", "next_id must be a whole number >= 0"},
      {"next_id 0", set(P("/next_id"), 0), "", "ids would repeat"},
      {"next_id a string", set(P("/next_id"), "9"), "", "next_id must be"},
      {"designs -1", set(P("/designs_evaluated"), -1), "", "designs_evaluated must be"},
      {"elapsed a string", set(P("/elapsed_seconds"), "x"), "", "elapsed_seconds must be"},
      {"rng a number", set(P("/rng"), 5), "", "rng must be a string"},
      {"rng not hex", set(P("/rng"), "zz"), "", "64 lowercase hex"},
      {"population empty", set(P("/population"), json::array()), "", "an empty one"},
      {"population an object", set(P("/population"), json::object()), "", "not an object"},
      {"population null", set(P("/population"), nullptr), "", "population must be"},
      {"member a number", set(P("/population/0"), 5), "", "population[0] must be an object"},
      {"member born a string", set(P("/population/1/born"), "0"), "", "population[1].born"},
      {"member born later", set(P("/population/1/born"), 7), "", "population[1].born"},
      {"member id -3", set(P("/population/0/id"), -3), "", "population[0].id"},
      {"member id too big", set(P("/population/0/id"), 999999), "", "ids would repeat"},
      {"member parent -2", set(P("/population/0/parent"), -2), "", "population[0].parent"},
      {"member fitness a string", set(P("/population/0/fitness"), "1"), "", ".fitness must"},
      {"member fitness null", set(P("/population/0/fitness"), nullptr), "", ".fitness must"},
      {"member losses a string", set(P("/population/0/losses"), "x"), "", ".losses must"},
      {"member losses of strings", set(P("/population/0/losses/0"), "x"), "", ".losses must"},
      {"member grad_norms", set(P("/population/0/grad_norms"), 1), "", ".grad_norms must"},
      {"member genome missing", drop(P("/population/0"), "genome"), "", "genome is missing"},
      {"member genome a number", set(P("/population/0/genome"), 42), "", "lattice genome"},
      {"member genome rows", set(P("/population/0/genome/rows/0"), 1), "", "state.json"},
      {"best missing", drop(P(""), "best"), "", "best is missing"},
      {"best a number", set(P("/best"), 3), "", "best must be an object"},
      {"best individual missing", drop(P("/best"), "individual"), "", "best.individual"},
      {"best params missing", drop(P("/best"), "params"), "", "best.params is missing"},
      {"archive a number", set(P("/archive"), 3), "", "archive must be an array"},
      {"archive entry short", set(P("/archive/0"), json::array({"k", 1})), "", "archive[0]"},
      {"archive entry types", set(P("/archive/0"), json::array({1, 2, 3, 4})), "", "archive[0]"},
      {"archive reason", set(P("/archive/0"), json::array({"k", 1, nullptr, 5})), "", "archive"},
      {"archive losses", set(P("/archive/0/3"), json::array({"x"})), "", "archive[0][3]"},
      {"not JSON", {}, "{\"format\": ", "not valid JSON"},
      {"empty file", {}, "", "not valid JSON"},
  };
  const auto before = snapshot(dir);
  int refused = 0;
  for (const auto &c : cases) {
    std::string text = c.text;
    if (c.edit) {
      json s = state;
      c.edit(s);
      text = s.dump();
    }
    writeFileAtomic(dir / "state.json", text);
    auto withState = before;
    withState["state.json"] = text;
    INFO("case: " << c.name);
    try {
      runEvolution(smallConfig(4, 3), fakeEvaluate(), quiet(dir, true));
      FAIL("the resume was accepted");
    } catch (const evoc::Error &e) {
      std::string msg = e.what();
      INFO("message: " << msg);
      CHECK(msg.find("cannot resume") != std::string::npos);
      CHECK(msg.find(c.says) != std::string::npos);
      CHECK(msg.find("left the directory untouched") != std::string::npos);
      ++refused;
    }
    CHECK(snapshot(dir) == withState);
  }
  CHECK(refused == int(cases.size()));
  // The good state still resumes.
  writeFileAtomic(dir / "state.json", good);
  CHECK(runEvolution(smallConfig(4, 3), fakeEvaluate(), quiet(dir, true)).lastGeneration == 2);
}

TEST_CASE("fault: a log that lost committed generations is refused", "[resume][fault]") {
  auto root = scratchDir("damaged-log");
  const fs::path dir = root / "run";
  runEvolution(smallConfig(4, 3), fakeEvaluate(), quiet(dir));
  const std::string log = readTextFile(dir / "log.jsonl");
  std::vector<std::string> lines;
  for (size_t at = 0, nl; (nl = log.find('\n', at)) != std::string::npos; at = nl + 1)
    lines.push_back(log.substr(at, nl - at));
  REQUIRE(lines.size() == 3);
  auto join = [](const std::vector<std::string> &ls) {
    std::string t;
    for (const auto &l : ls)
      t += l + "\n";
    return t;
  };
  json stringGen = json::parse(lines[1]);
  stringGen["generation"] = "1";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "holds 0 of the 3"},                                        // emptied
      {join({lines[0], lines[1]}), "holds 2 of the 3"},                // last line lost
      {join({lines[0], lines[1]}) + lines[2].substr(0, 20), "line 3"}, // truncated in a line
      {join({lines[0], lines[2]}), "generation 2 where generation 1"}, // a line lost
      {join({lines[0], stringGen.dump(), lines[2]}), "line 2 of log.jsonl is damaged"},
      {join({lines[0], lines[1], lines[1], lines[2]}), "generation 1 where generation 2"},
  };
  const auto before = snapshot(dir);
  for (const auto &[text, says] : cases) {
    writeFileAtomic(dir / "log.jsonl", text);
    auto expected = before;
    expected["log.jsonl"] = text;
    INFO("log: " << text);
    CHECK_THROWS_WITH(runEvolution(smallConfig(4, 4), fakeEvaluate(), quiet(dir, true)),
                      Catch::Contains(says) && Catch::Contains("left the directory untouched") &&
                          Catch::Contains("restore log.jsonl"));
    CHECK(snapshot(dir) == expected);
  }
  fs::remove(dir / "log.jsonl");
  CHECK_THROWS_WITH(runEvolution(smallConfig(4, 4), fakeEvaluate(), quiet(dir, true)),
                    Catch::Contains("holds 0 of the 3"));
  CHECK(!fs::exists(dir / "log.jsonl"));
  // A line of a generation that never committed is dropped, as before.
  json next = json::parse(lines[2]);
  next["generation"] = 3;
  writeFileAtomic(dir / "log.jsonl", log + next.dump() + "\n");
  CHECK(runEvolution(smallConfig(4, 3), fakeEvaluate(), quiet(dir, true)).lastGeneration == 2);
  CHECK(readTextFile(dir / "log.jsonl") == log);
}

TEST_CASE("fault: a resume with other experiment settings is refused by name", "[resume][fault]") {
  auto root = scratchDir("experiment");
  const fs::path dir = root / "run";
  auto config = [](int generations, json experiment) {
    EvolutionConfig c = smallConfig(4, generations);
    c.experiment = std::move(experiment);
    return c;
  };
  const json base = {{"steps", 100},
                     {"dt", 0.004},
                     {"iterations", 5},
                     {"optimizer", {{"kind", "adam"}, {"lr", 0.01}}},
                     {"text_hash", "0123"}};
  runEvolution(config(2, base), fakeEvaluate(), quiet(dir));
  const auto before = snapshot(dir);
  auto changed = [&](const char *key, json v) {
    json e = base;
    e[json::json_pointer(key)] = v;
    return e;
  };
  CHECK_THROWS_WITH(
      runEvolution(config(3, changed("/steps", 200)), fakeEvaluate(), quiet(dir, true)),
      Catch::Contains("experiment.steps was 100, now 200"));
  CHECK_THROWS_WITH(
      runEvolution(config(3, changed("/dt", 0.002)), fakeEvaluate(), quiet(dir, true)),
      Catch::Contains("experiment.dt was 0.004, now 0.002"));
  CHECK_THROWS_WITH(
      runEvolution(config(3, changed("/iterations", 6)), fakeEvaluate(), quiet(dir, true)),
      Catch::Contains("experiment.iterations was 5, now 6"));
  CHECK_THROWS_WITH(
      runEvolution(config(3, changed("/optimizer/kind", "sgd")), fakeEvaluate(), quiet(dir, true)),
      Catch::Contains("experiment.optimizer.kind was \"adam\", now \"sgd\""));
  // The loss lives in the text: a changed hash, with a named setting first.
  CHECK_THROWS_WITH(
      runEvolution(config(3, changed("/text_hash", "4567")), fakeEvaluate(), quiet(dir, true)),
      Catch::Contains("experiment's text") && Catch::Contains("only evolve.generations"));
  json both = changed("/text_hash", "4567");
  both["steps"] = 300;
  CHECK_THROWS_WITH(runEvolution(config(3, both), fakeEvaluate(), quiet(dir, true)),
                    Catch::Contains("experiment.steps was 100, now 300"));
  CHECK(snapshot(dir) == before);
  // The same experiment with more generations goes on.
  CHECK(runEvolution(config(3, base), fakeEvaluate(), quiet(dir, true)).lastGeneration == 2);
  // A run from an evoc before the experiment settings (none stored) resumes.
  json s = json::parse(readTextFile(dir / "state.json"));
  s["config"].erase("experiment");
  writeFileAtomic(dir / "state.json", s.dump());
  CHECK(runEvolution(config(4, base), fakeEvaluate(), quiet(dir, true)).lastGeneration == 3);
}

TEST_CASE("fault: a creation killed before run.json is recoverable", "[resume][fault]") {
  auto root = scratchDir("creation");
  runEvolution(smallConfig(4, 2), fakeEvaluate(), quiet(root / "whole"));
  // Killed after the lock, before run.json: --out adopts it, and so does
  // --resume (nothing was recorded there), to the uninterrupted run.
  for (const char *leftover : {"", "run.json.tmp.12345"})
    for (bool resume : {false, true}) {
      fs::path d = root / fmt::format("lock{}{}", std::string(leftover).size(), resume);
      fs::create_directories(d);
      writeFileAtomic(d / ".lock", "");
      if (*leftover)
        writeFileAtomic(d / leftover, "{\"form");
      CHECK(runEvolution(smallConfig(4, 2), fakeEvaluate(), quiet(d, resume)).lastGeneration == 1);
      CHECK((!*leftover || !fs::exists(d / leftover)));
      CHECK(withoutTiming(d) == withoutTiming(root / "whole"));
    }
  // An empty folder is no run to resume: refused, and said so.
  fs::create_directories(root / "empty");
  CHECK_THROWS_WITH(runEvolution(smallConfig(4, 2), fakeEvaluate(), quiet(root / "empty", true)),
                    Catch::Contains("empty folder") && Catch::Contains("--out"));
  CHECK(fs::is_empty(root / "empty"));
  // Killed after run.json, before resolved.evo: --resume writes it and
  // starts from generation 0; --out points to --resume.
  fs::path d = root / "marker";
  RunDir::create(d, kTestSource);
  fs::remove(d / "resolved.evo");
  CHECK_THROWS_WITH(runEvolution(smallConfig(4, 2), fakeEvaluate(), quiet(d)),
                    Catch::Contains("--resume"));
  CHECK(runEvolution(smallConfig(4, 2), fakeEvaluate(), quiet(d, true)).lastGeneration == 1);
  CHECK(readTextFile(d / "resolved.evo") == kTestSource);
  CHECK(withoutTiming(d) == withoutTiming(root / "whole"));
  // Any other file still makes the directory not empty.
  fs::path other = root / "other";
  fs::create_directories(other);
  writeFileAtomic(other / "notes.tmp.12", "mine");
  CHECK_THROWS_WITH(runEvolution(smallConfig(4, 2), fakeEvaluate(), quiet(other)),
                    Catch::Contains("not empty"));
  CHECK(snapshot(other).size() == 1);
  CHECK(!fs::exists(other / ".lock"));
}

TEST_CASE("fault: two runs claiming one directory: exactly one owns it", "[resume][fault]") {
  auto root = scratchDir("claim");
  {
    // In one process: the first claim holds the lock while it lives.
    RunDir first = RunDir::create(root / "one", "// first\n");
    // As if the first had locked and not yet written: only its lock is there.
    fs::remove(root / "one" / "run.json");
    fs::remove(root / "one" / "resolved.evo");
    CHECK_THROWS_WITH(RunDir::create(root / "one", "// second\n"),
                      Catch::Contains("another evoc process") &&
                          Catch::Contains("choose another output directory"));
    CHECK(snapshot(root / "one").empty()); // the second wrote nothing
  }
  {
    // Released with the first: the directory (only its lock) is adopted.
    RunDir again = RunDir::create(root / "one", "// second\n");
    CHECK(readTextFile(root / "one" / "resolved.evo") == "// second\n");
  }
  // Two processes started together, many times: one wins, the other is
  // refused with a sentence (never "Success"), and the winner's run is whole.
  for (int round = 0; round < 8; ++round) {
    fs::path d = root / fmt::format("race{}", round);
    int ready[2], go[2];
    REQUIRE(::pipe(ready) == 0);
    REQUIRE(::pipe(go) == 0);
    pid_t pids[2];
    for (int k = 0; k < 2; ++k) {
      pids[k] = ::fork();
      REQUIRE(pids[k] >= 0);
      if (pids[k] == 0) {
        char c = 0;
        (void)!::write(ready[1], &c, 1);
        (void)!::read(go[0], &c, 1);
        try {
          runEvolution(smallConfig(4, 2, 7 + uint64_t(k)), fakeEvaluate(), quiet(d));
        } catch (const evoc::Error &e) {
          std::string m = e.what();
          bool clear = m.find("Success") == std::string::npos &&
                       (m.find("another evoc process") != std::string::npos ||
                        m.find("already holds an evoc run") != std::string::npos);
          if (!clear) // for the test's log: the message that was not clear
            std::fprintf(stderr, "refused with: %s\n", m.c_str());
          ::_exit(clear ? 3 : 4);
        } catch (...) {
          ::_exit(5);
        }
        ::_exit(0);
      }
    }
    char c[2] = {0, 0};
    REQUIRE(::read(ready[0], c, 1) == 1);
    REQUIRE(::read(ready[0], c, 1) == 1);
    REQUIRE(::write(go[1], c, 2) == 2);
    int codes[2];
    for (int k = 0; k < 2; ++k) {
      int status = 0;
      ::waitpid(pids[k], &status, 0);
      REQUIRE(WIFEXITED(status));
      codes[k] = WEXITSTATUS(status);
    }
    for (int fd : {ready[0], ready[1], go[0], go[1]})
      ::close(fd);
    INFO("round " << round << ": exit codes " << codes[0] << ", " << codes[1]);
    CHECK(((codes[0] == 0 && codes[1] == 3) || (codes[0] == 3 && codes[1] == 0)));
    // The directory holds the winner's run alone.
    const int winner = codes[0] == 0 ? 0 : 1;
    fs::path alone = root / fmt::format("alone{}", round);
    runEvolution(smallConfig(4, 2, 7 + uint64_t(winner)), fakeEvaluate(), quiet(alone));
    CHECK(withoutTiming(d) == withoutTiming(alone));
  }
}

TEST_CASE("fault: a cause is named when the run directory cannot be created", "[resume][fault]") {
  auto root = scratchDir("create-error");
  writeFileAtomic(root / "file", "x");
  CHECK_THROWS_WITH(RunDir::create(root / "file" / "run", "x"),
                    Catch::Contains("cannot create the run directory") &&
                        !Catch::Contains("Success"));
}

// The kill-point test: for every atomic write N of a small run, a process
// stopped right after write N (and, separately, just before its rename) is
// resumed and must end as the uninterrupted run, bit for bit (timing aside);
// so must one whose resume is stopped again at its first or second write.
static void killAtEveryWrite(const fs::path &root, const std::function<EvolutionConfig()> &config,
                             bool beforeRename, int &tried, int &exact) {
  runEvolution(config(), fakeEvaluate(), quiet(root / "whole"));
  const auto whole = withoutTiming(root / "whole");
  for (int n = 1;; ++n) {
    fs::path d = root / fmt::format("kill{}{}", beforeRename ? "b" : "a", n);
    int status = inChild({{"EVOC_FAULT_AFTER_WRITES", std::to_string(n)},
                          {"EVOC_FAULT_BEFORE_RENAME", beforeRename ? "1" : "0"}},
                         [&] { runEvolution(config(), fakeEvaluate(), quiet(d)); });
    REQUIRE(WIFEXITED(status));
    if (WEXITSTATUS(status) == 0)
      break; // the run has fewer than n writes: every kill point is done
    REQUIRE(WEXITSTATUS(status) == kFaultExitCode);
    ++tried;
    INFO("stopped " << (beforeRename ? "before the rename of" : "after") << " write " << n);
    // A kill before run.json leaves a directory a new run adopts; after it,
    // a resume continues. The first resume is itself stopped at its first
    // and (another copy) its second write, and resumed again.
    for (int again : {1, 2}) {
      fs::path d2 = d;
      d2 += fmt::format("-again{}", again);
      fs::copy(d, d2, fs::copy_options::recursive);
      int st = inChild({{"EVOC_FAULT_AFTER_WRITES", std::to_string(again)}}, [&] {
        runEvolution(config(), fakeEvaluate(), quiet(d2, RunDir::isRun(d2)));
      });
      REQUIRE(WIFEXITED(st));
      CHECK((WEXITSTATUS(st) == kFaultExitCode || WEXITSTATUS(st) == 0));
      ++tried;
      runEvolution(config(), fakeEvaluate(), quiet(d2, RunDir::isRun(d2)));
      bool same = withoutTiming(d2) == whole;
      CHECK(same);
      exact += same;
    }
    const bool resume = RunDir::isRun(d);
    runEvolution(config(), fakeEvaluate(), quiet(d, resume));
    auto got = withoutTiming(d);
    CHECK(got == whole);
    exact += got == whole;
  }
}

TEST_CASE("fault: stopped at every write of a run, resumed bit for bit", "[resume][fault]") {
  auto root = scratchDir("killpoints");
  int tried = 0, exact = 0;
  auto config = [] { return smallConfig(4, 3, 11); };
  killAtEveryWrite(root / "after", config, false, tried, exact);
  const int afterWrites = tried;
  killAtEveryWrite(root / "before", config, true, tried, exact);
  // 2 writes at creation and 7 per generation (population, best, two gait
  // pictures, fitness plot, log, state).
  // Each kill point is tried alone and with the resume stopped again at its
  // first or second write: 3 resumed runs per kill point.
  CHECK(afterWrites == 3 * (2 + 3 * 7));
  CHECK(tried == 2 * afterWrites);
  CHECK(exact == tried);
  WARN("stopped runs resumed: " << tried
                                << " (kill points x {alone, resume stopped again at "
                                   "its write 1, 2}), bit-exact: "
                                << exact);
}

TEST_CASE("fault: a MAP-Elites run stopped at every write resumes bit for bit",
          "[resume][fault][map_elites]") {
  auto root = scratchDir("killpoints-map-elites");
  int tried = 0, exact = 0;
  auto config = [] {
    auto c = mapElitesConfig(4, 3, 11);
    c.offspring = 3;
    return c;
  };
  killAtEveryWrite(root / "after", config, false, tried, exact);
  // 2 writes at creation and 8 per generation (population, best, elites.json,
  // two gait pictures, fitness plot, log, state).
  CHECK(tried == 3 * (2 + 3 * 8));
  killAtEveryWrite(root / "before", config, true, tried, exact);
  CHECK(exact == tried);
}

TEST_CASE("fault: a full disk stops a run cleanly; it resumes bit for bit", "[resume][fault]") {
  // A small tmpfs (needs root; skipped otherwise), full at several points of
  // the run: the run stops with an evoc::Error naming the full disk; with
  // space again, the run (resumed, or adopted when it had not reached
  // run.json) ends as an uninterrupted one.
  auto root = scratchDir("full");
  const fs::path mnt = root / "mnt";
  fs::create_directories(mnt);
  auto sh = [](const std::string &cmd) { return std::system((cmd + " 2>/dev/null").c_str()); };
  if (::geteuid() != 0 || sh(fmt::format("mount -t tmpfs -o size=4k tmpfs '{}'", mnt.string()))) {
    WARN("skipped: mounting a tmpfs needs root");
    return;
  }
  auto config = [] { return smallConfig(4, 3, 13); };
  runEvolution(config(), fakeEvaluate(), quiet(root / "whole"));
  const auto whole = withoutTiming(root / "whole");
  int full = 0;
  for (int kb : {4, 8, 12, 16, 24, 32, 48, 64, 96}) {
    INFO("tmpfs of " << kb << " KiB");
    REQUIRE(sh(fmt::format("mount -o remount,size={}k '{}'", kb, mnt.string())) == 0);
    const fs::path d = mnt / fmt::format("run{}", kb);
    try {
      runEvolution(config(), fakeEvaluate(), quiet(d));
    } catch (const evoc::Error &e) {
      CHECK_THAT(e.what(),
                 Catch::Contains("No space left on device") && Catch::Contains("free some space"));
      ++full;
    }
    for (const auto &e : fs::recursive_directory_iterator(d)) // no temporaries left
      CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);
    REQUIRE(sh(fmt::format("mount -o remount,size=16m '{}'", mnt.string())) == 0);
    runEvolution(config(), fakeEvaluate(), quiet(d, RunDir::isRun(d)));
    CHECK(withoutTiming(d) == whole);
    fs::remove_all(d);
  }
  sh(fmt::format("umount '{}'", mnt.string()));
  CHECK(full >= 5); // the disk was full at several points, not just once
}
