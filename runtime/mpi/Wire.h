// The bytes that travel between ranks: one generation's chunk of an
// EvalBatch to a rank, its Evaluations back. Every double is copied bit for
// bit (so is any JSON, as CBOR), so a design's results are the same on
// whichever rank trained it. Host byte order: the ranks of a job run the
// same evoc binary on the same kind of machine.
#pragma once

#include "evolve/engine/Evolution.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace evoc::mpi {

/// Appends values to a byte buffer.
class Writer {
public:
  void u8(uint8_t v) { bytes_.push_back(char(v)); }
  void u64(uint64_t v);
  void i64(int64_t v) { u64(uint64_t(v)); }
  void f64(double v);
  void str(const std::string &s);
  void f64s(const std::vector<double> &v);
  void u64s(const std::vector<uint64_t> &v);
  /// null travels as one byte; anything else as CBOR (doubles exact).
  void json(const nlohmann::json &j);
  /// One field, by its type (ints travel as i64, bools as u8): the field
  /// lists of Wire.cpp are written once for Writer and Reader.
  void operator()(int v) { i64(v); }
  void operator()(int64_t v) { i64(v); }
  void operator()(bool v) { u8(v ? 1 : 0); }
  void operator()(double v) { f64(v); }
  void operator()(const std::string &v) { str(v); }
  void operator()(const std::vector<double> &v) { f64s(v); }
  void operator()(const std::vector<uint64_t> &v) { u64s(v); }
  void operator()(const nlohmann::json &v) { json(v); }
  /// A count, then each item by `fields(*this, item)`.
  template <class T, class F> void list(const std::vector<T> &v, F &&fields) {
    u64(v.size());
    for (const T &item : v)
      fields(item);
  }

  const std::vector<char> &bytes() const { return bytes_; }
  std::vector<char> take() { return std::move(bytes_); }

private:
  void raw(const void *p, size_t n);
  std::vector<char> bytes_;
};

/// Reads what a Writer wrote; throws evoc::Error naming `from` (e.g. "rank
/// 2") when the bytes end early or hold something impossible.
class Reader {
public:
  Reader(const std::vector<char> &bytes, std::string from)
      : bytes_(bytes), from_(std::move(from)) {}
  uint8_t u8();
  uint64_t u64();
  int64_t i64() { return int64_t(u64()); }
  double f64();
  std::string str();
  std::vector<double> f64s();
  std::vector<uint64_t> u64s();
  nlohmann::json json();
  /// One field, as Writer's operator() wrote it.
  void operator()(int &v) { v = int(i64()); }
  void operator()(int64_t &v) { v = i64(); }
  void operator()(bool &v) { v = u8() != 0; }
  void operator()(double &v) { v = f64(); }
  void operator()(std::string &v) { v = str(); }
  void operator()(std::vector<double> &v) { v = f64s(); }
  void operator()(std::vector<uint64_t> &v) { v = u64s(); }
  void operator()(nlohmann::json &v) { v = json(); }
  /// What Writer::list wrote: the items appended to `v`.
  template <class T, class F> void list(std::vector<T> &v, F &&fields) {
    const uint64_t n = u64();
    for (uint64_t i = 0; i < n; ++i)
      fields(v.emplace_back());
  }

  /// Throws unless every byte was read.
  void end() const;

private:
  void raw(void *p, size_t n);
  /// A count of items of `itemBytes` each that must fit in what is left.
  size_t count(size_t itemBytes);
  [[noreturn]] void fail(const std::string &what) const;
  const std::vector<char> &bytes_;
  size_t at_ = 0;
  std::string from_;
};

/// The batch (ids, seeds, robots, inheritance) and generation.
void writeBatch(Writer &w, const evolve::EvalBatch &batch);
evolve::EvalBatch readBatch(Reader &r);

/// An Evaluation without its paramsFn (which cannot travel): `params` goes
/// only when it was given directly; otherwise rank 0 asks for them later.
void writeEvaluation(Writer &w, const evolve::Evaluation &e);
evolve::Evaluation readEvaluation(Reader &r);

/// The bodies `items` of `batch` (indices, in that order), as a batch.
evolve::EvalBatch subBatch(const evolve::EvalBatch &batch, const std::vector<size_t> &items);

} // namespace evoc::mpi
