// The one description of how a gait is drawn (GaitLook.h).
#include "evolve/record/GaitLook.h"

#include <fmt/format.h>

#include <algorithm>

namespace evoc::evolve::look {

Rgb parse(std::string_view hex) {
  auto digit = [&](size_t i) {
    const char c = hex[i];
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : 0;
  };
  if (hex.size() == 4 && hex[0] == '#')
    return {digit(1) * 17, digit(2) * 17, digit(3) * 17};
  if (hex.size() == 7 && hex[0] == '#')
    return {digit(1) * 16 + digit(2), digit(3) * 16 + digit(4), digit(5) * 16 + digit(6)};
  return {};
}

std::string css(Rgb c) { return fmt::format("rgb({},{},{})", c.r, c.g, c.b); }

Rgb at(const Ramp &ramp, double x) {
  x = std::clamp(x, -1.0, 1.0);
  const Rgb &to = x < 0 ? ramp.low : ramp.high;
  const double w = std::fabs(x);
  auto mix = [w](long from, long end) {
    return std::lround(double(from) + w * (double(end) - double(from)));
  };
  return {mix(ramp.mid.r, to.r), mix(ramp.mid.g, to.g), mix(ramp.mid.b, to.b)};
}

double springLength(const double *a, const double *b, int dim) {
  if (dim == 2)
    return std::hypot(a[0] - b[0], a[1] - b[1]);
  double d2 = 0;
  for (int c = 0; c < dim; ++c)
    d2 += (a[c] - b[c]) * (a[c] - b[c]);
  return std::sqrt(d2);
}

double springValue(double length, double rest, double actuation, double output) {
  if (std::isfinite(output))
    return output;
  const double strain = rest > 0 ? length / rest - 1 : 0;
  return strain / std::fabs(actuation);
}

View::View(double yaw, double elevation) {
  right = {std::cos(yaw), std::sin(yaw), 0};
  toViewer = {std::sin(yaw) * std::cos(elevation), -std::cos(yaw) * std::cos(elevation),
              std::sin(elevation)};
  up = {-std::sin(elevation) * std::sin(yaw), std::sin(elevation) * std::cos(yaw),
        std::cos(elevation)};
}

static double dot(const Vec &a, const Vec &b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
double View::u(const Vec &p) const { return dot(p, right); }
double View::v(const Vec &p) const { return dot(p, up); }
double View::depth(const Vec &p) const { return dot(p, toViewer); }

nlohmann::json lookJson() {
  auto rgb = [](Rgb c) { return nlohmann::json::array({c.r, c.g, c.b}); };
  auto box = [](const BoxLook &b) {
    return nlohmann::json{{"fill", b.fill}, {"stroke", b.stroke}, {"width", b.width}};
  };
  return {
      {"spring",
       {{"low", rgb(kSpringRamp.low)},
        {"mid", rgb(kSpringRamp.mid)},
        {"high", rgb(kSpringRamp.high)},
        {"passive", kPassiveSpring},
        {"actuatedWidth", kActuatedWidth},
        {"passiveWidth", kPassiveWidth}}},
      {"point", {{"colour", kPoint}, {"radius", kPointRadius}}},
      {"partOpacity", kPartOpacity},
      {"ground",
       {{"colour", kGround},
        {"width", kGroundWidth},
        {"fill", kTerrainFill},
        {"marks", kGroundMarks},
        {"grid", kGroundGrid}}},
      {"sceneBox", box(kSceneBox)},
      {"object", box(kObject)},
      {"background", kBackground},
      {"trail", kTrail},
      {"view", {{"yaw", kYaw}, {"elevation", kElevation}}},
  };
}

} // namespace evoc::evolve::look
