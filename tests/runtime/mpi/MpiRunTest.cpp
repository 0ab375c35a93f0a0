// `mpirun -np N evoc run` end to end (runtime/mpi, docs/cluster.md): 1, 2
// and 3 ranks write the same log.jsonl, best.json and population files as a
// run without mpirun (with and without inherited weights, whose parameters
// come back from the ranks on demand); a rank whose evaluation fails stops
// the run with a message naming the rank and its designs; whichever rank
// dies mid-generation (killed, stopped, exiting, failing; rank 0 too), the
// message names it, and the directory resumes, with any number of ranks, to
// exactly the uninterrupted run; refusals are said once.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "EvocProcess.h"
#include "JsonFiles.h"

namespace fs = std::filesystem;
using namespace evoc::test;

namespace {

// Short enough for CI on two shared cores: about a second per generation.
const std::vector<std::string> kSmall = smallRunOptions(6, 4, 120, 4, 1);

std::string example() { return std::string(EVOC_SOURCE_DIR) + "/examples/eldir_small.evo"; }

std::vector<std::string> runArgs(std::vector<std::string> args) {
  std::vector<std::string> out = {"run", example()};
  out.insert(out.end(), args.begin(), args.end());
  out.insert(out.end(), kSmall.begin(), kSmall.end());
  return out;
}

// mpirun -np N evoc ARGS with stderr into `err`; its exit code. As root,
// Open MPI needs to be told that this is meant (CI runs as root).
int mpirun(int np, const std::vector<std::string> &evocArgs, std::string &err,
           const std::string &fault = "") {
  if (geteuid() == 0) {
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  }
  // Containers often forbid the cross-process memory copies Open MPI's
  // shared-memory transport tries first (it then warns or fails); these
  // messages are small, so plain copies cost nothing.
  setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", 0);
  if (fault.empty())
    unsetenv("EVOC_MPI_FAULT");
  else
    setenv("EVOC_MPI_FAULT", fault.c_str(), 1);
  std::vector<std::string> args = {EVOC_MPIEXEC, "--oversubscribe", "-np", std::to_string(np),
                                   EVOC_BINARY};
  args.insert(args.end(), evocArgs.begin(), evocArgs.end());
  fs::path errFile = fs::temp_directory_path() / ("evoc-mpi-stderr-" + std::to_string(getpid()));
  int rc = waitExit(spawnProgram(std::move(args), errFile.c_str()));
  unsetenv("EVOC_MPI_FAULT");
  err = readText(errFile);
  fs::remove(errFile);
  return rc;
}

// Everything a run decides: the log (timing fields aside), the best design
// with its parameters, every generation's population and the checkpoint
// (its elapsed_seconds aside).
void checkSameRun(const fs::path &a, const fs::path &b, int generations) {
  INFO(a.string() << " vs " << b.string());
  CHECK(logOf(a) == logOf(b));
  CHECK(logOf(a).size() == size_t(generations));
  CHECK(readJson(a / "best.json") == readJson(b / "best.json"));
  for (int g = 0; g < generations; ++g) {
    char gen[32];
    std::snprintf(gen, sizeof gen, "gen_%04d/population.json", g);
    CHECK(readJson(a / gen) == readJson(b / gen));
  }
  nlohmann::json sa = readJson(a / "state.json"), sb = readJson(b / "state.json");
  sa.erase("elapsed_seconds");
  sb.erase("elapsed_seconds");
  CHECK(sa == sb);
}

// Whether `text` holds `pattern`, where HOST stands for a host name.
bool says(const std::string &text, const std::string &pattern) {
  std::string re;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern.compare(i, 4, "HOST") == 0) {
      re += "[^ )]+";
      i += 3;
    } else {
      if (std::strchr("\\^$.|?*+()[]{}", pattern[i]))
        re += '\\';
      re += pattern[i];
    }
  }
  return std::regex_search(text, std::regex(re));
}

} // namespace

