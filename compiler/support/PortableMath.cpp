// The libm-free trigonometry of support/PortableMath.h. The polynomials and
// the three-part split of pi/4 are the published coefficients of Stephen
// Moshier's Cephes library (sin/cos on [-pi/4, pi/4], atan on [0, 0.66] after
// its range reduction); the code around them is evoc's.
#include "support/PortableMath.h"

#include <cmath>
#include <cstdint>
#include <initializer_list>

namespace evoc {

namespace {

constexpr double kFourOverPi = 1.27323954473516268615;
// pi/4 = kDp1 + kDp2 + kDp3, each exact in few enough bits that y * kDp1
// is exact for the y used here (Cody and Waite's reduction).
constexpr double kDp1 = 7.85398125648498535156e-1;
constexpr double kDp2 = 3.77489470793079817668e-8;
constexpr double kDp3 = 2.69515142907905952645e-15;

double sinPoly(double z) { // sin z for |z| <= pi/4
  const double zz = z * z;
  double p = 1.58962301576546568060e-10;
  for (double c :
       {-2.50507477628578072866e-8, 2.75573136213857245213e-6, -1.98412698295895385996e-4,
        8.33333333332211858878e-3, -1.66666666666666307295e-1})
    p = p * zz + c;
  return z + z * zz * p;
}

double cosPoly(double z) { // cos z for |z| <= pi/4
  const double zz = z * z;
  double p = -1.13585365213876817300e-11;
  for (double c : {2.08757008419747316778e-9, -2.75573141792967388112e-7, 2.48015872888517045348e-5,
                   -1.38888888888730564116e-3, 4.16666666666665929218e-2})
    p = p * zz + c;
  return 1.0 - 0.5 * zz + zz * zz * p;
}

// atan x for x >= 0.
double atanNonNegative(double x) {
  constexpr double kT3P8 = 2.41421356237309504880;          // tan(3 pi / 8)
  constexpr double kMoreBits = 6.123233995736765886130e-17; // pi/2 - double(pi/2)
  double y = 0, extra = 0;
  if (x > kT3P8) {
    y = M_PI_2;
    extra = kMoreBits;
    x = -1.0 / x;
  } else if (x > 0.66) {
    y = M_PI_4;
    extra = 0.5 * kMoreBits;
    x = (x - 1.0) / (x + 1.0);
  }
  const double z = x * x;
  double p = -8.750608600031904122785e-1;
  for (double c : {-1.615753718733365076637e1, -7.500855792314704667340e1,
                   -1.228866684490136173410e2, -6.485021904942025371773e1})
    p = p * z + c;
  double q = 1.0;
  for (double c : {2.485846490142306297962e1, 1.650270098316988542046e2, 4.328810604912902668951e2,
                   4.853903996359136964868e2, 1.945506571482613964425e2})
    q = q * z + c;
  return y + ((x * (z * p / q) + x) + extra);
}

} // namespace

void portableSinCos(double x, double &s, double &c) {
  if (!std::isfinite(x)) {
    s = c = std::nan("");
    return;
  }
  if (std::fabs(x) >= 1e8)
    x = std::fmod(x, 2 * M_PI); // exact
  const bool negative = x < 0;
  const double ax = std::fabs(x);
  auto j = static_cast<int64_t>(ax * kFourOverPi); // octant
  double y = double(j);
  if (j & 1) { // map to the nearer multiple of pi/2
    ++j;
    y += 1.0;
  }
  j &= 7;
  const double z = ((ax - y * kDp1) - y * kDp2) - y * kDp3;
  const double sz = sinPoly(z), cz = cosPoly(z);
  // Octants 0/4: (sin, cos) = (sz, cz), 2/6: (cz, -sz), with the sign of the
  // half-turn for 4 and 6.
  double sv = 0, cv = 0;
  switch (j) {
  case 0:
    sv = sz, cv = cz;
    break;
  case 2:
    sv = cz, cv = -sz;
    break;
  case 4:
    sv = -sz, cv = -cz;
    break;
  default: // 6
    sv = -cz, cv = sz;
    break;
  }
  s = negative ? -sv : sv;
  c = cv;
}

double portableSin(double x) {
  double s = 0, c = 0;
  portableSinCos(x, s, c);
  return s;
}

double portableCos(double x) {
  double s = 0, c = 0;
  portableSinCos(x, s, c);
  return c;
}

double portableAtan2(double y, double x) {
  if (std::isnan(x) || std::isnan(y))
    return std::nan("");
  if (y == 0) // C: +-0 or +-pi by the signs
    return std::signbit(x) ? std::copysign(M_PI, y) : y;
  if (x == 0)
    return std::copysign(M_PI_2, y);
  if (std::isinf(x) || std::isinf(y)) {
    if (std::isinf(x) && std::isinf(y))
      return std::copysign(x > 0 ? M_PI_4 : 3 * M_PI_4, y);
    if (std::isinf(y))
      return std::copysign(M_PI_2, y);
    return x > 0 ? std::copysign(0.0, y) : std::copysign(M_PI, y);
  }
  const double r = y / x;
  const double a = r < 0 ? -atanNonNegative(-r) : atanNonNegative(r);
  if (x > 0)
    return a;
  return y >= 0 ? a + M_PI : a - M_PI;
}

} // namespace evoc
