// Gait videos: a small rasteriser (thick lines, discs) drawing frames like
// the report page, and the pipe to ffmpeg.
#include "report/Video.h"

#include "evolve/record/GaitLook.h"
#include "support/Error.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <sstream>
#include <unistd.h>

namespace evoc::report {

namespace look = evolve::look;

namespace {

using Rgb = std::array<uint8_t, 3>;

struct Canvas {
  Image &img;
  void put(int x, int y, Rgb c) {
    if (x < 0 || y < 0 || x >= img.width || y >= img.height)
      return;
    std::copy(c.begin(), c.end(),
              img.rgb.begin() + (size_t(y) * size_t(img.width) + size_t(x)) * 3);
  }
  void fill(Rgb c) {
    for (int y = 0; y < img.height; ++y)
      for (int x = 0; x < img.width; ++x)
        put(x, y, c);
  }
  // A segment of half-width r: every pixel whose centre is within r of it.
  void line(double x0, double y0, double x1, double y1, double r, Rgb c) {
    const double dx = x1 - x0, dy = y1 - y0, len2 = dx * dx + dy * dy;
    const int lo = int(std::floor(std::min(x0, x1) - r)), hi = int(std::ceil(std::max(x0, x1) + r));
    const int top = int(std::floor(std::min(y0, y1) - r)),
              bot = int(std::ceil(std::max(y0, y1) + r));
    for (int y = std::max(0, top); y <= std::min(img.height - 1, bot); ++y)
      for (int x = std::max(0, lo); x <= std::min(img.width - 1, hi); ++x) {
        double t = len2 > 0 ? ((x - x0) * dx + (y - y0) * dy) / len2 : 0;
        t = std::clamp(t, 0.0, 1.0);
        const double ex = x0 + t * dx - x, ey = y0 + t * dy - y;
        if (ex * ex + ey * ey <= r * r)
          put(x, y, c);
      }
  }
};

Rgb rgbOf(const look::Rgb &c) { return {uint8_t(c.r), uint8_t(c.g), uint8_t(c.b)}; }
Rgb rgbOf(const char *hex) { return rgbOf(look::parse(hex)); }

// Spring `s` at `length`, coloured as in the SVG pictures: the controller's
// output `out` when known (not NaN), else its strain (GaitLook.h).
Rgb springColour(const runtime::Spring &s, double length, double out) {
  if (s.actuation == 0)
    return rgbOf(look::kPassiveSpring);
  return rgbOf(look::at(look::kSpringRamp, look::springValue(length, s.rest, s.actuation, out)));
}

// World point -> (screen x, screen y, depth; larger is farther) before
// scaling: a side view in 2D, the pictures' 3D view (GaitLook.h) otherwise.
std::array<double, 3> project(const World &w, const double *p) {
  if (w.dim != 3)
    return {p[0], p[w.upAxis], 0};
  static const look::View view;
  const look::Vec q{p[0], p[1], p[2]};
  return {view.u(q), view.v(q), -view.depth(q)};
}

std::vector<double> centre(const Motion &m, size_t i) {
  const int d = m.robot.dim, n = m.robot.numPoints();
  std::vector<double> c(3, 0.0);
  for (int j = 0; j < n; ++j)
    for (int k = 0; k < d; ++k)
      c[size_t(k)] += m.frames[i][size_t(j * d + k)] / n;
  return c;
}

} // namespace

Image drawFrame(const World &world, const Motion &m, size_t i, int width, int height) {
  Image img{width, height, std::vector<uint8_t>(size_t(width) * size_t(height) * 3)};
  Canvas cv{img};
  cv.fill(rgbOf(look::kBackground));
  const int d = m.robot.dim, n = m.robot.numPoints();
  const std::vector<double> &f = m.frames.at(i);
  double lo = 1e300, hi = -1e300;
  for (size_t k = 0; k < m.frames[0].size(); ++k) {
    lo = std::min(lo, m.frames[0][k]);
    hi = std::max(hi, m.frames[0][k]);
  }
  const double span = std::max(0.05, hi - lo) * 2.6;
  const double scale = std::min(double(width), height * 1.6) / span;
  const std::vector<double> com = centre(m, i);
  auto ground = [&](double x, double y) {
    const double p[3] = {x, y, 0};
    return world.terrain.heightUnder(p, d, world.groundY);
  };
  std::vector<double> g0 = com;
  g0[size_t(world.upAxis)] = ground(com[0], com[1]);
  const auto pc = project(world, com.data()), pg = project(world, g0.data());
  const double ox = width / 2.0 - pc[0] * scale, oy = height * 0.72 + pg[1] * scale;
  auto S = [&](const double *p) {
    auto q = project(world, p);
    return std::array<double, 3>{ox + q[0] * scale, oy - q[1] * scale, q[2]};
  };
  // The ground: a polyline with marks every 0.1; in 3D, lines every 0.1 across too.
  const double x0 = com[0] - span * 1.5, x1 = com[0] + span * 1.5;
  const int rows = d == 3 ? int(std::ceil(span * 30)) : 0;
  for (int r = -rows; r <= rows; ++r) {
    const double y = d == 3 ? std::round(com[1] * 10) / 10 + r * 0.1 : com[1];
    for (int k = 0; k < 120; ++k) {
      double a[3] = {x0 + (x1 - x0) * k / 120, y, 0}, b[3] = {x0 + (x1 - x0) * (k + 1) / 120, y, 0};
      a[world.upAxis] = ground(a[0], a[1]);
      b[world.upAxis] = ground(b[0], b[1]);
      auto p = S(a), q = S(b);
      cv.line(p[0], p[1], q[0], q[1], r == 0 ? look::kGroundWidth / 2 : 0.6,
              rgbOf(r == 0 ? look::kGround : look::kGroundGrid));
    }
  }
  for (double x = std::ceil(x0 * 10) / 10; x < x1; x += 0.1) {
    double a[3] = {x, com[1] - rows * 0.1, 0}, b[3] = {x, com[1] + rows * 0.1, 0};
    a[world.upAxis] = ground(x, a[1]);
    b[world.upAxis] = ground(x, b[1]);
    auto p = S(a), q = S(b);
    if (d == 3)
      cv.line(p[0], p[1], q[0], q[1], 0.6, rgbOf(look::kGroundGrid));
    else
      cv.line(p[0], p[1], p[0] - 6, p[1] + 8, 0.8, rgbOf(look::kGroundMarks));
  }
  // A box's edges (the four of a rectangle in 2D).
  auto edges = [&](const double *lo, const double *hi, double thick, Rgb colour) {
    for (int a = 0; a < (1 << d); ++a)
      for (int axis = 0; axis < d; ++axis) {
        if (a & (1 << axis))
          continue;
        double p0[3] = {0, 0, 0}, p1[3] = {0, 0, 0};
        for (int k = 0; k < d; ++k)
          p0[k] = p1[k] = (a & (1 << k)) ? hi[k] : lo[k];
        p1[axis] = hi[axis];
        auto p = S(p0), q = S(p1);
        cv.line(p[0], p[1], q[0], q[1], thick, colour);
      }
  };
  // The scene's boxes.
  for (const SceneBox &b : world.terrain.boxes)
    edges(b.lo.data(), b.hi.data(), look::kSceneBox.width / 2, rgbOf(look::kSceneBox.stroke));
  // The movable objects where they are (their edges; where they start when
  // the motion does not say).
  const auto &objects = world.terrain.objects;
  for (size_t o = 0; o < objects.size(); ++o) {
    double lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
    for (int k = 0; k < d; ++k) {
      const double half = (objects[o].hi[size_t(k)] - objects[o].lo[size_t(k)]) / 2;
      const bool known = i < m.objects.size() && m.objects[i].size() >= objects.size() * size_t(d);
      const double c = known ? m.objects[i][o * size_t(d) + size_t(k)]
                             : (objects[o].lo[size_t(k)] + objects[o].hi[size_t(k)]) / 2;
      lo[k] = c - half;
      hi[k] = c + half;
    }
    edges(lo, hi, look::kObject.width / 2, rgbOf(look::kObject.stroke));
  }
  // The centre of mass's trail so far.
  for (size_t k = 1; k <= i; ++k) {
    auto a = centre(m, k - 1), b = centre(m, k);
    auto p = S(a.data()), q = S(b.data());
    cv.line(p[0], p[1], q[0], q[1], 1.0, rgbOf(look::kTrail));
  }
  // Springs far to near, then points.
  std::vector<size_t> order(m.robot.springs.size());
  std::iota(order.begin(), order.end(), 0);
  auto depth = [&](size_t s) {
    const auto &sp = m.robot.springs[s];
    return S(&f[size_t(sp.a * d)])[2] + S(&f[size_t(sp.b * d)])[2];
  };
  if (d == 3)
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return depth(a) > depth(b); });
  for (size_t s : order) {
    const auto &sp = m.robot.springs[s];
    const double len = look::springLength(&f[size_t(sp.a * d)], &f[size_t(sp.b * d)], d);
    auto p = S(&f[size_t(sp.a * d)]), q = S(&f[size_t(sp.b * d)]);
    const double out = i < m.outputs.size() && s < m.outputs[i].size()
                           ? m.outputs[i][s]
                           : std::numeric_limits<double>::quiet_NaN();
    cv.line(p[0], p[1], q[0], q[1],
            (sp.actuation != 0 ? look::kActuatedWidth : look::kPassiveWidth) / 2,
            springColour(sp, len, out));
  }
  const auto &acts = m.robot.actuators; // a particle body's: coloured by its actuator
  for (int j = 0; j < n; ++j) {
    auto p = S(&f[size_t(j * d)]);
    Rgb c = rgbOf(look::kPoint);
    if (size_t(j) < acts.size()) {
      const int k = acts[size_t(j)];
      const double out = k >= 0 && i < m.outputs.size() && size_t(k) < m.outputs[i].size()
                             ? m.outputs[i][size_t(k)]
                             : 0.0;
      c = k < 0 ? rgbOf(look::kPassiveSpring)
                : rgbOf(look::at(look::kSpringRamp, std::max(-1.0, std::min(1.0, out))));
    }
    cv.line(p[0], p[1], p[0], p[1], acts.empty() ? look::kPointRadius : look::kPointRadius * 0.6,
            c);
  }
  // Progress along the bottom edge.
  const double done = m.frames.size() > 1 ? double(i) / double(m.frames.size() - 1) : 1;
  cv.line(0, height - 3, done * width, height - 3, 1.5, {90, 90, 200});
  return img;
}

