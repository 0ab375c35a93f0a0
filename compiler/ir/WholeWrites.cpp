// Which scratch buffers a kernel writes whole before it reads them
// (WholeWrites.h).
#include "ir/WholeWrites.h"

#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/Walk.h"

namespace evoc::ir {
namespace {

/// An integer as c + the sum of coef * atom: atom s >= 0 is the size of set
/// s (a body's set; a derived set is expanded), kElem the element of the
/// top-level loop being read.
struct Form {
  int64_t c = 0;
  std::map<int, int64_t> terms;
  bool constant() const { return terms.empty(); }
  bool operator==(const Form &o) const { return c == o.c && terms == o.terms; }
};

constexpr int kElem = -1;
// Beyond this magnitude a coefficient is not trusted (no overflow can make
// two different forms look equal).
constexpr int64_t kLimit = int64_t(1) << 40;

std::optional<Form> checked(Form f) {
  if (std::llabs(f.c) > kLimit)
    return std::nullopt;
  for (auto [atom, coef] : f.terms)
    if (std::llabs(coef) > kLimit)
      return std::nullopt;
  return f;
}

Form plus(Form a, const Form &b, int64_t sign) {
  a.c += sign * b.c;
  for (auto [atom, coef] : b.terms)
    if ((a.terms[atom] += sign * coef) == 0)
      a.terms.erase(atom);
  return a;
}

Form times(Form a, int64_t k) {
  a.c *= k;
  for (auto it = a.terms.begin(); it != a.terms.end();) {
    it->second *= k;
    it = it->second == 0 ? a.terms.erase(it) : std::next(it);
  }
  return a;
}

class WholeWrites {
public:
  WholeWrites(const Module &m, const Kernel &k, int b)
      : m_(m), b_(b), defs_(definitions(k.body)), body_(k.body) {}

  bool run() {
    const Buffer &B = m_.buffers[size_t(b_)];
    if (B.sets.size() > 1)
      return false;
    std::optional<Form> total = B.sets.empty() ? Form{B.comps, {}} : sizeOf(B.sets[0], 0);
    if (!total || !(total = checked(times(*total, B.comps))))
      return false;
    total_ = *total;
    for (const auto &ip : body_.insts) {
      const Inst &in = *ip;
      if (in.op == Op::Loop) {
        if (readsInLoop(in))
          return covered();
        addLoopSpans(in);
      } else if (in.buffer == b_ && (in.op == Op::Load || in.op == Op::AccAdd)) {
        return covered();
      } else if (in.buffer == b_ && in.op == Op::Store) {
        if (std::optional<Form> at = formOf(in.args[0], 0, 0))
          addSpan(*at, plus(*at, Form{1, {}}, 1));
      }
    }
    return covered();
  }

private:
  std::optional<Form> sizeOf(int set, int depth) const {
    if (set < 0 || set >= int(m_.sets.size()) || depth > 16)
      return std::nullopt;
    const ElementSet &es = m_.sets[size_t(set)];
    if (es.fromBody)
      return Form{0, {{set, 1}}};
    Form f{es.base, {}};
    for (auto [s, coef] : es.terms) {
      std::optional<Form> n = sizeOf(s, depth + 1);
      if (!n)
        return std::nullopt;
      f = plus(f, times(*n, coef), 1);
    }
    return checked(f);
  }

  /// The form of int value v, where `elem` (0: none) is the loop element.
  std::optional<Form> formOf(ValueId v, ValueId elem, int depth) const {
    if (v != 0 && v == elem)
      return Form{0, {{kElem, 1}}};
    auto it = defs_.find(v);
    if (it == defs_.end() || depth > 256)
      return std::nullopt;
    const Inst &in = *it->second;
    switch (in.op) {
    case Op::ConstI:
      return checked(Form{in.i, {}});
    case Op::Size:
      return sizeOf(in.set, 0);
    case Op::IAdd:
    case Op::ISub:
    case Op::IMul: {
      std::optional<Form> a = formOf(in.args[0], elem, depth + 1);
      std::optional<Form> b = a ? formOf(in.args[1], elem, depth + 1) : std::nullopt;
      if (!b)
        return std::nullopt;
      if (in.op != Op::IMul)
        return checked(plus(*a, *b, in.op == Op::IAdd ? 1 : -1));
      if (a->constant())
        return checked(times(*b, a->c));
      if (b->constant())
        return checked(times(*a, b->c));
      return std::nullopt;
    }
    default:
      return std::nullopt;
    }
  }

