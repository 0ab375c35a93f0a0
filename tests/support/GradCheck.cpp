// Test support: buffer storage and the finite-difference gradient check.
#include "GradCheck.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "ir/Interpreter.h"
#include "support/Error.h"

namespace evoc::test {

using namespace ir;

Data::Data(const Module &mod, const std::vector<std::pair<std::string, int64_t>> &bodySizes)
    : m(&mod), sizes(mod.sets.size(), 0), f(mod.buffers.size()), i(mod.buffers.size()) {
  for (auto &[name, n] : bodySizes)
    sizes.at(mod.findSet(name)) = n;
  deriveSetSizes(mod, sizes.data());
  for (size_t b = 0; b < mod.buffers.size(); ++b) {
    int64_t n = bufferLength(mod, static_cast<int>(b), sizes.data());
    if (mod.buffers[b].elem == Type::F)
      f[b].assign(n, 0.0);
    else
      i[b].assign(n, 0);
  }
}

std::vector<double> &Data::F(const std::string &b) { return f.at(m->findBuffer(b)); }
std::vector<int32_t> &Data::I(const std::string &b) { return i.at(m->findBuffer(b)); }

void Data::run(int k, int64_t t) {
  std::vector<void *> ptrs(m->buffers.size());
  for (size_t b = 0; b < ptrs.size(); ++b)
    ptrs[b] = m->buffers[b].elem == Type::F ? static_cast<void *>(f[b].data())
                                            : static_cast<void *>(i[b].data());
  interpret(*m, k, ptrs.data(), sizes.data(), t);
}

void Data::zero(Role r) {
  for (size_t b = 0; b < m->buffers.size(); ++b)
    if (m->buffers[b].role == r) {
      std::fill(f[b].begin(), f[b].end(), 0.0);
      std::fill(i[b].begin(), i[b].end(), 0);
    }
}

void Data::zeroAdjointsOf(Role primalRole) {
  for (size_t b = 0; b < m->buffers.size(); ++b)
    if (m->buffers[b].role == Role::Adjoint && m->buffers[m->buffers[b].primal].role == primalRole)
      std::fill(f[b].begin(), f[b].end(), 0.0);
}

void Data::randomize(Role r, double lo, double hi, std::mt19937 &rng) {
  std::uniform_real_distribution<double> u(lo, hi);
  for (size_t b = 0; b < m->buffers.size(); ++b)
    if (m->buffers[b].role == r && m->buffers[b].elem == Type::F)
      for (double &v : f[b])
        v = u(rng);
}

namespace {

// Buffers the forward kernel writes (NextState / Output), collected by walking it.
void written(const Block &b, std::vector<bool> &out) {
  for (const auto &ip : b.insts) {
    if (ip->op == Op::Store || ip->op == Op::AccAdd)
      out[ip->buffer] = true;
    if (ip->op == Op::Loop)
      written(*ip->body, out);
  }
}

} // namespace

GradReport gradCheck(const Module &m, int k, const Data &d0, int64_t t, uint32_t seed,
                     const std::vector<std::string> &only) {
  int adjK = m.findKernel(m.kernels[k].name + ".adj");
  EVOC_ASSERT(adjK >= 0, "gradCheck: no adjoint kernel");
  std::vector<bool> w(m.buffers.size(), false);
  written(m.kernels[k].body, w);
  std::vector<int> outs;
  for (size_t b = 0; b < m.buffers.size(); ++b)
    if (w[b] && (m.buffers[b].role == Role::NextState || m.buffers[b].role == Role::Output))
      outs.push_back(static_cast<int>(b));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.5, 1.5);
  std::vector<std::vector<double>> weights;
  for (int b : outs) {
    weights.emplace_back(d0.f[b].size());
    for (double &x : weights.back())
      x = u(rng) * (rng() % 2 ? 1 : -1);
  }
  double jabs = 0; // sum of |terms|: sets the finite differences' noise
  auto J = [&](Data &d) {
    d.zero(Role::Temp);
    d.zero(Role::NextState);
    d.zero(Role::Output);
    d.run(k, t);
    double s = 0;
    jabs = 0;
    for (size_t o = 0; o < outs.size(); ++o)
      for (size_t e = 0; e < weights[o].size(); ++e) {
        s += weights[o][e] * d.f[outs[o]][e];
        jabs += std::fabs(weights[o][e] * d.f[outs[o]][e]);
      }
    return s;
  };
  // Adjoint run.
  Data ad = d0;
  ad.zero(Role::Temp);
  ad.zero(Role::Adjoint);
  for (size_t o = 0; o < outs.size(); ++o) {
    int ab = m.findBuffer(m.buffers[outs[o]].name + ".adj");
    if (ab >= 0)
      ad.f[ab] = weights[o];
  }
  ad.run(adjK, t);
  GradReport rep;
  Data fd = d0;
  J(fd);
  double noise = 1e-5 * jabs; // ~ 3e-12 |J| / h, times 3e6
  // Three step sizes; an entry is judged by the estimate closer to the adjoint
  // (truncation and rounding errors differ between them, a wrong adjoint
  // matches neither).
  struct Checked {
    int adj, primal;
    std::vector<double> num[3];
    double largest;
  };
  std::vector<Checked> all;
  double global = 0;
  for (size_t b = 0; b < m.buffers.size(); ++b) {
    const Buffer &buf = m.buffers[b];
    if (buf.role != Role::Adjoint)
      continue;
    int p = buf.primal;
    Role pr = m.buffers[p].role;
    if (pr != Role::State && pr != Role::Param && pr != Role::Body)
      continue;
    if (!only.empty() && std::find(only.begin(), only.end(), m.buffers[p].name) == only.end())
      continue;
    Checked c{static_cast<int>(b), p, {}, 0.0};
    for (int hs = 0; hs < 3; ++hs) {
      c.num[hs].resize(fd.f[p].size());
      for (size_t e = 0; e < c.num[hs].size(); ++e) {
        double x = d0.f[p][e], h = (hs == 0 ? 1e-4 : hs == 1 ? 2e-5 : 4e-6) * (1 + std::fabs(x));
        double v[4];
        const double off[4] = {-2, -1, 1, 2};
        for (int s = 0; s < 4; ++s) {
          fd.f[p][e] = x + off[s] * h;
          v[s] = J(fd);
        }
        fd.f[p][e] = x;
        c.num[hs][e] = (v[0] - 8 * v[1] + 8 * v[2] - v[3]) / (12 * h);
      }
    }
    for (double v : c.num[0])
      c.largest = std::max(c.largest, std::fabs(v));
    global = std::max(global, c.largest);
    all.push_back(std::move(c));
  }
  for (const Checked &c : all) {
    for (size_t e = 0; e < c.num[0].size(); ++e) {
      double a = ad.f[c.adj][e];
      if (!std::isfinite(a))
        rep.finite = false;
      int best = 0;
      for (int hs = 1; hs < 3; ++hs)
        if (std::fabs(a - c.num[hs][e]) < std::fabs(a - c.num[best][e]))
          best = hs;
      double num = c.num[best][e];
      double den =
          std::max({std::fabs(a), std::fabs(num), 1e-3 * c.largest, 1e-5 * global, noise, 1e-300});
      double err = std::fabs(a - num) / den;
      ++rep.checked;
      rep.normErr = std::max(rep.normErr, std::fabs(a - num) / std::max({global, noise, 1e-300}));
      if (!(err <= rep.maxRelErr)) {
        rep.maxRelErr = err;
        char msg[160];
        std::snprintf(msg, sizeof msg, "[%zu] = %.6g: adjoint %.12g vs fd %.12g", e,
                      d0.f[c.primal][e], a, num);
        rep.where = m.buffers[c.primal].name + msg;
      }
    }
  }
  return rep;
}

} // namespace evoc::test
