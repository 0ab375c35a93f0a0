// How a gait is drawn, written once: the spring colours and strokes, the
// ground, scene and object colours, and the 3D view. The run directory's
// SVG pictures (Svg.cpp, Svg3d.cpp) and the report's videos
// (report/Video.cpp) use these constants; the report page (report/report.js)
// receives them as the JSON object lookJson() returns, so the three agree.
#pragma once

#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <string>
#include <string_view>

namespace evoc::evolve::look {

/// A colour: red, green and blue in 0..255.
struct Rgb {
  long r = 0, g = 0, b = 0;
  bool operator==(const Rgb &) const = default;
};

/// The colour of "#rgb" or "#rrggbb" (how the constants below are written);
/// black for anything else.
Rgb parse(std::string_view hex);

/// "rgb(r,g,b)", how the pictures write a computed colour.
std::string css(Rgb c);

/// A colour map over [-1, 1]: `mid` at 0, linear in |x| toward `low` below
/// zero and `high` above, clamped at the ends.
struct Ramp {
  Rgb low, mid, high;
};
Rgb at(const Ramp &ramp, double x);

/// An actuated spring's colour (springValue's value): red contracted (-1),
/// orange at rest length (0), blue extended (+1).
inline constexpr Ramp kSpringRamp{{200, 0, 0}, {230, 140, 20}, {30, 80, 230}};

/// The distance between points a and b (dim coordinates each), the same
/// bits wherever a gait is drawn.
double springLength(const double *a, const double *b, int dim);

/// What kSpringRamp colours for an actuated spring of rest length `rest` and
/// amplitude `actuation` at `length`: the controller's output when it is
/// known (`output` finite; an output x asks for the length rest * (1 +
/// actuation * x), stdlib/physics/mass_spring.evo), else the strain relative
/// to the amplitude, (length / rest - 1) / |actuation|.
double springValue(double length, double rest, double actuation, double output = NAN);

/// Springs and points.
inline constexpr const char *kPassiveSpring = "#999";
inline constexpr double kActuatedWidth = 2.5, kPassiveWidth = 1.2;
inline constexpr const char *kPoint = "#222";
inline constexpr double kPointRadius = 2.2;
/// A grammar body's parts, each in its kind's colour (partColours).
inline constexpr double kPartOpacity = 0.3;

/// The ground: its line (2D), the terrain under it, the 3D plane and the
/// points' shadows on it.
inline constexpr const char *kGround = "#6b4f2a";
inline constexpr double kGroundWidth = 3;
inline constexpr const char *kTerrainFill = "#e8dcc4";
inline constexpr const char *kGroundPlane = "#d9c9a8";
inline constexpr const char *kShadow = "#8a7a5a";

/// A box: the scene's fixed boxes and the world's movable objects.
struct BoxLook {
  const char *fill, *stroke;
  double width;
};
inline constexpr BoxLook kSceneBox{"#cbbd9f", "#6b4f2a", 2};
inline constexpr BoxLook kObject{"#d9a441", "#333", 2};

/// What only the moving pictures (video and page) draw: their background,
/// the centre of mass's trail, the ground's marks every 0.1 (2D) and grid
/// lines (3D).
inline constexpr const char *kBackground = "#f8f8f4";
inline constexpr const char *kTrail = "#287828";
inline constexpr const char *kGroundMarks = "#8d7b58";
inline constexpr const char *kGroundGrid = "#b9ad92";

using Vec = std::array<double, 3>;

/// The 3D view every picture starts from (the page's can be turned).
inline constexpr double kYaw = 30 * M_PI / 180, kElevation = 25 * M_PI / 180;

/// The 3D view: orthographic, from the robot's right (-y) side turned `yaw`
/// toward its front (+x) and `elevation` above the ground (z up), so +x, the
/// walking direction, runs left to right. Screen right, screen up and
/// toward the viewer are orthonormal.
struct View {
  Vec right, up, toViewer;
  explicit View(double yaw = kYaw, double elevation = kElevation);
  double u(const Vec &p) const;     ///< screen right
  double v(const Vec &p) const;     ///< screen up
  double depth(const Vec &p) const; ///< larger: nearer
};
/// Light from above, behind the viewer's left shoulder (a unit vector
/// toward the light), for shaded faces.
inline constexpr Vec kLight = {-0.36, -0.48, 0.8};

/// All of the above as the report page reads it (report.js, `LOOK`).
nlohmann::json lookJson();

} // namespace evoc::evolve::look