  /// Whether loop `in` may read an element of b it has not stored: a load
  /// or accadd of b in a nested loop, or in its body at an index other than
  /// one stored before it in that body.
  bool readsInLoop(const Inst &loop) const {
    std::unordered_set<ValueId> stored;
    for (const auto &ip : loop.body->insts) {
      const Inst &in = *ip;
      if (in.op == Op::Loop) {
        bool reads = false;
        walk(in, [&](const Inst &x) {
          reads |= x.buffer == b_ && (x.op == Op::Load || x.op == Op::AccAdd);
        });
        if (reads)
          return true;
      } else if (in.buffer == b_ && in.op == Op::Store) {
        stored.insert(in.args[0]);
      } else if (in.buffer == b_ && (in.op == Op::Load || in.op == Op::AccAdd) &&
                 stored.count(in.args[0]) == 0) {
        return true;
      }
    }
    return false;
  }

  /// The spans a top-level loop stores: b[e * s + r + j] for every j < s,
  /// directly in its body, is [r, r + s * size) over the loop's elements e.
  void addLoopSpans(const Inst &loop) {
    std::optional<Form> n = sizeOf(loop.set, 0);
    if (!n)
      return;
    std::vector<std::pair<int64_t, Form>> strided; // (s, r)
    for (const auto &ip : loop.body->insts) {
      const Inst &in = *ip;
      if (in.op != Op::Store || in.buffer != b_)
        continue;
      std::optional<Form> at = formOf(in.args[0], loop.body->arg, 0);
      if (!at || at->terms.count(kElem) == 0 || at->terms.at(kElem) <= 0)
        continue; // at one index only, or not for every element
      const int64_t s = at->terms.at(kElem);
      at->terms.erase(kElem);
      strided.emplace_back(s, *at);
    }
    for (const auto &[s, r] : strided) {
      bool all = true;
      for (int64_t j = 1; j < s && all; ++j) {
        const Form want = plus(r, Form{j, {}}, 1);
        bool found = false;
        for (const auto &[s2, r2] : strided)
          found |= s2 == s && r2 == want;
        all = found;
      }
      if (all)
        if (std::optional<Form> hi = checked(plus(r, times(*n, s), 1)))
          addSpan(r, *hi);
    }
  }

  void addSpan(Form lo, Form hi) {
    if (spans_.size() < kMaxSpans)
      spans_.emplace_back(std::move(lo), std::move(hi));
  }

  /// Whether spans chained end to start reach from 0 to the buffer's size.
  bool covered() const {
    std::vector<Form> reached{Form{}};
    std::vector<bool> used(spans_.size(), false);
    for (size_t i = 0; i < reached.size(); ++i) {
      if (reached[i] == total_)
        return true;
      for (size_t s = 0; s < spans_.size(); ++s)
        if (!used[s] && spans_[s].first == reached[i]) {
          used[s] = true;
          reached.push_back(spans_[s].second);
        }
    }
    return false;
  }

  static constexpr size_t kMaxSpans = 4096;
  const Module &m_;
  int b_;
  std::unordered_map<ValueId, const Inst *> defs_;
  const Block &body_;
  std::vector<std::pair<Form, Form>> spans_; // [lo, hi)
  Form total_;
};

} // namespace

bool writesWholeFirst(const Module &m, const Kernel &k, int b) {
  if (b < 0 || b >= int(m.buffers.size()))
    return false;
  return WholeWrites(m, k, b).run();
}

} // namespace evoc::ir
