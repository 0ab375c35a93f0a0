// Run directory I/O: atomic writes (write, fsync, rename, fsync directory).
#include "evolve/record/RunDir.h"

#include "support/Error.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/file.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace evoc::evolve {

static constexpr const char *kFormat = "evoc-run";

[[noreturn]] static void ioError(const std::string &what, const fs::path &p) {
  const int e = errno;
  std::string hint = e == ENOSPC || e == EDQUOT || e == EFBIG
                         ? "; the disk is full: free some space, then run again (a run that "
                           "has started continues with --resume DIR; nothing committed is lost)"
                         : "; check the path and its permissions";
  throw Error(fmt::format("cannot {} '{}': {}{}", what, p.string(), std::strerror(e), hint));
}

static void fsyncDir(const fs::path &dir) {
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0)
    ioError("open directory", dir);
  ::fsync(fd); // best effort: some file systems refuse fsync on directories
  ::close(fd);
}

// The fault-injection hook (RunDir.h): the writes counted so far, and the
// process stops at the one EVOC_FAULT_AFTER_WRITES names.
static long faultWrites = 0;

static void faultPoint(bool beforeRename) {
  const char *n = std::getenv("EVOC_FAULT_AFTER_WRITES");
  if (!n || !*n)
    return;
  const char *b = std::getenv("EVOC_FAULT_BEFORE_RENAME");
  const bool wantBefore = b && std::strcmp(b, "1") == 0;
  if (beforeRename)
    ++faultWrites;
  if (wantBefore == beforeRename && std::strtol(n, nullptr, 10) == faultWrites)
    ::_exit(kFaultExitCode);
}

void writeFileAtomic(const fs::path &path, std::string_view text) {
  fs::path tmp = path;
  tmp += fmt::format(".tmp.{}", ::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    ioError("create", tmp);
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      errno = e;
      ioError("write", tmp);
    }
    done += size_t(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmp.c_str());
    ioError("flush", tmp);
  }
  faultPoint(/*beforeRename=*/true);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    ioError("rename into", path);
  }
  fsyncDir(path.parent_path());
  faultPoint(/*beforeRename=*/false);
}

