// The watch (Watch.h; the design is in docs/cluster.md, "The watch"): the
// SIGTERM handler, and the thread on each rank that follows its connections
// (WatchLink.h: every other rank to rank 0), decides who stopped the run,
// says so and ends the process. A connection that closes after neither Done
// nor Reported is a process that died: a SIGKILL, the kernel's
// out-of-memory killer, a crash or an exit all close it, on one host and
// across a network alike.
#include "mpi/Watch.h"
#include "mpi/WatchLink.h"

#include "support/Error.h"

#include <fmt/format.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <optional>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace evoc::mpi {

namespace {

using namespace link;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// How long rank 0, stopped by the launcher, waits for the other ranks to say
// whether the launcher stopped them too (mpirun sends SIGKILL 1 s after its
// SIGTERM); how long a rank that has said why the run stops waits for the
// launcher to end it before it ends itself (a launcher that does not end a
// job when one process dies: srun without --kill-on-bad-exit).
constexpr std::chrono::milliseconds kSettle = 500ms, kLauncherGrace = 10s;

// What the signal handler hands the watcher through its pipe (sig 0: stop
// watching).
struct Note {
  int32_t sig = 0, pid = 0, from = 0;
};

// For the handler, which may use nothing else: the pipe's write end, and
// on the other ranks the connection to rank 0.
std::atomic<int> gWake{-1}, gToRoot{-1};

extern "C" void onSignal(int sig, siginfo_t *info, void *) {
  int saved = errno;
  Head h;
  h.kind = Signalled;
  h.sig = sig;
  h.pid = info ? info->si_pid : 0;
  h.from = h.pid == getpid() ? Itself : h.pid != 0 && h.pid == getppid() ? Launcher : Other;
  // The rank says it at once (send and write are async-signal-safe); the
  // watcher does the rest.
  if (int fd = gToRoot.load(); fd >= 0)
    (void)!send(fd, &h, sizeof h, MSG_NOSIGNAL | MSG_DONTWAIT);
  Note n{sig, h.pid, h.from};
  if (int fd = gWake.load(); fd >= 0)
    (void)!write(fd, &n, sizeof n);
  errno = saved;
}

const char *signalName(int sig) {
  switch (sig) {
  case SIGTERM:
    return "SIGTERM";
  case SIGINT:
    return "SIGINT";
  case SIGHUP:
    return "SIGHUP";
  default:
    return "a signal";
  }
}

} // namespace

struct Watch::State {
  // What became of a peer: still there; ended as expected (Done, or on rank
  // 0's side Reported); stopped by the launcher's SIGTERM; or stopped on its
  // own: by a signal from elsewhere, an error, or without a word.
  enum Fate { Live, Ended, Stopped, SignalledBy, FailedWith, Gone };
  struct Peer {
    int rank = 0, fd = -1;
    bool open = true; // still watched (the watcher's; fd stays open until the end)
    std::string in;   // bytes received, not yet a whole frame
    Fate fate = Live;
    int sig = 0, pid = 0, from = 0;
    std::string why;
  };
  // Running; Stopping: the watcher ends the process (it has claimed the
  // message); Quiet: the run ends on its own.
  enum Mode { Running, Stopping, Quiet };

  int rank = 0, size = 1;
  std::vector<std::string> hosts;
  std::vector<Peer> peers; // rank 0: every connected rank; the others: rank 0
  int wake[2] = {-1, -1};
  std::atomic<int> mode{Running};
  std::thread thread;

  std::mutex m; // what follows, and writes to the connections
  std::string phase = "before the first generation was spread", where;
  std::string resume = "mpirun -np N evoc run FILE --resume DIR";
  std::string rootName = "rank 0";

  // Decided by the watcher only.
  std::optional<Note> own;        // a signal to this process
  std::vector<size_t> departures; // peers in the order they left
  bool reported = false;          // this process has said why the run stops
  std::optional<Clock::time_point> settleBy, endBy;

  std::string who(int r) const {
    if (rank != 0) // the others know their own host and rank 0's name
      return r == 0 ? rootName : fmt::format("rank {} (on {})", rank, hosts[0]);
    if (size_t(r) < hosts.size() && !hosts[size_t(r)].empty())
      return fmt::format("rank {} (on {})", r, hosts[size_t(r)]);
    return fmt::format("rank {}", r);
  }

  bool claim() {
    int expected = Running;
    return mode.compare_exchange_strong(expected, Stopping) || expected == Stopping;
  }

  void tellPeers(Kind kind, const std::string &text = "") {
    std::lock_guard<std::mutex> lock(m);
    for (const Peer &p : peers)
      sendFrame(p.fd, kind, text);
  }

  [[noreturn]] static void end(int status) {
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(status);
  }

  void say(const std::string &text) {
    std::fprintf(stderr, "evoc run: %s\n", text.c_str());
    std::fflush(stderr);
  }

