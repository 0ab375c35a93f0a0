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

void writeRobot(Writer &w, const runtime::Robot &r) {
  w.i64(r.dim);
  w.f64s(r.points);
  w.u64(r.springs.size());
  for (const runtime::Spring &s : r.springs) {
    w.i64(s.a);
    w.i64(s.b);
    w.f64(s.rest);
    w.f64(s.stiffness);
    w.f64(s.actuation);
  }
}

runtime::Robot readRobot(Reader &r) {
  runtime::Robot robot;
  robot.dim = int(r.i64());
  robot.points = r.f64s();
  uint64_t n = r.u64();
  for (uint64_t i = 0; i < n; ++i) {
    runtime::Spring s;
    s.a = int(r.i64());
    s.b = int(r.i64());
    s.rest = r.f64();
    s.stiffness = r.f64();
    s.actuation = r.f64();
    robot.springs.push_back(s);
  }
  return robot;
}

} // namespace

void writeBatch(Writer &w, const evolve::EvalBatch &b) {
  w.i64(b.generation);
  w.u64s(b.ids);
  w.u64s(b.seeds);
  w.u64(b.robots.size());
  for (const runtime::Robot &r : b.robots)
    writeRobot(w, r);
  w.u64(b.inherit.size());
  for (const evolve::Inheritance &in : b.inherit) {
    w.json(in.parentParams);
    w.u64s(in.parentPointKeys);
    w.u64s(in.parentSpringKeys);
    w.u64s(in.pointKeys);
    w.u64s(in.springKeys);
  }
}

evolve::EvalBatch readBatch(Reader &r) {
  evolve::EvalBatch b;
  b.generation = int(r.i64());
  b.ids = r.u64s();
  b.seeds = r.u64s();
  uint64_t n = r.u64();
  for (uint64_t i = 0; i < n; ++i)
    b.robots.push_back(readRobot(r));
  uint64_t m = r.u64();
  for (uint64_t i = 0; i < m; ++i) {
    evolve::Inheritance in;
    in.parentParams = r.json();
    in.parentPointKeys = r.u64s();
    in.parentSpringKeys = r.u64s();
    in.pointKeys = r.u64s();
    in.springKeys = r.u64s();
    b.inherit.push_back(std::move(in));
  }
  return b;
}

void writeEvaluation(Writer &w, const evolve::Evaluation &e) {
  w.f64s(e.losses);
  w.u8(e.valid ? 1 : 0);
  w.str(e.reason);
  w.json(e.params);
  w.i64(e.robotSteps);
  w.f64s(e.gradNorms);
  w.i64(e.inherited);
  w.u64(e.terms.size());
  for (const auto &[name, curve] : e.terms) {
    w.str(name);
    w.f64s(curve);
  }
  w.str(e.notTrained);
}

evolve::Evaluation readEvaluation(Reader &r) {
  evolve::Evaluation e;
  e.losses = r.f64s();
  e.valid = r.u8() != 0;
  e.reason = r.str();
  e.params = r.json();
  e.robotSteps = r.i64();
  e.gradNorms = r.f64s();
  e.inherited = r.i64();
  const uint64_t terms = r.u64();
  for (uint64_t k = 0; k < terms; ++k) {
    std::string name = r.str();
    e.terms.emplace_back(std::move(name), r.f64s());
  }
  e.notTrained = r.str();
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
