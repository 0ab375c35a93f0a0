// The evoc binary as a child process, for the end-to-end tests: start it,
// wait for it, and read what its run directories hold.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <sys/types.h>

namespace evoc::test {

/// Starts the program argv[0] with `argv`, stdin empty, stderr into
/// `errPath` and stdout into `outPath` (default: both discarded).
pid_t spawnProgram(std::vector<std::string> argv, const char *errPath = "/dev/null",
                   const char *outPath = "/dev/null");
/// spawnProgram of evoc with `args`.
pid_t spawnEvoc(std::vector<std::string> args, const char *errPath = "/dev/null");
/// Waits for it: its exit code, or 128 + the signal that ended it.
int waitExit(pid_t pid);
int runEvoc(std::vector<std::string> args);
/// Runs evoc with stderr captured into `err`; returns the exit code.
int runEvocErr(std::vector<std::string> args, std::string &err);
/// Runs evoc with stdout captured into `out` and stderr into `err`.
int runEvocOut(std::vector<std::string> args, std::string &out, std::string &err);
/// A fresh (removed) scratch directory under the system's temporary folder.
std::filesystem::path freshDir(const std::string &name);
/// DIR/log.jsonl (or another JSON-lines file) without the fields that measure time.
std::vector<nlohmann::json> logOf(const std::filesystem::path &dir,
                                  const std::string &file = "log.jsonl");
/// `args` followed by "--set S" for each S of `sets`.
std::vector<std::string> withSets(std::vector<std::string> args,
                                  const std::vector<std::string> &sets);
/// The options of a small evolution for a test: --set evolve.population,
/// evolve.generations, world.steps, evolve.learn.iterations, and --threads.
std::vector<std::string> smallRunOptions(int population, int generations, int steps, int iterations,
                                         int threads);
/// logOf(dir) of a finished evolution: REQUIREs `generations` lines and a
/// finite best fitness in the last.
std::vector<nlohmann::json> finishedLog(const std::filesystem::path &dir, std::size_t generations);
std::size_t lineCount(const std::filesystem::path &file);
/// The whole of a file ("" when it cannot be read).
std::string readText(const std::filesystem::path &file);
/// How often `what` occurs in `text` (overlapping occurrences counted).
std::size_t countOf(const std::string &text, const std::string &what);

} // namespace evoc::test
