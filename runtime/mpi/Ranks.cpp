// Ranks over MPI (Ranks.h). Rank 0 sends each rank its chunk of the batch,
// evaluates its own, and gathers the answers; the parameters of a remote
// design are fetched only when the engine asks for them (a new best, or a
// survivor under inherit = weights), before the next batch. Messages are
// bytes (Wire.h): a command to a rank (tag kCommand) and its answer (tag
// kAnswer). The communicator returns errors instead of aborting, so a broken
// connection becomes an evoc::Error naming the rank.
#include "mpi/Ranks.h"

#include "mpi/Partition.h"
#include "mpi/Wire.h"

#include "support/Error.h"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sched.h>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace evoc::mpi {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kCommand = 1, kAnswer = 2;
enum Kind : uint8_t { Batch = 1, Params = 2, Stop = 3, Results = 4, ParamsOf = 5, Failed = 6 };

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// "designs 12, 15 and 17" (the first few of a long list).
std::string designList(const std::vector<uint64_t> &ids) {
  std::string s = ids.size() == 1 ? "design " : "designs ";
  size_t shown = std::min<size_t>(ids.size(), 8);
  for (size_t i = 0; i < shown; ++i)
    s += (i == 0 ? "" : i + 1 == ids.size() ? " and " : ", ") + std::to_string(ids[i]);
  if (shown < ids.size())
    s += fmt::format(" and {} more", ids.size() - shown);
  return s;
}

// What rank 0 prints if the launcher stops it (mpirun ends every rank when
// one dies, with SIGTERM): written by the signal handler, so prepared in
// advance, two buffers swapped atomically.
char gBanner[2][2048];
std::atomic<int> gBannerAt{-1};

void setBanner(const std::string &text) {
  int next = gBannerAt.load() == 0 ? 1 : 0;
  std::snprintf(gBanner[next], sizeof gBanner[next], "%s", text.c_str());
  gBannerAt.store(next);
}

extern "C" void onTerminate(int sig) {
  int at = gBannerAt.load();
  if (at >= 0) {
    ssize_t ignored = write(2, gBanner[at], std::strlen(gBanner[at]));
    (void)ignored;
  }
  _exit(128 + sig);
}

// The test-only fault hook: EVOC_MPI_FAULT=RANK:GENERATION:MODE makes rank
// RANK, on receiving its chunk of generation GENERATION, die (`exit`:
// _exit(86), `kill`: SIGKILL) or fail its evaluation (`throw`).
struct Fault {
  int rank = -1, generation = -1;
  std::string mode;
};

Fault faultFromEnv() {
  Fault f;
  const char *v = std::getenv("EVOC_MPI_FAULT");
  if (!v || !*v)
    return f;
  char mode[16] = {0};
  if (std::sscanf(v, "%d:%d:%15s", &f.rank, &f.generation, mode) != 3 ||
      (std::strcmp(mode, "exit") != 0 && std::strcmp(mode, "kill") != 0 &&
       std::strcmp(mode, "throw") != 0))
    throw Error(fmt::format("EVOC_MPI_FAULT must be RANK:GENERATION:MODE with MODE exit, kill or "
                            "throw; got '{}'",
                            v));
  f.mode = mode;
  return f;
}

} // namespace

struct Ranks::Impl {
  bool mpi = false;    // MPI_Init was called (a launcher started us)
  bool broken = false; // a message failed: the job must be aborted
  bool agreed = false; // every rank started: finish() has ranks to stop
  bool finished = false;
  int rank = 0, size = 1, localRank = 0, localSize = 1;
  std::vector<std::string> hosts;      // rank 0: every rank's host, after agree
  uint64_t serial = 0;                 // rank 0: batches sent so far
  Fault fault;                         // other ranks: the test-only fault hook
  std::string resume = "--resume DIR"; // rank 0: how to resume, for the banner

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

  std::vector<evolve::Evaluation> spread(const evolve::EvaluateFn &local,
                                         const evolve::EvalBatch &batch);
  nlohmann::json fetchParams(int from, uint64_t serial, size_t item, uint64_t id);
};

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
  if (impl_->rank == 0 && impl_->size > 1) {
    setBanner("evoc run: rank 0 was stopped before the first generation was spread\n");
    std::signal(SIGTERM, onTerminate);
  }
}

