// Rank 0's side of a batch (Ranks::spread): split it by body size
// (Partition.h), send each rank its chunk, evaluate its own, gather the
// answers in batch order; later, fetch a remote design's parameters when
// the engine asks for them.
#include "mpi/Partition.h"
#include "mpi/RanksImpl.h"
#include "mpi/Wire.h"

namespace evoc::mpi {

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

namespace {

// "rank 1 (on n7) failed evaluating designs 12 and 15 of generation 2: ...".
// The trainer numbers a chunk's robots from 0 ("robot 1 has ..."): with more
// than one, the message says that they are the designs in that order.
std::string chunkFailure(const std::string &who, const std::vector<uint64_t> &ids, int generation,
                         const std::string &why) {
  return fmt::format("{} failed evaluating {} of generation {}{}: {}", who, designList(ids),
                     generation, ids.size() > 1 ? " (its robots 0, 1, ... in that order)" : "",
                     why);
}

} // namespace

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

  // What the watch says if a rank dies now.
  std::string where = fmt::format("generation {}'s designs were with", batch.generation);
  for (int r = 0; r < size; ++r)
    if (!ids[size_t(r)].empty())
      where += fmt::format(" {}: {};", who(r), designList(ids[size_t(r)]));
  watch->setPhase(fmt::format("while generation {} was being evaluated", batch.generation),
                  where + " ");

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
  const bool faulty = fault.rank == 0 && fault.generation == batch.generation;
  if (faulty)
    dieAsFaultSays(fault);
  const auto localStart = Clock::now();
  if (!chunks[0].empty()) {
    try {
      if (faulty)
        throw Error(fmt::format("a fault injected by EVOC_MPI_FAULT=0:{}:{}", fault.generation,
                                fault.mode));
      std::vector<evolve::Evaluation> mine = local(subBatch(batch, chunks[0]));
      if (mine.size() != chunks[0].size())
        throw Error(fmt::format("the evaluate function returned {} results for {} robots",
                                mine.size(), chunks[0].size()));
      for (size_t k = 0; k < mine.size(); ++k)
        out[chunks[0][k]] = std::move(mine[k]);
    } catch (const std::exception &e) {
      failure = chunkFailure(who(0), ids[0], batch.generation, e.what());
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
    // flight: the job cannot go on (~Ranks aborts it).
    broken = true;
    Reader r(bytes, who(from));
    const std::vector<size_t> &items = chunks[size_t(from)];
    uint8_t kind = r.u8();
    if (kind == Failed) {
      std::string why = r.str();
      if (failure.empty())
        failure = chunkFailure(who(from), ids[size_t(from)], batch.generation, why);
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
  watch->setPhase(fmt::format("after generation {} was evaluated", batch.generation));
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

} // namespace evoc::mpi
