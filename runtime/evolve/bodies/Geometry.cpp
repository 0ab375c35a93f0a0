// Rigid fits (atan2 in 2D, Horn's quaternion method in 3D), a Jacobi eigen
// solver and separating-axis penetration tests for grammar bodies. Angles go
// through support/PortableMath.h, not libm, so bodies are the same bits on
// every machine.
#include "evolve/bodies/Geometry.h"

#include <algorithm>
#include <cmath>

#include "support/PortableMath.h"

namespace evoc::evolve::geom {

Affine identity(int dim) {
  Affine a;
  a.dim = dim;
  for (int i = 0; i < dim; ++i)
    a.at(i, i) = 1;
  return a;
}

Affine compose(const Affine &a, const Affine &b) {
  Affine r;
  r.dim = a.dim;
  int d = a.dim;
  for (int i = 0; i < d; ++i) {
    for (int j = 0; j < d; ++j) {
      double s = 0;
      for (int k = 0; k < d; ++k)
        s += a.at(i, k) * b.at(k, j);
      r.at(i, j) = s;
    }
    double s = a.t[i];
    for (int k = 0; k < d; ++k)
      s += a.at(i, k) * b.t[k];
    r.t[i] = s;
  }
  return r;
}

Affine inverseOrthogonal(const Affine &a) {
  Affine r;
  r.dim = a.dim;
  int d = a.dim;
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j)
      r.at(i, j) = a.at(j, i);
  for (int i = 0; i < d; ++i) {
    double s = 0;
    for (int k = 0; k < d; ++k)
      s -= r.at(i, k) * a.t[k];
    r.t[i] = s;
  }
  return r;
}

void apply(const Affine &a, const double *in, double *out) {
  double tmp[3];
  for (int i = 0; i < a.dim; ++i) {
    double s = a.t[i];
    for (int k = 0; k < a.dim; ++k)
      s += a.at(i, k) * in[k];
    tmp[i] = s;
  }
  for (int i = 0; i < a.dim; ++i)
    out[i] = tmp[i];
}

double det(const Affine &a) {
  if (a.dim == 2)
    return a.at(0, 0) * a.at(1, 1) - a.at(0, 1) * a.at(1, 0);
  return a.at(0, 0) * (a.at(1, 1) * a.at(2, 2) - a.at(1, 2) * a.at(2, 1)) -
         a.at(0, 1) * (a.at(1, 0) * a.at(2, 2) - a.at(1, 2) * a.at(2, 0)) +
         a.at(0, 2) * (a.at(1, 0) * a.at(2, 1) - a.at(1, 1) * a.at(2, 0));
}

Affine rotation(int dim, double radians) {
  Affine r = identity(dim);
  double s = 0, c = 0;
  portableSinCos(radians, s, c); // not libm: the same bits on every machine
  r.at(0, 0) = c;
  r.at(0, 1) = -s;
  r.at(1, 0) = s;
  r.at(1, 1) = c;
  if (dim == 3) {
    // About the last (vertical) axis: rotate the two horizontal axes x, z.
    r = identity(3);
    r.at(0, 0) = c;
    r.at(0, 2) = s;
    r.at(2, 0) = -s;
    r.at(2, 2) = c;
  }
  return r;
}

Affine axisRotation(const double *u, double radians) {
  Affine r = identity(3);
  double s = 0, c = 0;
  portableSinCos(radians, s, c);
  const double k = 1 - c;
  double x = u[0], y = u[1], z = u[2];
  r.at(0, 0) = c + x * x * k;
  r.at(0, 1) = x * y * k - z * s;
  r.at(0, 2) = x * z * k + y * s;
  r.at(1, 0) = y * x * k + z * s;
  r.at(1, 1) = c + y * y * k;
  r.at(1, 2) = y * z * k - x * s;
  r.at(2, 0) = z * x * k - y * s;
  r.at(2, 1) = z * y * k + x * s;
  r.at(2, 2) = c + z * z * k;
  return r;
}