  // The sentence that ends every message: "Generation 3's designs were
  // with ...; the run directory holds the generations committed before;
  // resume it with `...` (any number of ranks)".
  std::string tail() {
    std::lock_guard<std::mutex> lock(m);
    std::string t = fmt::format("{}the run directory holds the generations committed before; "
                                "resume it with `{}` (any number of ranks)",
                                where, resume);
    t[0] = char(std::toupper(static_cast<unsigned char>(t[0])));
    return t;
  }
  std::string phaseNow() {
    std::lock_guard<std::mutex> lock(m);
    return phase;
  }

  // What became of `p`, as a clause: "rank 2 (on n7) ended without a word
  // while generation 3 was being evaluated (...)".
  std::string fateOf(const Peer &p) {
    std::string whom = who(p.rank), when = phaseNow();
    switch (p.fate) {
    case SignalledBy:
      return fmt::format("{} was stopped by signal {} ({}) from {} {}", whom, p.sig,
                         signalName(p.sig),
                         p.from == Itself ? "itself" : fmt::format("process {}", p.pid), when);
    case FailedWith:
      return fmt::format("{} failed {}: {}", whom, when, p.why);
    default:
      return fmt::format("{} ended without a word {} (killed with SIGKILL, out of memory, crashed "
                         "or exited: the launcher's message says which)",
                         whom, when);
    }
  }

  // Rank 0, from its peers and its own signal: whether to say something
  // and end the process.
  void decideRoot() {
    const Peer *culprit = nullptr;
    for (size_t i : departures)
      if (peers[i].fate >= SignalledBy) {
        culprit = &peers[i];
        break;
      }
    if (!reported && culprit) {
      if (!claim())
        return;
      say(fateOf(*culprit) + "; rank 0 stopped because of it. " + tail());
      reported = true;
      tellPeers(Reported);
      endBy = Clock::now() + kLauncherGrace;
    }
    if (own && !reported) {
      if (!claim())
        end(128 + own->sig);
      std::string me = who(0), when = phaseNow();
      if (own->from != Launcher) {
        say(fmt::format(
            "{} was stopped by signal {} ({}) from {} {}. {}", me, own->sig, signalName(own->sig),
            own->from == Itself ? "itself" : fmt::format("process {}", own->pid), when, tail()));
      } else {
        // The launcher stops every rank when one dies: wait a moment for
        // the other ranks' word (a rank's death may be heard after the
        // launcher's signal, from another host).
        settleBy = settleBy.value_or(Clock::now() + kSettle);
        std::vector<std::string> silent;
        for (const Peer &p : peers)
          if (p.fate == Live)
            silent.push_back(who(p.rank));
        if (!silent.empty() && Clock::now() < *settleBy)
          return;
        std::string others =
            silent.empty()
                ? "no other rank had stopped on its own: the job itself was stopped (mpirun "
                  "interrupted, a time limit)"
                : fmt::format("{} did not answer (a failed node? the launcher's message says)",
                              fmt::join(silent, ", "));
        say(fmt::format("{} was stopped by its launcher (signal {}, {}) {}; {}. {}", me, own->sig,
                        signalName(own->sig), when, others, tail()));
      }
      tellPeers(Reported);
      end(128 + own->sig);
    }
    if (reported && own)
      end(128 + own->sig);
    if (reported && endBy && Clock::now() >= *endBy)
      end(1);
  }

  // Another rank, from rank 0's connection and its own signal.
  void decideOther() {
    const Peer *root = peers.empty() ? nullptr : &peers[0];
    if (!reported && root && root->fate == Gone) {
      if (!claim())
        return;
      reported = true;
      if (rank == 1) // one rank says it
        say(fateOf(*root) + fmt::format("; {} stopped because of it. ", who(1)) + tail());
      endBy = Clock::now() + kLauncherGrace;
    }
    if (!reported && root && root->fate == Ended && mode.load() == Running && !endBy)
      endBy = Clock::now() + kLauncherGrace + kLauncherGrace; // rank 0 is saying why
    if (own) {
      if (!claim())
        end(128 + own->sig);
      // Stopped by the launcher: wait a moment in case rank 0 died and this
      // rank is to say so. Stopped otherwise: rank 0 says so.
      settleBy = settleBy.value_or(Clock::now() + kSettle);
      if (own->from == Launcher && root && root->fate == Live && Clock::now() < *settleBy)
        return;
      end(128 + own->sig);
    }
    if (endBy && Clock::now() >= *endBy && mode.load() != Quiet)
      end(1);
  }

  void onFrame(size_t i, const Head &h, std::string text) {
    Peer &p = peers[i];
    if (p.fate != Live)
      return;
    if (h.kind == Resume) {
      std::lock_guard<std::mutex> lock(m);
      size_t nl = text.find('\n');
      rootName = text.substr(0, nl);
      resume = nl == std::string::npos ? resume : text.substr(nl + 1);
      return;
    }
    if (h.kind == Signalled) {
      p.fate = h.from == Launcher ? Stopped : SignalledBy;
      p.sig = h.sig;
      p.pid = h.pid;
      p.from = h.from;
    } else if (h.kind == Failed) {
      p.fate = FailedWith;
      p.why = std::move(text);
    } else if (h.kind == Done || h.kind == Reported) {
      p.fate = Ended;
    } else {
      return;
    }
    departures.push_back(i);
  }

