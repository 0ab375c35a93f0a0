// The bytes between ranks (Wire.h).
#include "mpi/Wire.h"

#include "support/Error.h"

#include <fmt/format.h>

#include <cstring>

namespace evoc::mpi {

void Writer::raw(const void *p, size_t n) {
  const char *c = static_cast<const char *>(p);
  bytes_.insert(bytes_.end(), c, c + n);
}

void Writer::u64(uint64_t v) { raw(&v, sizeof v); }

void Writer::f64(double v) { raw(&v, sizeof v); }

void Writer::str(const std::string &s) {
  u64(s.size());
  raw(s.data(), s.size());
}

void Writer::f64s(const std::vector<double> &v) {
  u64(v.size());
  raw(v.data(), v.size() * sizeof(double));
}

void Writer::u64s(const std::vector<uint64_t> &v) {
  u64(v.size());
  raw(v.data(), v.size() * sizeof(uint64_t));
}

void Writer::json(const nlohmann::json &j) {
  if (j.is_null()) {
    u8(0);
    return;
  }
  u8(1);
  std::vector<uint8_t> cbor = nlohmann::json::to_cbor(j);
  u64(cbor.size());
  raw(cbor.data(), cbor.size());
}

void Reader::fail(const std::string &what) const {
  throw Error(fmt::format("a malformed message from {}: {} (at byte {} of {})", from_, what, at_,
                          bytes_.size()));
}

void Reader::raw(void *p, size_t n) {
  if (n > bytes_.size() - at_)
    fail("it ends early");
  std::memcpy(p, bytes_.data() + at_, n);
  at_ += n;
}

uint8_t Reader::u8() {
  uint8_t v = 0;
  raw(&v, 1);
  return v;
}

uint64_t Reader::u64() {
  uint64_t v = 0;
  raw(&v, sizeof v);
  return v;
}

double Reader::f64() {
  double v = 0;
  raw(&v, sizeof v);
  return v;
}

size_t Reader::count(size_t itemBytes) {
  uint64_t n = u64();
  if (itemBytes > 0 && n > (bytes_.size() - at_) / itemBytes)
    fail(fmt::format("a count of {} is more than the message holds", n));
  return size_t(n);
}

std::string Reader::str() {
  std::string s(count(1), '\0');
  raw(s.data(), s.size());
  return s;
}

std::vector<double> Reader::f64s() {
  std::vector<double> v(count(sizeof(double)));
  raw(v.data(), v.size() * sizeof(double));
  return v;
}

std::vector<uint64_t> Reader::u64s() {
  std::vector<uint64_t> v(count(sizeof(uint64_t)));
  raw(v.data(), v.size() * sizeof(uint64_t));
  return v;
}

nlohmann::json Reader::json() {
  uint8_t present = u8();
  if (present == 0)
    return nullptr;
  if (present != 1)
    fail("a JSON value is neither null nor CBOR");
  std::vector<uint8_t> cbor(count(1));
  raw(cbor.data(), cbor.size());
  nlohmann::json j = nlohmann::json::from_cbor(cbor, true, /*allow_exceptions=*/false);
  if (j.is_discarded())
    fail("a JSON value is not valid CBOR");
  return j;
}

void Reader::end() const {
  if (at_ != bytes_.size())
    fail(fmt::format("{} bytes are left over", bytes_.size() - at_));
}

namespace {

// Each record's fields, in their order on the wire, for a Writer (R const)
// and a Reader alike.

template <class Io, class R> void robotFields(Io &io, R &robot) {
  io(robot.dim);
  io(robot.points);
  io.list(robot.springs, [&](auto &s) {
    io(s.a);
    io(s.b);
    io(s.rest);
    io(s.stiffness);
    io(s.actuation);
  });
}

template <class Io, class B> void batchFields(Io &io, B &b) {
  io(b.generation);
  io(b.ids);
  io(b.seeds);
  io.list(b.robots, [&](auto &r) { robotFields(io, r); });
  io.list(b.inherit, [&](auto &in) {
    io(in.parentParams);
    io(in.parentPointKeys);
    io(in.parentSpringKeys);
    io(in.pointKeys);
    io(in.springKeys);
  });
}

template <class Io, class E> void evaluationFields(Io &io, E &e) {
  io(e.losses);
  io(e.valid);
  io(e.reason);
  io(e.params);
  io(e.robotSteps);
  io(e.gradNorms);
  io(e.inherited);
  io.list(e.terms, [&](auto &term) {
    io(term.first);
    io(term.second);
  });
  io(e.notTrained);
}

} // namespace

void writeBatch(Writer &w, const evolve::EvalBatch &b) { batchFields(w, b); }

evolve::EvalBatch readBatch(Reader &r) {
  evolve::EvalBatch b;
  batchFields(r, b);
  return b;
}

void writeEvaluation(Writer &w, const evolve::Evaluation &e) { evaluationFields(w, e); }

evolve::Evaluation readEvaluation(Reader &r) {
  evolve::Evaluation e;
  evaluationFields(r, e);
  return e;
}

evolve::EvalBatch subBatch(const evolve::EvalBatch &batch, const std::vector<size_t> &items) {
  evolve::EvalBatch out;
  out.generation = batch.generation;
  for (size_t i : items) {
    out.ids.push_back(batch.ids.at(i));
    out.seeds.push_back(batch.seeds.at(i));
    out.robots.push_back(batch.robots.at(i));
    if (!batch.inherit.empty())
      out.inherit.push_back(batch.inherit.at(i));
  }
  return out;
}

} // namespace evoc::mpi