void symmetricEigen(int n, const double *a, double *values, double *vectors) {
  double m[16], v[16];
  for (int i = 0; i < n * n; ++i)
    m[i] = a[i];
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      v[i * n + j] = i == j;
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0;
    for (int p = 0; p < n; ++p)
      for (int q = p + 1; q < n; ++q)
        off += m[p * n + q] * m[p * n + q];
    if (off < 1e-30)
      break;
    for (int p = 0; p < n; ++p) {
      for (int q = p + 1; q < n; ++q) {
        double apq = m[p * n + q];
        if (std::fabs(apq) < 1e-300)
          continue;
        // The rotation angle that zeroes m[p][q] (Golub and Van Loan 8.4).
        double theta = (m[q * n + q] - m[p * n + p]) / (2 * apq);
        double t = (theta >= 0 ? 1 : -1) / (std::fabs(theta) + std::sqrt(theta * theta + 1));
        double c = 1 / std::sqrt(t * t + 1), s = t * c;
        for (int k = 0; k < n; ++k) {
          double mkp = m[k * n + p], mkq = m[k * n + q];
          m[k * n + p] = c * mkp - s * mkq;
          m[k * n + q] = s * mkp + c * mkq;
        }
        for (int k = 0; k < n; ++k) {
          double mpk = m[p * n + k], mqk = m[q * n + k];
          m[p * n + k] = c * mpk - s * mqk;
          m[q * n + k] = s * mpk + c * mqk;
        }
        for (int k = 0; k < n; ++k) {
          double vkp = v[k * n + p], vkq = v[k * n + q];
          v[k * n + p] = c * vkp - s * vkq;
          v[k * n + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  for (int i = 0; i < n; ++i)
    values[i] = m[i * n + i];
  for (int i = 0; i < n * n; ++i)
    vectors[i] = v[i];
}

namespace {

/// The rotation (3D) that best maps centred src onto centred dst (Horn 1987).
Affine hornRotation(const double *src, const double *dst, int n) {
  double s[3][3] = {};
  for (int i = 0; i < n; ++i)
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c)
        s[r][c] += src[i * 3 + r] * dst[i * 3 + c];
  double sxx = s[0][0], sxy = s[0][1], sxz = s[0][2], syx = s[1][0], syy = s[1][1], syz = s[1][2],
         szx = s[2][0], szy = s[2][1], szz = s[2][2];
  double nmat[16] = {sxx + syy + szz, syz - szy,       szx - sxz,        sxy - syx,
                     syz - szy,       sxx - syy - szz, sxy + syx,        szx + sxz,
                     szx - sxz,       sxy + syx,       -sxx + syy - szz, syz + szy,
                     sxy - syx,       szx + sxz,       syz + szy,        -sxx - syy + szz};
  double vals[4], vecs[16];
  symmetricEigen(4, nmat, vals, vecs);
  int best = 0;
  for (int i = 1; i < 4; ++i)
    if (vals[i] > vals[best])
      best = i;
  double w = vecs[0 * 4 + best], x = vecs[1 * 4 + best], y = vecs[2 * 4 + best],
         z = vecs[3 * 4 + best];
  double norm = std::sqrt(w * w + x * x + y * y + z * z);
  w /= norm, x /= norm, y /= norm, z /= norm;
  Affine r = identity(3);
  r.at(0, 0) = w * w + x * x - y * y - z * z;
  r.at(0, 1) = 2 * (x * y - w * z);
  r.at(0, 2) = 2 * (x * z + w * y);
  r.at(1, 0) = 2 * (x * y + w * z);
  r.at(1, 1) = w * w - x * x + y * y - z * z;
  r.at(1, 2) = 2 * (y * z - w * x);
  r.at(2, 0) = 2 * (x * z - w * y);
  r.at(2, 1) = 2 * (y * z + w * x);
  r.at(2, 2) = w * w - x * x - y * y + z * z;
  return r;
}

/// The rotation of least angle taking unit vector a onto unit vector b.
Affine alignRotation(const double *a, const double *b) {
  double cr[3] = {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
  double s = std::sqrt(cr[0] * cr[0] + cr[1] * cr[1] + cr[2] * cr[2]);
  double c = a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
  if (s < 1e-12) {
    if (c > 0)
      return identity(3);
    // Opposite: half a turn about any axis perpendicular to a.
    double p[3] = {-a[1], a[0], 0};
    if (std::fabs(a[2]) > 0.9)
      p[0] = 0, p[1] = -a[2], p[2] = a[1];
    double pn = std::sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]);
    for (double &x : p)
      x /= pn;
    return axisRotation(p, M_PI);
  }
  for (double &x : cr)
    x /= s;
  return axisRotation(cr, portableAtan2(s, c));
}

} // namespace

Affine fit(int dim, const double *src, const double *dst, int n, int sign, double *residual) {
  double cs[3] = {}, cd[3] = {};
  std::vector<double> ps(src, src + n * dim), pd(dst, dst + n * dim);
  Affine flip = identity(dim);
  if (sign < 0) {
    flip.at(0, 0) = -1;
    for (int i = 0; i < n; ++i)
      ps[i * dim] = -ps[i * dim];
  }
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < dim; ++c)
      cs[c] += ps[i * dim + c] / n, cd[c] += pd[i * dim + c] / n;
  for (int i = 0; i < n; ++i)
    for (int c = 0; c < dim; ++c)
      ps[i * dim + c] -= cs[c], pd[i * dim + c] -= cd[c];
  Affine r = identity(dim);
  if (dim == 2) {
    double dotSum = 0, crossSum = 0;
    for (int i = 0; i < n; ++i) {
      double ax = ps[i * 2], ay = ps[i * 2 + 1], bx = pd[i * 2], by = pd[i * 2 + 1];
      dotSum += ax * bx + ay * by;
      crossSum += ax * by - ay * bx;
    }
    if (n >= 2)
      r = rotation(2, portableAtan2(crossSum, dotSum));
  } else if (n == 2) {
    double a[3], b[3], la = 0, lb = 0;
    for (int c = 0; c < 3; ++c) {
      a[c] = ps[3 + c] - ps[c];
      b[c] = pd[3 + c] - pd[c];
      la += a[c] * a[c];
      lb += b[c] * b[c];
    }
    if (la > 0 && lb > 0) {
      for (int c = 0; c < 3; ++c)
        a[c] /= std::sqrt(la), b[c] /= std::sqrt(lb);
      r = alignRotation(a, b);
    }
  } else if (n >= 3) {
    r = hornRotation(ps.data(), pd.data(), n);
  }
  // x -> R (F x - cs) + cd.
  Affine result = compose(r, flip);
  double rc[3];
  Affine rOnly = r;
  apply(rOnly, cs, rc);
  for (int c = 0; c < dim; ++c)
    result.t[c] = cd[c] - rc[c];
  if (residual) {
    double worst = 0;
    for (int i = 0; i < n; ++i) {
      double y[3];
      apply(result, src + i * dim, y);
      double d2 = 0;
      for (int c = 0; c < dim; ++c)
        d2 += (y[c] - dst[i * dim + c]) * (y[c] - dst[i * dim + c]);
      worst = std::max(worst, std::sqrt(d2));
    }
    *residual = worst;
  }
  return result;
}

namespace {

template <size_t D>
bool separatedOn(const std::vector<std::array<double, D>> &a,
                 const std::vector<std::array<double, D>> &b, const double *axis, double eps) {
  double len = 0;
  for (size_t c = 0; c < D; ++c)
    len += axis[c] * axis[c];
  len = std::sqrt(len);
  if (len < 1e-15)
    return false;
  auto range = [&](const std::vector<std::array<double, D>> &p, double &lo, double &hi) {
    lo = 1e300, hi = -1e300;
    for (const auto &q : p) {
      double s = 0;
      for (size_t c = 0; c < D; ++c)
        s += q[c] * axis[c];
      s /= len;
      lo = std::min(lo, s), hi = std::max(hi, s);
    }
  };
  double alo, ahi, blo, bhi;
  range(a, alo, ahi);
  range(b, blo, bhi);
  return std::min(ahi, bhi) - std::max(alo, blo) <= eps;
}

} // namespace

bool polygonsPenetrate(const std::vector<std::array<double, 2>> &a,
                       const std::vector<std::array<double, 2>> &b, double eps) {
  for (const auto *poly : {&a, &b}) {
    size_t n = poly->size();
    for (size_t i = 0; i < n; ++i) {
      const auto &p = (*poly)[i];
      const auto &q = (*poly)[(i + 1) % n];
      double axis[2] = {-(q[1] - p[1]), q[0] - p[0]};
      if (separatedOn(a, b, axis, eps))
        return false;
    }
  }
  return true;
}

namespace {

std::vector<std::array<double, 3>> facePlanes(const std::vector<std::array<double, 3>> &p,
                                              double eps) {
  std::vector<std::array<double, 3>> normals;
  size_t n = p.size();
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j)
      for (size_t k = j + 1; k < n; ++k) {
        double u[3], v[3];
        for (int c = 0; c < 3; ++c)
          u[c] = p[j][c] - p[i][c], v[c] = p[k][c] - p[i][c];
        std::array<double, 3> nn = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2],
                                    u[0] * v[1] - u[1] * v[0]};
        double len = std::sqrt(nn[0] * nn[0] + nn[1] * nn[1] + nn[2] * nn[2]);
        if (len < 1e-15)
          continue;
        for (double &x : nn)
          x /= len;
        bool pos = false, neg = false;
        for (size_t m = 0; m < n; ++m) {
          double s = 0;
          for (int c = 0; c < 3; ++c)
            s += (p[m][c] - p[i][c]) * nn[c];
          pos |= s > eps;
          neg |= s < -eps;
        }
        if (!(pos && neg))
          normals.push_back(nn);
      }
  return normals;
}

} // namespace

