// Internal to runtime/mpi: the state of the ranks (Ranks::Impl), the
// messages' tags and kinds, and helpers shared by Ranks.cpp (the job),
// Spread.cpp (rank 0's side of a batch) and Serve.cpp (the other ranks').
#pragma once

#include "mpi/Ranks.h"
#include "mpi/Watch.h"

#include "support/Error.h"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

namespace evoc::mpi {

using Clock = std::chrono::steady_clock;

inline double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

/// Tags: a command to a rank, and its answer to rank 0.
constexpr int kCommand = 1, kAnswer = 2;
/// The first byte of every message.
enum Kind : uint8_t { Batch = 1, Params = 2, Stop = 3, Results = 4, ParamsOf = 5, Failed = 6 };

/// "designs 12, 15 and 17" (the first few of a long list).
std::string designList(const std::vector<uint64_t> &ids);

/// The test-only fault hook: EVOC_MPI_FAULT=RANK:GENERATION:MODE makes rank
/// RANK, on receiving its chunk of generation GENERATION (rank 0: once it
/// has sent the others theirs), die (`exit`: _exit(86), `kill`: SIGKILL,
/// `term`: SIGTERM from itself), fail its evaluation (`throw`) or leave
/// with an error of its own (`fail`, the other ranks only).
struct Fault {
  int rank = -1, generation = -1;
  std::string mode;
};
/// Reads it; throws evoc::Error when it is malformed (Serve.cpp).
Fault faultFromEnv();
/// Ends this process as `exit`, `kill` and `term` say; returns for the
/// other modes (Serve.cpp).
void dieAsFaultSays(const Fault &fault);

/// Everything a Ranks holds.
struct Ranks::Impl {
  bool mpi = false;    // MPI_Init was called (a launcher started us)
  bool broken = false; // a message failed: the job must be aborted
  bool agreed = false; // every rank started: finish() has ranks to stop
  bool finished = false;
  int rank = 0, size = 1, localRank = 0, localSize = 1;
  std::vector<std::string> hosts; // rank 0: every rank's host, after agree
  uint64_t serial = 0;            // rank 0: batches sent so far
  Fault fault;                    // the test-only fault hook
  std::unique_ptr<Watch> watch;   // who stopped the run, once all have started

  // Rank 0's measurements, summed over batches.
  struct Stats {
    int batches = 0;
    double wall = 0, slowest = 0, mean = 0, paramSeconds = 0;
    int paramFetches = 0;
    double bytesOut = 0, bytesBack = 0;
  } stats;

  std::string who(int r) const {
    if (size_t(r) < hosts.size() && !hosts[size_t(r)].empty())
      return fmt::format("rank {} (on {})", r, hosts[size_t(r)]);
    return fmt::format("rank {}", r);
  }

  void check(int rc, const std::string &what) {
    if (rc == MPI_SUCCESS)
      return;
    broken = true;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    throw Error(fmt::format("{} failed: {}", what, std::string(text, size_t(len))));
  }

  void send(int to, int tag, const std::vector<char> &bytes) {
    if (bytes.size() > size_t(INT_MAX))
      throw Error(fmt::format("a message to {} would be {} bytes, more than MPI sends at once",
                              who(to), bytes.size()));
    check(MPI_Send(bytes.data(), int(bytes.size()), MPI_BYTE, to, tag, MPI_COMM_WORLD),
          "sending to " + who(to));
  }

  // The next message with `tag` from `from` (MPI_ANY_SOURCE: anyone, who is
  // then put in `from`).
  std::vector<char> receive(int &from, int tag) {
    MPI_Status st;
    check(MPI_Probe(from, tag, MPI_COMM_WORLD, &st), from == MPI_ANY_SOURCE
                                                         ? std::string("waiting for the ranks")
                                                         : "waiting for " + who(from));
    int n = 0;
    MPI_Get_count(&st, MPI_BYTE, &n);
    std::vector<char> bytes(size_t(std::max(n, 0)));
    from = st.MPI_SOURCE;
    check(MPI_Recv(bytes.data(), n, MPI_BYTE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
          "receiving from " + who(from));
    return bytes;
  }

  /// Rank 0: one batch over the ranks (Spread.cpp).
  std::vector<evolve::Evaluation> spread(const evolve::EvaluateFn &local,
                                         const evolve::EvalBatch &batch);
  /// The other ranks: chunks and parameter requests until rank 0 says stop
  /// (Serve.cpp); returns the status it asks for.
  int serveBatches(const evolve::EvaluateFn &local);
  /// Rank 0: the parameters of item `item` of the chunk rank `from` trained
  /// in batch `serial` (design `id`).
  nlohmann::json fetchParams(int from, uint64_t serial, size_t item, uint64_t id);
};

} // namespace evoc::mpi
