// Progress line formatting and terminal detection.
#include "evolve/Progress.h"

#include <fmt/format.h>

#include <cmath>
#include <unistd.h>

namespace evoc::evolve {

std::string formatDuration(double s) {
  if (!(s >= 0) || !std::isfinite(s))
    return "?";
  long t = std::lround(s);
  if (t >= 3600)
    return fmt::format("{}h{:02d}m", t / 3600, (t % 3600) / 60);
  if (t >= 60)
    return fmt::format("{}m{:02d}s", t / 60, t % 60);
  return fmt::format("{}s", t);
}

Progress::Progress(std::FILE *out, int forceTty)
    : out_(out), tty_(forceTty < 0 ? (out && ::isatty(::fileno(out))) : forceTty == 1) {}

Progress::~Progress() { finish(); }

std::string Progress::line(const ProgressInfo &i) {
  return fmt::format("generation {}/{}  best fitness {:.6g}  {:.1f} designs/s  {} left",
                     i.generation, i.generations > 0 ? i.generations - 1 : 0, i.bestFitness,
                     i.designsPerSecond,
                     i.secondsLeft < 0 ? std::string("?") : formatDuration(i.secondsLeft));
}

void Progress::update(const ProgressInfo &info) {
  if (!out_)
    return;
  if (tty_) {
    fmt::print(out_, "\r\033[K{}", line(info));
    pending_ = true;
  } else {
    fmt::print(out_, "{}\n", line(info));
  }
  std::fflush(out_);
}

void Progress::note(const std::string &message) {
  if (!out_)
    return;
  finish();
  fmt::print(out_, "{}\n", message);
  std::fflush(out_);
}

void Progress::finish() {
  if (out_ && pending_) {
    fmt::print(out_, "\n");
    std::fflush(out_);
  }
  pending_ = false;
}

} // namespace evoc::evolve