bool hullsPenetrate(const std::vector<std::array<double, 3>> &a,
                    const std::vector<std::array<double, 3>> &b, double eps) {
  for (const auto *set : {&a, &b})
    for (const auto &nn : facePlanes(*set, eps))
      if (separatedOn(a, b, nn.data(), eps))
        return false;
  auto dirs = [](const std::vector<std::array<double, 3>> &p) {
    std::vector<std::array<double, 3>> d;
    for (size_t i = 0; i < p.size(); ++i)
      for (size_t j = i + 1; j < p.size(); ++j)
        d.push_back({p[j][0] - p[i][0], p[j][1] - p[i][1], p[j][2] - p[i][2]});
    return d;
  };
  auto da = dirs(a), db = dirs(b);
  for (const auto &u : da)
    for (const auto &v : db) {
      double axis[3] = {u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2],
                        u[0] * v[1] - u[1] * v[0]};
      double len = std::sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
      if (len < 1e-12)
        continue;
      if (separatedOn(a, b, axis, eps))
        return false;
    }
  return true;
}

std::vector<int> convexHull2D(const std::vector<std::array<double, 2>> &pts) {
  int n = int(pts.size());
  std::vector<int> idx(n);
  for (int i = 0; i < n; ++i)
    idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](int x, int y) { return pts[x] < pts[y]; });
  auto cross = [&](int o, int a, int b) {
    return (pts[a][0] - pts[o][0]) * (pts[b][1] - pts[o][1]) -
           (pts[a][1] - pts[o][1]) * (pts[b][0] - pts[o][0]);
  };
  if (n < 3)
    return idx;
  std::vector<int> h(2 * n);
  int k = 0;
  for (int i = 0; i < n; ++i) {
    while (k >= 2 && cross(h[k - 2], h[k - 1], idx[i]) <= 1e-18)
      --k;
    h[k++] = idx[i];
  }
  for (int i = n - 2, t = k + 1; i >= 0; --i) {
    while (k >= t && cross(h[k - 2], h[k - 1], idx[i]) <= 1e-18)
      --k;
    h[k++] = idx[i];
  }
  h.resize(k - 1);
  return h;
}

} // namespace evoc::evolve::geom