TEST_CASE("mpirun -np 1, 2, 3: the same run as without mpirun", "[mpi]") {
  fs::path plain = freshDir("mpi-plain");
  REQUIRE(runEvoc(runArgs({"--out", plain.string()})) == 0);
  for (int np : {1, 2, 3}) {
    fs::path dir = freshDir("mpi-np" + std::to_string(np));
    std::string err;
    INFO("mpirun -np " << np);
    REQUIRE(mpirun(np, runArgs({"--out", dir.string()}), err) == 0);
    INFO(err);
    checkSameRun(plain, dir, 4);
    // Spread over the ranks (one rank runs alone: nothing to report).
    if (np > 1)
      CHECK(err.find(std::to_string(np) + " ranks, 4 generations spread") != std::string::npos);
    else
      CHECK(err.find("generations spread") == std::string::npos);
  }
}

TEST_CASE("mpirun -np 2 with inherited weights: parameters come back from the ranks", "[mpi]") {
  const std::vector<std::string> inherit = {"--set", "evolve.learn.inherit=weights"};
  fs::path plain = freshDir("mpi-inherit-plain"), dir = freshDir("mpi-inherit-np2");
  auto args = [&](const fs::path &d) {
    std::vector<std::string> a = {"--out", d.string()};
    a.insert(a.end(), inherit.begin(), inherit.end());
    return runArgs(a);
  };
  REQUIRE(runEvoc(args(plain)) == 0);
  std::string err;
  REQUIRE(mpirun(2, args(dir), err) == 0);
  INFO(err);
  checkSameRun(plain, dir, 4);
  // Every survivor's weights were fetched (inherit = weights keeps them).
  CHECK(err.find(" 0 parameter fetches") == std::string::npos);
  CHECK(readJson(dir / "state.json")["population"][0].contains("params"));
}

TEST_CASE("mpirun: a rank whose evaluation fails stops the run, naming the rank and its "
          "designs; the directory resumes with other ranks to the uninterrupted run",
          "[mpi][fault]") {
  fs::path plain = freshDir("mpi-fault-plain"), dir = freshDir("mpi-throw");
  REQUIRE(runEvoc(runArgs({"--out", plain.string()})) == 0);
  std::string err;
  int rc = mpirun(2, runArgs({"--out", dir.string()}), err, "1:2:throw");
  INFO(err);
  CHECK(rc != 0);
  CHECK(err.find("evoc run: error: rank 1 (on ") != std::string::npos);
  CHECK(err.find("failed evaluating design") != std::string::npos);
  CHECK(err.find(" of generation 2 (its robots 0, 1, ... in that order): a fault injected by "
                 "EVOC_MPI_FAULT=1:2:throw") != std::string::npos);
  // Generations 0 and 1 are committed, generation 2 is not recorded.
  CHECK(lineCount(dir / "log.jsonl") == 2);
  CHECK(readJson(dir / "state.json")["generation"] == 1);
  CHECK(!fs::exists(dir / "gen_0002"));

  REQUIRE(mpirun(3, runArgs({"--resume", dir.string()}), err) == 0);
  checkSameRun(plain, dir, 4);
}

