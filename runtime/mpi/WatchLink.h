// Internal to runtime/mpi: the connections of the watch (Watch.h): how the
// other ranks reach rank 0 beside MPI, and the frames said on them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace evoc::mpi::link {

/// What a frame says:
///   another rank -> rank 0: Hello (its rank and rank 0's token), Signalled
///     (a SIGTERM came, and from whom), Failed (why it is leaving), Done;
///   rank 0 -> the others: Resume (rank 0's name and the resume command),
///     Reported (rank 0 has said why the run stops), Done.
enum Kind : uint8_t { Hello = 1, Signalled = 2, Failed = 3, Done = 4, Reported = 5, Resume = 6 };
// Who sent a signal: the launcher (this process's parent: mpirun, orted,
// slurmstepd), the process itself, or another.
enum From : uint8_t { Other = 0, Launcher = 1, Itself = 2 };

struct Head {
  uint8_t kind = 0, from = 0;
  uint16_t unused = 0;
  int32_t sig = 0, pid = 0; // Signalled: the signal and its sender; Hello: the rank
  uint32_t len = 0;         // bytes of text after the head
};
static_assert(sizeof(Head) == 16);

/// Sends a head of `kind` (`sig` in its sig field) and `text`; false when
/// the connection is gone. Never raises SIGPIPE.
bool sendFrame(int fd, Kind kind, const std::string &text = "", int32_t sig = 0);

/// One end of a connection: the rank at the other end, and the socket.
struct Link {
  int rank = 0, fd = -1;
};

/// Collective over MPI_COMM_WORLD, once all ranks have started: rank 0
/// listens on a port of the kernel's choosing and broadcasts its IPv4
/// addresses (those other hosts can reach first, loopback last), the port
/// and a random token; every other rank connects and shows the token and
/// its rank. Rank 0 gets a Link per rank that reached it (and names the
/// others, via `who`, in a warning); the others their Link to rank 0, or
/// none.
std::vector<Link> connectRanks(int rank, int size, const std::function<std::string(int)> &who);

} // namespace evoc::mpi::link
