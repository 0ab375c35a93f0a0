// The processes of one `evoc run`: the ranks of an MPI job (`mpirun -np N
// evoc run ...`) or this process alone. Rank 0 runs the engine (the run
// directory, the random stream, breeding, selection) with an EvaluateFn that
// splits each generation's batch over the ranks (Partition.h), evaluates its
// own chunk and gathers the rest in batch order; every other rank serves
// chunks. A design's results do not depend on the rank that trained it, so
// a run writes the same files with any number of ranks (docs/cluster.md).
#pragma once

#include "evolve/engine/Evolution.h"

#include <memory>
#include <string>

namespace evoc::mpi {

/// Whether this evoc was built with MPI.
bool available();

/// The number of processes an MPI launcher started this one among, from its
/// environment (OMPI_COMM_WORLD_SIZE, PMI_SIZE, or SLURM_STEP_NUM_TASKS
/// under PMIx); 0 when no launcher started it.
int launcherSize();

/// The ranks of one run. Without MPI (or without a launcher) this process
/// is rank 0 of 1 and every call is trivial.
class Ranks {
public:
  /// Joins the MPI job if a launcher started this process. Throws
  /// evoc::Error when one did but this evoc was built without MPI (N ranks
  /// would each write the same run directory).
  Ranks();
  ~Ranks();
  Ranks(const Ranks &) = delete;
  Ranks &operator=(const Ranks &) = delete;

  int rank() const;
  int size() const;
  bool root() const { return rank() == 0; }
  /// The rank among those on this node, and how many share the node.
  int localRank() const;
  int localSize() const;

  /// Threads per rank for `--threads N`: N, or for 0 the cores the launcher
  /// bound this rank to, or else this node's cores divided among the ranks
  /// on it (at least 1).
  int threads(int requested) const;

  /// With --backend cuda, before anything opens the GPU: one GPU per rank,
  /// the local rank's (CUDA_VISIBLE_DEVICES narrowed to the local rank's
  /// entry of its list, or set to the local rank). Returns what it chose,
  /// for the log ("" for one rank).
  std::string pickGpu();

  /// Rank 0: the command that resumes the run (e.g. "evoc run FILE --resume
  /// DIR"), for the message it prints if the launcher stops it mid-run.
  void setResumeHint(std::string command);

  /// Every rank calls this once after its setup (compiling the
  /// experiment): ok, or why not. Rank 0 prints the reasons of the ranks
  /// that failed. True on every rank when all succeeded.
  bool agree(bool ok, const std::string &why);

  /// Rank 0: an EvaluateFn over all ranks that evaluates its own chunk with
  /// `local`. A rank that fails (an exception in its evaluation, a broken
  /// connection) makes it throw evoc::Error naming the rank and its
  /// designs, after every other rank has answered. One rank: `local`.
  evolve::EvaluateFn spread(evolve::EvaluateFn local);

  /// Every other rank: evaluates what rank 0 sends with `local` until rank
  /// 0 says stop. Returns the exit status rank 0 asks for (0: the run
  /// succeeded, 1: it failed).
  int serve(const evolve::EvaluateFn &local);

  /// Rank 0, once, on every path (after agree): tells the others to stop
  /// with status 0 (ok) or 1. After a broken connection the destructor
  /// aborts the job instead. If a rank has died (or a signal came) and the
  /// watch is saying so, it waits for the watch to end the process.
  void finish(bool ok);

  /// Rank 0: a line on the time spent communicating ("" for one rank).
  std::string statsLine() const;

  struct Impl;

private:
  std::unique_ptr<Impl> impl_;
};

} // namespace evoc::mpi