  void readPeer(size_t i) {
    Peer &p = peers[i];
    char buf[4096];
    ssize_t k = recv(p.fd, buf, sizeof buf, 0);
    if (k < 0 && errno == EINTR)
      return;
    if (k <= 0) { // closed (or reset): the process is gone
      if (p.fate == Live) {
        p.fate = Gone;
        departures.push_back(i);
      }
      p.in.clear();
      p.open = false;
      return;
    }
    p.in.append(buf, size_t(k));
    while (p.in.size() >= sizeof(Head)) {
      Head h;
      std::memcpy(&h, p.in.data(), sizeof h);
      if (p.in.size() < sizeof h + h.len)
        break;
      std::string text = p.in.substr(sizeof h, h.len);
      p.in.erase(0, sizeof h + h.len);
      onFrame(i, h, std::move(text));
    }
  }

  void run() {
    for (;;) {
      std::vector<pollfd> q = {{wake[0], POLLIN, 0}};
      std::vector<size_t> which;
      for (size_t i = 0; i < peers.size(); ++i)
        if (peers[i].open) {
          q.push_back({peers[i].fd, POLLIN, 0});
          which.push_back(i);
        }
      int timeout = -1;
      for (const auto &t : {settleBy, endBy})
        if (t) {
          auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(*t - Clock::now());
          int wait = int(std::max<int64_t>(1, ms.count() + 1));
          timeout = timeout < 0 ? wait : std::min(timeout, wait);
        }
      if (poll(q.data(), q.size(), timeout) < 0 && errno != EINTR)
        return;
      if (q[0].revents & POLLIN) {
        Note n;
        if (read(wake[0], &n, sizeof n) == ssize_t(sizeof n)) {
          if (n.sig == 0 && mode.load() != Stopping)
            return; // the Watch is being destroyed (when stopping, the watcher ends the process)
          if (!own && n.sig != 0)
            own = n;
        }
      }
      for (size_t k = 1; k < q.size(); ++k)
        if (q[k].revents & (POLLIN | POLLHUP | POLLERR))
          readPeer(which[k - 1]);
      if (mode.load() == Quiet) {
        if (own)
          end(128 + own->sig);
        continue;
      }
      if (rank == 0)
        decideRoot();
      else
        decideOther();
    }
  }
};

Watch::Watch(int rank, int size, std::vector<std::string> hosts) : s_(std::make_unique<State>()) {
  State &s = *s_;
  s.rank = rank;
  s.size = size;
  s.hosts = std::move(hosts);

  for (link::Link l : link::connectRanks(rank, size, [&s](int r) { return s.who(r); }))
    s.peers.push_back({l.rank, l.fd});

  // The handler, then the watcher.
  if (pipe2(s.wake, O_CLOEXEC) != 0)
    throw Error(fmt::format("the watch could not make a pipe: {}", std::strerror(errno)));
  fcntl(s.wake[1], F_SETFL, fcntl(s.wake[1], F_GETFL) | O_NONBLOCK);
  gWake.store(s.wake[1]);
  if (rank != 0 && !s.peers.empty())
    gToRoot.store(s.peers[0].fd);
  struct sigaction sa {};
  sa.sa_sigaction = onSignal;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
  s.thread = std::thread([&s] { s.run(); });
  if (rank == 0)
    setResume(s.resume);
}

Watch::~Watch() {
  State &s = *s_;
  Note quit;
  (void)!write(s.wake[1], &quit, sizeof quit);
  if (s.thread.joinable())
    s.thread.join();
  signal(SIGTERM, SIG_DFL);
  gToRoot.store(-1);
  gWake.store(-1);
  for (State::Peer &p : s.peers)
    close(p.fd);
  close(s.wake[0]);
  close(s.wake[1]);
}

void Watch::setPhase(std::string phase, std::string where) {
  std::lock_guard<std::mutex> lock(s_->m);
  s_->phase = std::move(phase);
  s_->where = std::move(where);
}

void Watch::setResume(const std::string &command) {
  {
    std::lock_guard<std::mutex> lock(s_->m);
    s_->resume = command;
  }
  if (s_->rank == 0)
    s_->tellPeers(Resume, s_->who(0) + "\n" + command);
}

void Watch::finish() {
  State &s = *s_;
  int expected = State::Running;
  if (s.mode.compare_exchange_strong(expected, State::Quiet)) {
    s.tellPeers(Done);
    return;
  }
  if (expected == State::Quiet)
    return;
  for (;;) // the watcher is saying why the run stops, and will end the process
    std::this_thread::sleep_for(1h);
}

void Watch::failed(const std::string &why) {
  s_->tellPeers(Failed, why);
  State &s = *s_;
  int expected = State::Running;
  if (s.mode.compare_exchange_strong(expected, State::Quiet) || expected == State::Quiet)
    return;
  for (;;)
    std::this_thread::sleep_for(1h);
}

} // namespace evoc::mpi