std::string toPpm(const Image &img) {
  std::string out = fmt::format("P6\n{} {}\n255\n", img.width, img.height);
  out.append(reinterpret_cast<const char *>(img.rgb.data()), img.rgb.size());
  return out;
}

// True when `name` is an executable file in a directory of PATH.
static bool onPath(const std::string &name) {
  const char *path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  std::string dir;
  while (std::getline(dirs, dir, ':'))
    if (!dir.empty() && access((dir + "/" + name).c_str(), X_OK) == 0)
      return true;
  return false;
}

static std::string shellQuoted(const std::string &s) {
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

void writeVideo(const World &world, const Motion &m, const std::filesystem::path &out) {
  const std::string ext = out.extension().string();
  if (ext != ".mp4" && ext != ".gif")
    throw Error(fmt::format("--video '{}': the file must end in .mp4 or .gif", out.string()));
  if (!onPath("ffmpeg"))
    throw Error("writing a video needs ffmpeg, which is not installed (not on PATH); install "
                "Debian's package with `apt-get install ffmpeg` and run this again");
  if (m.frames.empty())
    throw Error("the gait has no frames to write");
  const double seconds = std::max(1e-6, double(m.times.back()) * world.dt);
  const int fps = int(std::clamp(std::lround(double(m.frames.size()) / seconds), 10L, 50L));
  const std::string filter =
      ext == ".gif" ? "-vf 'split[a][b];[a]palettegen[p];[b][p]paletteuse'" : "-pix_fmt yuv420p";
  const std::string cmd =
      fmt::format("ffmpeg -loglevel error -y -f image2pipe -vcodec ppm -framerate {} -i - {} {}",
                  fps, filter, shellQuoted(out.string()));
  FILE *pipe = popen(cmd.c_str(), "w");
  if (!pipe)
    throw Error("cannot start ffmpeg");
  // A failing ffmpeg closes the pipe: see the write fail, not a SIGPIPE.
  auto *previous = std::signal(SIGPIPE, SIG_IGN);
  bool wrote = true;
  for (size_t i = 0; i < m.frames.size() && wrote; ++i) {
    std::string ppm = toPpm(drawFrame(world, m, i, 640, 360));
    wrote = std::fwrite(ppm.data(), 1, ppm.size(), pipe) == ppm.size();
  }
  const int rc = pclose(pipe);
  std::signal(SIGPIPE, previous);
  if (!wrote || rc != 0)
    throw Error(fmt::format("ffmpeg could not write '{}' (exit status {}); its message is above",
                            out.string(), rc));
}

} // namespace evoc::report
