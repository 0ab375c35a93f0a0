// The evoc binary as a child process (EvocProcess.h).
#include "EvocProcess.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

namespace fs = std::filesystem;

namespace evoc::test {

pid_t spawnProgram(std::vector<std::string> args, const char *errPath, const char *outPath) {
  std::vector<char *> argv;
  for (auto &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  REQUIRE(posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ) == 0);
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

pid_t spawnEvoc(std::vector<std::string> args, const char *errPath) {
  args.insert(args.begin(), EVOC_BINARY);
  return spawnProgram(std::move(args), errPath);
}

int waitExit(pid_t pid) {
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int runEvoc(std::vector<std::string> args) { return waitExit(spawnEvoc(std::move(args))); }

fs::path freshDir(const std::string &name) {
  fs::path d = fs::temp_directory_path() / ("evoc-e2e-" + name);
  fs::remove_all(d);
  return d;
}

int runEvocErr(std::vector<std::string> args, std::string &err) {
  fs::path errFile = fs::temp_directory_path() / ("evoc-e2e-stderr-" + std::to_string(getpid()));
  int rc = waitExit(spawnEvoc(std::move(args), errFile.c_str()));
  err = readText(errFile);
  fs::remove(errFile);
  return rc;
}

int runEvocOut(std::vector<std::string> args, std::string &out, std::string &err) {
  const std::string stem = fs::temp_directory_path() / ("evoc-e2e-" + std::to_string(getpid()));
  const std::string outFile = stem + "-stdout", errFile = stem + "-stderr";
  args.insert(args.begin(), EVOC_BINARY);
  int rc = waitExit(spawnProgram(std::move(args), errFile.c_str(), outFile.c_str()));
  out = readText(outFile);
  err = readText(errFile);
  fs::remove(outFile);
  fs::remove(errFile);
  return rc;
}

std::vector<nlohmann::json> logOf(const fs::path &dir, const std::string &file) {
  std::ifstream in(dir / file);
  std::vector<nlohmann::json> out;
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    for (const char *k : {"seconds", "elapsed_seconds", "train_seconds", "designs_per_second",
                          "robot_steps_per_second"})
      j.erase(k);
    out.push_back(j);
  }
  return out;
}

std::vector<std::string> withSets(std::vector<std::string> args,
                                  const std::vector<std::string> &sets) {
  for (const std::string &s : sets) {
    args.push_back("--set");
    args.push_back(s);
  }
  return args;
}

std::vector<std::string> smallRunOptions(int population, int generations, int steps, int iterations,
                                         int threads) {
  return {"--set",     "evolve.population=" + std::to_string(population),
          "--set",     "evolve.generations=" + std::to_string(generations),
          "--set",     "world.steps=" + std::to_string(steps),
          "--set",     "evolve.learn.iterations=" + std::to_string(iterations),
          "--threads", std::to_string(threads)};
}

std::vector<nlohmann::json> finishedLog(const fs::path &dir, std::size_t generations) {
  auto log = logOf(dir);
  REQUIRE(log.size() == generations);
  CHECK(std::isfinite(log.back()["best_fitness"].get<double>()));
  return log;
}

std::size_t lineCount(const fs::path &file) {
  std::ifstream in(file);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);)
    ++n;
  return n;
}

std::string readText(const fs::path &file) {
  std::ifstream in(file, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::size_t countOf(const std::string &text, const std::string &what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

} // namespace evoc::test
