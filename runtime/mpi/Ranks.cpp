// Ranks over MPI (Ranks.h): joining the job, the start every rank agrees
// on, the stop, threads and GPUs per rank. A batch's way out and back is in
// Spread.cpp (rank 0) and Serve.cpp (the others); a rank that dies is named
// by the watch (Watch.h). Messages are bytes (Wire.h): a command to a rank
// (tag kCommand) and its answer (tag kAnswer). The communicator returns
// errors instead of aborting, so a broken connection becomes an evoc::Error
// naming the rank.
#include "mpi/RanksImpl.h"
#include "mpi/Wire.h"

#include <cstdio>
#include <cstdlib>
#include <sched.h>
#include <thread>

namespace evoc::mpi {

bool available() { return true; }

Ranks::Ranks() : impl_(std::make_unique<Impl>()) {
  if (launcherSize() == 0)
    return; // started alone: no MPI at all, evoc as without it
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    throw Error("MPI could not start (MPI_Init_thread failed)");
  impl_->mpi = true;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &impl_->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &impl_->size);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, impl_->rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &impl_->localRank);
  MPI_Comm_size(node, &impl_->localSize);
  MPI_Comm_free(&node);
}

Ranks::~Ranks() {
  if (!impl_->mpi)
    return;
  impl_->watch.reset();
  if (impl_->broken)
    MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Finalize();
}

int Ranks::rank() const { return impl_->rank; }
int Ranks::size() const { return impl_->size; }
int Ranks::localRank() const { return impl_->localRank; }
int Ranks::localSize() const { return impl_->localSize; }

int Ranks::threads(int requested) const {
  if (requested > 0 || impl_->size == 1)
    return requested;
  // A rank the launcher bound to some cores (mpirun binds to a core for
  // up to 2 ranks, Slurm to --cpus-per-task) uses those; an unbound one its
  // share of the node.
  cpu_set_t set;
  int mine = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0;
  int cores = std::max(1, int(std::thread::hardware_concurrency()));
  if (mine > 0 && mine < cores)
    return mine;
  return std::max(1, cores / impl_->localSize);
}

std::string Ranks::pickGpu() {
  if (impl_->size == 1)
    return "";
  const char *v = std::getenv("CUDA_VISIBLE_DEVICES");
  std::vector<std::string> list;
  for (std::string s = v ? v : ""; !s.empty();) {
    size_t comma = s.find(',');
    list.push_back(s.substr(0, comma));
    s = comma == std::string::npos ? "" : s.substr(comma + 1);
  }
  std::string mine = list.empty() ? std::to_string(impl_->localRank)
                                  : list[size_t(impl_->localRank) % list.size()];
  setenv("CUDA_VISIBLE_DEVICES", mine.c_str(), 1);
  return fmt::format("rank {}: GPU {} (local rank {} of {})", impl_->rank, mine, impl_->localRank,
                     impl_->localSize);
}

void Ranks::setResumeHint(std::string command) {
  if (impl_->watch)
    impl_->watch->setResume(command);
}

bool Ranks::agree(bool ok, const std::string &why) {
  Impl &m = *impl_;
  if (m.size == 1)
    return ok;
  char host[MPI_MAX_PROCESSOR_NAME] = {0};
  int len = 0;
  MPI_Get_processor_name(host, &len);
  std::string reason = why;
  try { // a malformed hook is the other ranks' setup failing (they say why)
    m.fault = faultFromEnv();
  } catch (const Error &e) {
    if (ok && m.rank > 0) {
      reason = e.what();
      ok = false;
    }
  }
  uint8_t allOk = ok ? 1 : 0;
  if (m.rank == 0) {
    m.hosts.assign(size_t(m.size), "");
    m.hosts[0] = std::string(host, size_t(len));
    for (int k = 1; k < m.size; ++k) {
      int from = MPI_ANY_SOURCE;
      std::vector<char> bytes = m.receive(from, kAnswer);
      Reader r(bytes, m.who(from));
      bool theirs = r.u8() != 0;
      m.hosts[size_t(from)] = r.str();
      std::string theirReason = r.str();
      if (!theirs && ok) // when rank 0 failed too, its own message says why
        std::fprintf(stderr, "evoc run: %s could not start: %s\n", m.who(from).c_str(),
                     theirReason.c_str());
      if (!theirs)
        allOk = 0;
    }
  } else {
    Writer w;
    w.u8(ok ? 1 : 0);
    w.str(std::string(host, size_t(len)));
    w.str(reason);
    m.send(0, kAnswer, w.bytes());
  }
  m.check(MPI_Bcast(&allOk, 1, MPI_BYTE, 0, MPI_COMM_WORLD), "agreeing on the start");
  m.agreed = allOk != 0;
  if (m.agreed)
    m.watch = std::make_unique<Watch>(
        m.rank, m.size,
        m.rank == 0 ? m.hosts : std::vector<std::string>{std::string(host, size_t(len))});
  return m.agreed;
}

void Ranks::finish(bool ok) {
  Impl &m = *impl_;
  if (m.size == 1 || m.rank != 0 || !m.agreed || m.finished)
    return;
  m.finished = true;
  m.watch->finish(); // (waits, if the watch is already stopping the run)
  if (m.broken)
    return; // answers are in flight: the destructor aborts the job (after the caller's message)
  Writer w;
  w.u8(Stop);
  w.u8(ok ? 0 : 1);
  for (int r = 1; r < m.size; ++r)
    m.send(r, kCommand, w.bytes());
}

std::string Ranks::statsLine() const {
  const Impl::Stats &s = impl_->stats;
  if (impl_->size == 1 || s.batches == 0)
    return "";
  double n = s.batches;
  return fmt::format(
      "evoc run: {} ranks, {} generations spread: per generation {:.3f} s, of which the slowest "
      "rank's evaluation {:.3f} s (mean rank {:.3f} s) and communication {:.2f} ms ({:.1f} kB "
      "out, {:.1f} kB back); {} parameter fetches, {:.2f} ms each",
      impl_->size, s.batches, s.wall / n, s.slowest / n, s.mean / n, 1e3 * (s.wall - s.slowest) / n,
      s.bytesOut / n / 1e3, s.bytesBack / n / 1e3, s.paramFetches,
      s.paramFetches > 0 ? 1e3 * s.paramSeconds / s.paramFetches : 0.0);
}

} // namespace evoc::mpi
