// Videos of a gait: frames rasterised by evoc (RGB, no SVG, no font) and
// piped as PPM images to ffmpeg, which writes the MP4 or GIF.
#pragma once

#include "report/Report.h"

#include <cstdint>
#include <filesystem>
#include <vector>

namespace evoc::report {

/// An RGB image, rows top to bottom.
struct Image {
  int width = 0, height = 0;
  std::vector<uint8_t> rgb;
};

/// Frame `i` of a motion as the page draws it: the ground (and terrain), the
/// centre of mass's trail, springs coloured as on the page, points; a 2D side
/// view or a fixed oblique 3D view, centred on the centre of mass.
Image drawFrame(const World &world, const Motion &m, size_t i, int width, int height);

/// The image as a binary PPM (P6).
std::string toPpm(const Image &img);

/// Writes `out` (.mp4 or .gif) with ffmpeg, one frame per sampled state,
/// played at about real time (10 to 50 frames per second). Throws
/// evoc::Error when ffmpeg is not installed (saying how to install it), the
/// extension is neither, or ffmpeg fails.
void writeVideo(const World &world, const Motion &m, const std::filesystem::path &out);

} // namespace evoc::report
