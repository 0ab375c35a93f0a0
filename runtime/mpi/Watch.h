// Internal to runtime/mpi: the watch, how a run learns which rank stopped it
// (docs/cluster.md, "Faults"). MPI says nothing when a peer dies (Open MPI
// 4.1's receives just wait, and mpirun then stops every other rank with
// SIGTERM), so beside MPI every rank keeps one TCP connection to rank 0. A
// process that dies closes its end, whatever killed it; a rank stopped by a
// signal it can catch, or failing, says so first. A thread on each rank
// watches these connections and its own signals, says who stopped the run,
// and ends the process.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace evoc::mpi {

class Watch {
public:
  /// Every rank, once all have started (after Ranks::agree; collective over
  /// MPI_COMM_WORLD): connects the other ranks to rank 0 and starts
  /// watching. `hosts` is every rank's host on rank 0, this rank's own
  /// elsewhere. A rank that cannot reach rank 0 is named in a warning and
  /// not watched (the launcher's message then names it alone).
  Watch(int rank, int size, std::vector<std::string> hosts);
  /// Stops watching (after finish()).
  ~Watch();
  Watch(const Watch &) = delete;
  Watch &operator=(const Watch &) = delete;

  /// What the message would say of the run now: `phase` as in "rank 1 ended
  /// without a word while generation 3 was being evaluated"; on rank 0
  /// `where` is where that generation's designs were ("" when none is out).
  void setPhase(std::string phase, std::string where = "");
  /// Rank 0: the command that resumes the run; the other ranks are told it
  /// too, for the message they print if rank 0 dies.
  void setResume(const std::string &command);

  /// The run is ending on its own (finished, or with an error that is
  /// reported elsewhere): from now on the watch says nothing and the other
  /// ranks hear that this end is expected. If the watch is already stopping
  /// the process (a rank died, or a signal came), this waits for it: it
  /// never returns.
  void finish();
  /// Another rank, leaving with an error of its own: tells rank 0 why, then
  /// as finish().
  void failed(const std::string &why);

  struct State;

private:
  std::unique_ptr<State> s_;
};

} // namespace evoc::mpi
