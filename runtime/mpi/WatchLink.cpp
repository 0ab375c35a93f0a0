// The connections of the watch (WatchLink.h): TCP from every other rank to
// rank 0, set up once over MPI, and the frames said on them.
#include "mpi/WatchLink.h"

#include <fmt/format.h>
#include <mpi.h>

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <random>
#include <sys/socket.h>
#include <unistd.h>

namespace evoc::mpi::link {

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// Moves all n bytes at p through `io(p, n)` (one send or recv of up to n
// bytes, returning what that returned), retrying on EINTR; false when the
// connection fails or closes first.
template <class Byte, class Io> bool transferAll(Byte *p, size_t n, Io io) {
  while (n > 0) {
    ssize_t k = io(p, n);
    if (k < 0 && errno == EINTR)
      continue;
    if (k <= 0)
      return false;
    p += k;
    n -= size_t(k);
  }
  return true;
}

bool sendAll(int fd, const void *data, size_t n) {
  return transferAll(static_cast<const char *>(data), n,
                     [fd](const char *p, size_t left) { return send(fd, p, left, MSG_NOSIGNAL); });
}

// Reads exactly n bytes within `ms` milliseconds.
bool readFull(int fd, void *out, size_t n, int ms) {
  auto until = Clock::now() + std::chrono::milliseconds(ms);
  return transferAll(static_cast<char *>(out), n, [&](char *p, size_t left) -> ssize_t {
    pollfd q{fd, POLLIN, 0};
    int wait =
        int(std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count());
    if (wait <= 0 || poll(&q, 1, wait) <= 0)
      return 0; // out of time (or poll failed): not retried
    return recv(fd, p, left, 0);
  });
}

// Rank 0's IPv4 addresses, those other hosts can reach first, loopback last.
std::vector<std::string> ownAddresses() {
  std::vector<std::string> out, loop;
  ifaddrs *list = nullptr;
  if (getifaddrs(&list) == 0) {
    for (ifaddrs *i = list; i; i = i->ifa_next) {
      if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP))
        continue;
      char text[INET_ADDRSTRLEN];
      auto *a = reinterpret_cast<sockaddr_in *>(i->ifa_addr);
      if (inet_ntop(AF_INET, &a->sin_addr, text, sizeof text))
        ((i->ifa_flags & IFF_LOOPBACK) ? loop : out).push_back(text);
    }
    freeifaddrs(list);
  }
  out.insert(out.end(), loop.begin(), loop.end());
  if (out.empty())
    out.push_back("127.0.0.1");
  return out;
}

// Another rank: a connection to one of rank 0's addresses, or -1.
int connectTo(const std::string &address, int port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(uint16_t(port));
  if (inet_pton(AF_INET, address.c_str(), &a.sin_addr) != 1)
    return -1;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0)
    return -1;
  int rc = connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof a);
  if (rc != 0 && errno == EINPROGRESS) {
    pollfd q{fd, POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof err;
    rc = poll(&q, 1, 3000) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0
             ? 0
             : -1;
  }
  if (rc != 0) {
    close(fd);
    return -1;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

} // namespace

bool sendFrame(int fd, Kind kind, const std::string &text, int32_t sig) {
  Head h;
  h.kind = kind;
  h.sig = sig;
  h.len = uint32_t(text.size());
  std::string bytes(reinterpret_cast<const char *>(&h), sizeof h);
  return sendAll(fd, (bytes + text).data(), bytes.size() + text.size());
}

std::vector<Link> connectRanks(int rank, int size, const std::function<std::string(int)> &who) {
  std::vector<Link> links;
  // Rank 0 listens on a port of its own choosing and tells the others where
  // (every IPv4 address it has) and a token they must show.
  std::string offer;
  int listener = -1;
  if (rank == 0) {
    listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_ANY);
    socklen_t len = sizeof a;
    if (listener >= 0 && bind(listener, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0 &&
        listen(listener, SOMAXCONN) == 0 &&
        getsockname(listener, reinterpret_cast<sockaddr *>(&a), &len) == 0) {
      std::random_device rd;
      offer = fmt::format("{} {} {}", (uint64_t(rd()) << 32) | rd(), ntohs(a.sin_port),
                          fmt::join(ownAddresses(), ","));
    } else {
      if (listener >= 0)
        close(listener);
      listener = -1;
      std::fprintf(stderr,
                   "evoc run: warning: rank 0 could not open a port to watch the other ranks "
                   "(%s); if one dies, only the launcher's message names it\n",
                   std::strerror(errno));
    }
  }
  int n = int(offer.size());
  MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
  offer.resize(size_t(n));
  MPI_Bcast(offer.data(), n, MPI_CHAR, 0, MPI_COMM_WORLD);

  int connected = 0;
  if (rank != 0 && !offer.empty()) {
    unsigned long long token = 0;
    int port = 0;
    char list[4096] = {0};
    if (std::sscanf(offer.c_str(), "%llu %d %4095s", &token, &port, list) == 3) {
      std::string rest = list;
      for (size_t at = 0; at <= rest.size() && connected == 0;) {
        size_t comma = std::min(rest.find(',', at), rest.size());
        int fd = connectTo(rest.substr(at, comma - at), port);
        at = comma + 1;
        if (fd < 0)
          continue;
        std::string t = std::to_string(token);
        if (!sendFrame(fd, Hello, t, rank)) {
          close(fd);
          continue;
        }
        links.push_back({0, fd});
        connected = 1;
      }
    }
  }
  std::vector<int> all(size_t(rank == 0 ? size : 0));
  MPI_Gather(&connected, 1, MPI_INT, all.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);

  if (rank == 0 && listener >= 0) {
    int expected = 0;
    for (int r = 1; r < size; ++r)
      expected += all[size_t(r)];
    std::string token = offer.substr(0, offer.find(' '));
    std::vector<bool> seen(size_t(size), false);
    auto until = Clock::now() + 10s;
    while (expected > 0 && Clock::now() < until) {
      pollfd q{listener, POLLIN, 0};
      if (poll(&q, 1, 1000) <= 0)
        continue;
      int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0)
        continue;
      Head h;
      std::string t(token.size(), '\0');
      if (readFull(fd, &h, sizeof h, 2000) && h.kind == Hello && h.len == token.size() &&
          readFull(fd, t.data(), t.size(), 2000) && t == token && h.sig > 0 && h.sig < size &&
          !seen[size_t(h.sig)]) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        seen[size_t(h.sig)] = true;
        links.push_back({h.sig, fd});
        --expected;
      } else {
        close(fd);
      }
    }
    close(listener);
    std::vector<std::string> unwatched;
    for (int r = 1; r < size; ++r)
      if (!seen[size_t(r)])
        unwatched.push_back(who(r));
    if (!unwatched.empty())
      std::fprintf(stderr,
                   "evoc run: warning: %s could not reach rank 0 over TCP; if %s, only the "
                   "launcher's message names it\n",
                   fmt::format("{}", fmt::join(unwatched, ", ")).c_str(),
                   unwatched.size() == 1 ? "it dies" : "one of them dies");
  }
  return links;
}

} // namespace evoc::mpi::link
