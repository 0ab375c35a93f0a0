// support/PortableMath.h: libm-free sin, cos and atan2 against libm (within
// a few ulps), exact at the angles body geometry uses most, and C's rules
// for signed zeros and infinities in atan2.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "support/PortableMath.h"

using namespace evoc;

namespace {
// |a - b| within `ulps` units in the last place of the larger, with a floor
// for results near zero (sin near pi: the true value is tiny).
bool near(double a, double b, double ulps = 2, double floor = 4e-16) {
  const double scale = std::max(std::fabs(a), std::fabs(b));
  return std::fabs(a - b) <= std::max(floor, ulps * scale * std::numeric_limits<double>::epsilon());
}
} // namespace

TEST_CASE("portable sin and cos agree with libm", "[support][math]") {
  double worst = 0;
  for (int i = -20000; i <= 20000; ++i) {
    const double x = i * 0.00173; // about +-34.6, every octant many times
    double s = 0, c = 0;
    portableSinCos(x, s, c);
    INFO("x = " << x);
    CHECK(near(s, std::sin(x)));
    CHECK(near(c, std::cos(x)));
    worst = std::max({worst, std::fabs(s - std::sin(x)), std::fabs(c - std::cos(x))});
    CHECK(portableSin(x) == s);
    CHECK(portableCos(x) == c);
  }
  WARN("worst |portable - libm| over [-34.6, 34.6]: " << worst);
  CHECK(near(portableSin(1e7 + 0.5), std::sin(1e7 + 0.5), 2, 1e-9));
  for (double x : {-3e9, 1e12}) { // reduced by fmod(x, double(2 pi)): error about x * 4e-17
    INFO("x = " << x);
    double s = 0, c = 0;
    portableSinCos(x, s, c);
    CHECK(std::fabs(s - std::sin(x)) < std::fabs(x) * 1e-16);
    CHECK(std::fabs(s * s + c * c - 1) < 1e-15);
  }
}

TEST_CASE("portable sin and cos are exact where geometry needs it", "[support][math]") {
  CHECK(portableSin(0.0) == 0.0);
  CHECK(portableCos(0.0) == 1.0);
  CHECK(portableSin(M_PI_2) == 1.0);
  CHECK(portableCos(M_PI) == -1.0);
  CHECK(portableSin(-M_PI_2) == -1.0);
  CHECK(near(portableSin(M_PI), std::sin(M_PI))); // 1.22e-16, the gap to pi
  CHECK(std::isnan(portableSin(std::numeric_limits<double>::infinity())));
  CHECK(std::isnan(portableCos(std::nan(""))));
  // Degrees through radians, as grammar parts turn: every 15 degrees.
  for (int deg = -360; deg <= 360; deg += 15) {
    const double r = deg * M_PI / 180;
    INFO(deg << " degrees");
    CHECK(near(portableSin(r), std::sin(r)));
    CHECK(near(portableCos(r), std::cos(r)));
  }
}

TEST_CASE("portable atan2 agrees with libm and C's special cases", "[support][math]") {
  for (int i = -60; i <= 60; ++i)
    for (int j = -60; j <= 60; ++j) {
      const double y = i * 0.37, x = j * 0.29;
      INFO("atan2(" << y << ", " << x << ")");
      CHECK(near(portableAtan2(y, x), std::atan2(y, x)));
    }
  for (double y : {1e-300, 1e-5, 0.5, 1.0, 2.0, 1e5, 1e300})
    for (double x : {1e-300, 1e-5, 0.5, 1.0, 2.0, 1e5, 1e300})
      for (int sy : {-1, 1})
        for (int sx : {-1, 1}) {
          INFO("atan2(" << sy * y << ", " << sx * x << ")");
          CHECK(near(portableAtan2(sy * y, sx * x), std::atan2(sy * y, sx * x)));
        }
  const double inf = std::numeric_limits<double>::infinity();
  for (double y : {0.0, -0.0, 1.0, -1.0, inf, -inf})
    for (double x : {0.0, -0.0, 1.0, -1.0, inf, -inf}) {
      INFO("atan2(" << y << ", " << x << ")");
      const double p = portableAtan2(y, x), l = std::atan2(y, x);
      CHECK(p == l);
      CHECK(std::signbit(p) == std::signbit(l));
    }
  CHECK(std::isnan(portableAtan2(std::nan(""), 1.0)));
}