std::string readTextFile(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(
        fmt::format("cannot read '{}'; check that it exists and is readable", path.string()));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

static nlohmann::json readJson(const fs::path &p) {
  try {
    return nlohmann::json::parse(readTextFile(p));
  } catch (const nlohmann::json::exception &e) {
    throw Error(fmt::format("'{}' is not valid JSON ({}); the run directory is damaged", p.string(),
                            e.what()));
  }
}

bool RunDir::isRun(const fs::path &dir) {
  std::error_code ec;
  if (!fs::is_regular_file(dir / "run.json", ec))
    return false;
  try {
    auto j = nlohmann::json::parse(readTextFile(dir / "run.json"));
    return j.is_object() && j.value("format", "") == kFormat;
  } catch (...) {
    return false;
  }
}

// What a creation killed before its run.json leaves behind: the lock file
// and the temporary of an interrupted write. Such a directory is empty.
static bool isCreationLeftover(const fs::path &p) {
  std::string name = p.filename().string();
  return name == ".lock" || name.rfind("run.json.tmp.", 0) == 0;
}

RunDir RunDir::create(const fs::path &dir, std::string_view resolvedSource) {
  std::error_code ec;
  auto notADirectory = [&] {
    return Error(fmt::format("'{}' exists and is not a directory; choose another "
                             "output directory",
                             dir.string()));
  };
  auto alreadyARun = [&] {
    return Error(fmt::format("'{}' already holds an evoc run; continue it with "
                             "--resume {} or choose another output directory",
                             dir.string(), dir.string()));
  };
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw notADirectory();
  // create_directories reports "already exists" as success, so two runs
  // racing to create DIR both get here; the lock below picks one.
  fs::create_directories(dir, ec);
  if (ec)
    throw Error(fmt::format("cannot create the run directory '{}': {}; check the path and "
                            "its permissions, or choose another output directory",
                            dir.string(), ec.message()));
  if (!fs::is_directory(dir, ec))
    throw notADirectory();
  auto checkEmpty = [&] {
    if (isRun(dir))
      throw alreadyARun();
    for (const auto &e : fs::directory_iterator(dir, ec))
      if (!isCreationLeftover(e.path()))
        throw Error(fmt::format("'{}' exists and is not empty; evoc never overwrites "
                                "it; choose another output directory",
                                dir.string()));
  };
  checkEmpty(); // before the lock file, so a directory refused is untouched
  // Claim DIR: lock, then check again that it is empty, so that of two runs
  // started together exactly one owns it.
  RunDir r(dir);
  if (!r.tryLock())
    throw Error(fmt::format("'{}' is being written by another evoc process (another run "
                            "claimed it first); choose another output directory",
                            dir.string()));
  checkEmpty();
  r.removeStaleTemporaries();
  // The marker first: from here on DIR is a run, and a resume of a run
  // killed before it wrote resolved.evo writes it (Recorder) and starts
  // from generation 0.
  writeFileAtomic(dir / "run.json",
                  nlohmann::json{{"format", kFormat}, {"version", 1}}.dump(2) + "\n");
  writeFileAtomic(dir / "resolved.evo", resolvedSource);
  return r;
}

RunDir RunDir::open(const fs::path &dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw Error(fmt::format("cannot resume '{}': no such directory", dir.string()));
  if (!isRun(dir))
    throw Error(fmt::format(
        "cannot resume '{}': it is not an evoc run directory "
        "(no valid run.json){}; evoc leaves it untouched",
        dir.string(),
        fs::is_empty(dir, ec) ? " but an empty folder: start a run there with --out" : ""));
  return RunDir(dir);
}

RunDir RunDir::resume(const fs::path &dir, std::string_view resolvedSource) {
  std::error_code ec;
  if (fs::is_directory(dir, ec) && !isRun(dir)) {
    // A start killed before its run.json: only evoc's own leftovers are
    // there, so nothing is lost by starting the run in it now (create
    // checks again, under the lock).
    bool leftovers = false, foreign = false;
    for (const auto &e : fs::directory_iterator(dir, ec))
      (isCreationLeftover(e.path()) ? leftovers : foreign) = true;
    if (leftovers && !foreign && !ec)
      return create(dir, resolvedSource);
  }
  return open(dir);
}

bool RunDir::tryLock() {
  if (lockFd_)
    return true;
  fs::path p = dir_ / ".lock";
  int fd = ::open(p.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    ioError("create the lock file", p);
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return false;
  }
  lockFd_ = std::shared_ptr<int>(new int(fd), [](int *f) {
    ::close(*f);
    delete f;
  });
  return true;
}

void RunDir::lock() {
  if (!tryLock())
    throw Error(fmt::format("'{}' is in use by another evoc process; wait for it to end "
                            "(or stop it) before resuming this run",
                            dir_.string()));
}

std::string RunDir::resolvedSource() const { return readTextFile(dir_ / "resolved.evo"); }

bool RunDir::hasState() const {
  std::error_code ec;
  return fs::is_regular_file(dir_ / "state.json", ec);
}

nlohmann::json RunDir::readState() const { return readJson(dir_ / "state.json"); }

void RunDir::writeState(const nlohmann::json &state) const {
  writeFileAtomic(dir_ / "state.json", state.dump() + "\n");
}

fs::path RunDir::generationDir(int generation) const {
  return dir_ / fmt::format("gen_{:04d}", generation);
}

void RunDir::writePopulation(int generation, const nlohmann::json &population) const {
  fs::path g = generationDir(generation);
  std::error_code ec;
  fs::create_directories(g, ec);
  if (ec)
    throw Error(fmt::format("cannot create '{}': {}; {}", g.string(), ec.message(),
                            ec.value() == ENOSPC
                                ? "the disk is full: free some space, then continue the run "
                                  "with --resume"
                                : "check the run directory's permissions"));
  writeFileAtomic(g / "population.json", population.dump() + "\n");
}

void RunDir::writeBest(const nlohmann::json &best) const {
  writeFileAtomic(dir_ / "best.json", best.dump(1) + "\n");
}

void RunDir::writeFile(const std::string &name, std::string_view text) const {
  writeFileAtomic(dir_ / name, text);
}

static bool isTemporary(const fs::path &p) {
  std::string name = p.filename().string();
  size_t at = name.rfind(".tmp.");
  return at != std::string::npos && at + 5 < name.size() &&
         name.find_first_not_of("0123456789", at + 5) == std::string::npos;
}

void RunDir::removeStaleTemporaries() const {
  std::error_code ec;
  for (const auto &e : fs::directory_iterator(dir_, ec)) {
    const std::string name = e.path().filename().string();
    if (e.is_directory(ec) && (name.rfind("gen_", 0) == 0 || name == "gaits")) {
      for (const auto &f : fs::directory_iterator(e.path(), ec))
        if (isTemporary(f.path()))
          fs::remove(f.path(), ec);
    } else if (isTemporary(e.path())) {
      fs::remove(e.path(), ec);
    }
  }
}

std::vector<nlohmann::json> RunDir::readLog() const {
  std::vector<nlohmann::json> out;
  std::error_code ec;
  if (!fs::exists(dir_ / "log.jsonl", ec))
    return out;
  std::istringstream in(readTextFile(dir_ / "log.jsonl"));
  std::string line;
  while (std::getline(in, line))
    if (!line.empty())
      out.push_back(nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false));
  return out;
}

void RunDir::writeLog(const std::vector<nlohmann::json> &records) const {
  std::string text;
  for (const auto &r : records)
    text += r.dump() + "\n";
  writeFileAtomic(dir_ / "log.jsonl", text);
}

} // namespace evoc::evolve