Ranks::~Ranks() {
  if (!impl_->mpi)
    return;
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

void Ranks::setResumeHint(std::string command) { impl_->resume = std::move(command); }

bool Ranks::agree(bool ok, const std::string &why) {
  Impl &m = *impl_;
  if (m.size == 1)
    return ok;
  char host[MPI_MAX_PROCESSOR_NAME] = {0};
  int len = 0;
  MPI_Get_processor_name(host, &len);
  std::string reason = why;
  if (m.rank > 0) {
    try { // a malformed hook is this rank's setup failing
      m.fault = faultFromEnv();
    } catch (const Error &e) {
      if (ok)
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
  return m.agreed;
}

std::vector<evolve::Evaluation> Ranks::Impl::spread(const evolve::EvaluateFn &local,
                                                    const evolve::EvalBatch &batch) {
  const auto start = Clock::now();
  const uint64_t me = ++serial;
  std::vector<double> costs;
  for (const runtime::Robot &r : batch.robots)
    costs.push_back(robotCost(r));
  std::vector<std::vector<size_t>> chunks = balanceByCost(costs, size);
  std::vector<std::vector<uint64_t>> ids(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r)
    for (size_t i : chunks[size_t(r)])
      ids[size_t(r)].push_back(batch.ids[i]);

  std::string plan = fmt::format("evoc run: rank 0 was stopped while generation {} was being "
                                 "evaluated; its designs were with",
                                 batch.generation);
  for (int r = 0; r < size; ++r)
    if (!ids[size_t(r)].empty())
      plan += fmt::format(" {}: {};", who(r), designList(ids[size_t(r)]));
  setBanner(plan + " the run directory holds the generations committed before; resume it with `" +
            resume + "` (any number of ranks)\n");

  for (int r = 1; r < size; ++r) {
    if (chunks[size_t(r)].empty())
      continue;
    Writer w;
    w.u8(Batch);
    w.u64(me);
    writeBatch(w, subBatch(batch, chunks[size_t(r)]));
    stats.bytesOut += double(w.bytes().size());
    send(r, kCommand, w.bytes());
  }

  std::vector<evolve::Evaluation> out(batch.robots.size());
  std::string failure;
  const auto localStart = Clock::now();
  if (!chunks[0].empty()) {
    try {
      std::vector<evolve::Evaluation> mine = local(subBatch(batch, chunks[0]));
      if (mine.size() != chunks[0].size())
        throw Error(fmt::format("the evaluate function returned {} results for {} robots",
                                mine.size(), chunks[0].size()));
      for (size_t k = 0; k < mine.size(); ++k)
        out[chunks[0][k]] = std::move(mine[k]);
    } catch (const std::exception &e) {
      failure = fmt::format("{} failed evaluating {} of generation {}: {}", who(0),
                            designList(ids[0]), batch.generation, e.what());
    }
  }
  double slowest = since(localStart), sum = slowest;

  for (int pending = int(std::count_if(chunks.begin() + 1, chunks.end(),
                                       [](const auto &c) { return !c.empty(); }));
       pending > 0; --pending) {
    int from = MPI_ANY_SOURCE;
    std::vector<char> bytes = receive(from, kAnswer);
    stats.bytesBack += double(bytes.size());
    // Anything but a result or a reported failure leaves answers in
    // flight: the job cannot go on (finish() aborts it).
    broken = true;
    Reader r(bytes, who(from));
    const std::vector<size_t> &items = chunks[size_t(from)];
    uint8_t kind = r.u8();
    if (kind == Failed) {
      std::string why = r.str();
      if (failure.empty())
        failure = fmt::format("{} failed evaluating {} of generation {}: {}", who(from),
                              designList(ids[size_t(from)]), batch.generation, why);
      broken = false;
      continue;
    }
    if (kind != Results || r.u64() != me)
      throw Error(fmt::format("{} answered out of turn (internal error)", who(from)));
    double seconds = r.f64();
    uint64_t n = r.u64();
    if (n != items.size())
      throw Error(fmt::format("{} returned {} results for {} robots", who(from), n, items.size()));
    for (size_t k = 0; k < items.size(); ++k) {
      evolve::Evaluation e = readEvaluation(r);
      if (e.params.is_null()) {
        uint64_t id = batch.ids[items[k]];
        e.paramsFn = [this, from, me, k, id] { return fetchParams(from, me, k, id); };
      }
      out[items[k]] = std::move(e);
    }
    r.end();
    broken = false;
    slowest = std::max(slowest, seconds);
    sum += seconds;
  }
  if (!failure.empty())
    throw Error(failure);
  ++stats.batches;
  stats.wall += since(start);
  stats.slowest += slowest;
  stats.mean += sum / double(std::count_if(chunks.begin(), chunks.end(),
                                           [](const auto &c) { return !c.empty(); }));
  setBanner(fmt::format("evoc run: rank 0 was stopped after generation {} was evaluated; the "
                        "run directory holds the generations committed before; resume it with "
                        "`{}` (any number of ranks)\n",
                        batch.generation, resume));
  return out;
}

nlohmann::json Ranks::Impl::fetchParams(int from, uint64_t batchSerial, size_t item, uint64_t id) {
  if (batchSerial != serial)
    throw Error(fmt::format("internal error: the parameters of design {} were asked for after "
                            "the next batch",
                            id));
  const auto start = Clock::now();
  Writer w;
  w.u8(Params);
  w.u64(batchSerial);
  w.u64(item);
  send(from, kCommand, w.bytes());
  int src = from;
  std::vector<char> bytes = receive(src, kAnswer);
  Reader r(bytes, who(from));
  uint8_t kind = r.u8();
  if (kind == Failed)
    throw Error(
        fmt::format("{} could not give the parameters of design {}: {}", who(from), id, r.str()));
  if (kind != ParamsOf) {
    broken = true;
    throw Error(fmt::format("{} answered out of turn (internal error)", who(from)));
  }
  nlohmann::json params = r.json();
  r.end();
  stats.paramSeconds += since(start);
  ++stats.paramFetches;
  stats.bytesBack += double(bytes.size());
  return params;
}

evolve::EvaluateFn Ranks::spread(evolve::EvaluateFn local) {
  if (impl_->size == 1)
    return local;
  Impl *m = impl_.get();
  return [m, local = std::move(local)](const evolve::EvalBatch &batch) {
    return m->spread(local, batch);
  };
}

int Ranks::serve(const evolve::EvaluateFn &local) {
  Impl &m = *impl_;
  const Fault &fault = m.fault;
  std::vector<evolve::Evaluation> last;
  uint64_t lastSerial = 0;
  for (;;) {
    int from = 0;
    std::vector<char> bytes = m.receive(from, kCommand);
    Reader r(bytes, "rank 0");
    uint8_t kind = r.u8();
    Writer w;
    if (kind == Stop) {
      return r.u8();
    } else if (kind == Batch) {
      lastSerial = r.u64();
      evolve::EvalBatch batch = readBatch(r);
      r.end();
      last.clear();
      const auto start = Clock::now();
      try {
        if (fault.rank == m.rank && fault.generation == batch.generation) {
          if (fault.mode == "exit")
            _exit(86);
          if (fault.mode == "kill")
            raise(SIGKILL);
          throw Error(fmt::format("a fault injected by EVOC_MPI_FAULT={}:{}:throw", fault.rank,
                                  fault.generation));
        }
        last = local(batch);
        if (last.size() != batch.robots.size())
          throw Error(fmt::format("the evaluate function returned {} results for {} robots",
                                  last.size(), batch.robots.size()));
        w.u8(Results);
        w.u64(lastSerial);
        w.f64(since(start));
        w.u64(last.size());
        for (const evolve::Evaluation &e : last)
          writeEvaluation(w, e);
      } catch (const std::exception &e) {
        last.clear();
        w = Writer();
        w.u8(Failed);
        w.str(e.what());
      }
    } else if (kind == Params) {
      uint64_t serial = r.u64(), item = r.u64();
      r.end();
      try {
        if (serial != lastSerial || item >= last.size())
          throw Error("no such design in the last batch (internal error)");
        const evolve::Evaluation &e = last[item];
        nlohmann::json params = !e.params.is_null() ? e.params
                                : e.paramsFn        ? e.paramsFn()
                                                    : nlohmann::json();
        w.u8(ParamsOf);
        w.json(params);
      } catch (const std::exception &e) {
        w = Writer();
        w.u8(Failed);
        w.str(e.what());
      }
    } else {
      throw Error(
          fmt::format("rank 0 sent a command of unknown kind {} (internal error)", int(kind)));
    }
    m.send(0, kAnswer, w.bytes());
  }
}

void Ranks::finish(bool ok) {
  Impl &m = *impl_;
  if (m.size == 1 || m.rank != 0 || !m.agreed || m.finished)
    return;
  m.finished = true;
  if (m.broken) {
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  Writer w;
  w.u8(Stop);
  w.u8(ok ? 0 : 1);
  for (int r = 1; r < m.size; ++r)
    m.send(r, kCommand, w.bytes());
  std::signal(SIGTERM, SIG_DFL);
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