TEST_CASE("mpirun -np 3: whichever rank dies, the message names it and its host; resumed with 1, "
          "2 or 3 ranks (or without mpirun) the run ends as the uninterrupted one",
          "[mpi][fault]") {
  fs::path plain = freshDir("mpi-kill-plain");
  REQUIRE(runEvoc(runArgs({"--out", plain.string()})) == 0);
  // Every fault strikes in generation 1, while the other ranks evaluate it.
  const std::string during = " while generation 1 was being evaluated";
  const std::string unheard = " ended without a word" + during +
                              " (killed with SIGKILL, out of memory, crashed or exited: the "
                              "launcher's message says which)";
  const std::string becauseOf = "; rank 0 stopped because of it. Generation 1's designs were "
                                "with rank 0 (on HOST): design";
  struct Case {
    const char *fault;
    int resumeNp; // 0: without mpirun
    std::string says;
    std::string orSays = {}; // the other wording a race between the ranks allows, if any
  };
  const std::vector<Case> cases = {
      {"1:1:kill", 1, "evoc run: rank 1 (on HOST)" + unheard + becauseOf},
      {"2:1:kill", 2, "evoc run: rank 2 (on HOST)" + unheard + becauseOf},
      {"1:1:term", 3,
       "evoc run: rank 1 (on HOST) was stopped by signal 15 (SIGTERM) from itself" + during +
           becauseOf},
      {"2:1:exit", 0, "evoc run: rank 2 (on HOST)" + unheard + becauseOf},
      {"2:1:fail", 2,
       "evoc run: rank 2 (on HOST) failed" + during +
           ": a fault injected by EVOC_MPI_FAULT=2:1:fail" + becauseOf},
      // Rank 0 killed: rank 1 says so; stopped by a signal, it says so itself.
      // Rank 1 may have sent generation 1's answers before rank 0 died (its
      // designs take milliseconds), and then says that instead.
      {"0:1:kill", 3,
       "evoc run: rank 0 (on HOST)" + unheard +
           "; rank 1 (on HOST) stopped because of it. The run directory holds the generations "
           "committed before; resume it with `mpirun -np N evoc run ",
       "evoc run: rank 0 (on HOST) ended without a word after rank 1 had evaluated its designs "
       "of generation 1 (killed with SIGKILL, out of memory, crashed or exited: the launcher's "
       "message says which); rank 1 (on HOST) stopped because of it. The run directory holds "
       "the generations committed before; resume it with `mpirun -np N evoc run "},
      {"0:1:term", 1,
       "evoc run: rank 0 (on HOST) was stopped by signal 15 (SIGTERM) from itself" + during +
           ". Generation 1's designs were with rank 0 (on HOST): design"},
  };
  for (const Case &c : cases) {
    fs::path dir = freshDir(std::string("mpi-kill-") + c.fault[0] + "-" + (c.fault + 4));
    std::string err;
    INFO("mpirun -np 3 with EVOC_MPI_FAULT=" << c.fault);
    int rc = mpirun(3, runArgs({"--out", dir.string()}), err, c.fault);
    INFO(err);
    CHECK(rc != 0);
    CHECK((says(err, c.says) || (!c.orSays.empty() && says(err, c.orSays))));
    // Said once, and no other rank is blamed.
    CHECK(countOf(err, "evoc run: rank ") == 1);
    CHECK(err.find("resume it with `mpirun -np N evoc run " + example() + " --resume " +
                   dir.string()) != std::string::npos);
    // The files stop at the last committed generation.
    CHECK(lineCount(dir / "log.jsonl") == 1);
    CHECK(readJson(dir / "state.json")["generation"] == 0);
    if (c.resumeNp > 0)
      REQUIRE(mpirun(c.resumeNp, runArgs({"--resume", dir.string()}), err) == 0);
    else
      REQUIRE(runEvoc(runArgs({"--resume", dir.string()})) == 0);
    checkSameRun(plain, dir, 4);
  }
}

TEST_CASE("mpirun: a bad fault hook is an error on the ranks that read it, named by rank 0",
          "[mpi]") {
  fs::path dir = freshDir("mpi-badfault");
  std::string err;
  CHECK(mpirun(3, runArgs({"--out", dir.string()}), err, "1:x:boom") == 1);
  INFO(err);
  // Rank 0 started; it names each rank that could not, and why.
  for (const char *rank : {"rank 1 (on ", "rank 2 (on "})
    CHECK(err.find(rank) != std::string::npos);
  CHECK(countOf(err, "could not start: EVOC_MPI_FAULT must be RANK:GENERATION:MODE") == 2);
  CHECK(!fs::exists(dir));
}

TEST_CASE("mpirun: what rank 0 refuses, and what no rank can compile, is said once; every rank "
          "exits 1 and nothing is written",
          "[mpi]") {
  fs::path taken = freshDir("mpi-taken"), never = freshDir("mpi-never");
  fs::create_directories(taken);
  std::ofstream(taken / "notes.txt") << "mine\n";
  std::string err;
  CHECK(mpirun(3, runArgs({"--out", taken.string()}), err) == 1);
  CHECK(countOf(err, "exists and is not empty") == 1);
  CHECK(readText(taken / "notes.txt") == "mine\n");
  CHECK(!fs::exists(taken / "run.json"));

  CHECK(mpirun(3, runArgs({"--out", never.string(), "--set", "world.dt=-1"}), err) == 1);
  INFO(err);
  CHECK(countOf(err, "world.dt must be positive") == 1);
  CHECK(err.find("could not start") == std::string::npos); // the ranks failed alike
  CHECK(!fs::exists(never));
}
