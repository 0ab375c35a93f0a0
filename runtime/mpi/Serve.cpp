// The ranks other than 0 (Ranks::serve): evaluate each chunk rank 0 sends
// and answer with its results, then the parameters rank 0 asks for, until
// rank 0 says stop. An exception in an evaluation is an answer too: rank 0
// names the rank and the designs; any other error is told to rank 0 over
// the watch (Watch.h) before the rank leaves. Also the test-only fault hook.
#include "mpi/RanksImpl.h"
#include "mpi/Wire.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace evoc::mpi {

Fault faultFromEnv() {
  Fault f;
  const char *v = std::getenv("EVOC_MPI_FAULT");
  if (!v || !*v)
    return f;
  char mode[16] = {0};
  bool parsed = std::sscanf(v, "%d:%d:%15s", &f.rank, &f.generation, mode) == 3, known = false;
  for (const char *m : {"exit", "kill", "term", "throw", "fail"})
    known = known || std::strcmp(mode, m) == 0;
  if (!parsed || !known)
    throw Error(fmt::format("EVOC_MPI_FAULT must be RANK:GENERATION:MODE with MODE exit, kill, "
                            "term, throw or fail; got '{}'",
                            v));
  f.mode = mode;
  return f;
}

void dieAsFaultSays(const Fault &fault) {
  if (fault.mode == "exit")
    _exit(86);
  if (fault.mode == "kill")
    raise(SIGKILL);
  if (fault.mode == "term") {
    kill(getpid(), SIGTERM); // as from another process: the watch says so and ends this one
    for (;;)
      pause();
  }
}

int Ranks::serve(const evolve::EvaluateFn &local) {
  try {
    int status = impl_->serveBatches(local);
    impl_->watch->finish();
    return status;
  } catch (const std::exception &e) {
    impl_->broken = true; // rank 0 is waiting for an answer: the job is aborted
    impl_->watch->failed(e.what());
    throw;
  }
}

int Ranks::Impl::serveBatches(const evolve::EvaluateFn &local) {
  Impl &m = *this;
  const Fault &fault = m.fault;
  std::vector<evolve::Evaluation> last;
  uint64_t lastSerial = 0;
  int generation = -1;
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
      generation = batch.generation;
      r.end();
      last.clear();
      const auto start = Clock::now();
      m.watch->setPhase(fmt::format("while generation {} was being evaluated", batch.generation));
      const bool faulty = fault.rank == m.rank && fault.generation == batch.generation;
      if (faulty) {
        dieAsFaultSays(fault);
        if (fault.mode == "fail")
          throw Error(fmt::format("a fault injected by EVOC_MPI_FAULT={}:{}:fail", fault.rank,
                                  fault.generation));
      }
      try {
        if (faulty)
          throw Error(fmt::format("a fault injected by EVOC_MPI_FAULT={}:{}:throw", fault.rank,
                                  fault.generation));
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
    if (kind == Batch)
      m.watch->setPhase(fmt::format("after {} had evaluated its designs of generation {}",
                                    m.who(m.rank), generation));
  }
}

} // namespace evoc::mpi
