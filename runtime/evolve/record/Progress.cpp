// Progress line formatting and terminal detection.
#include "evolve/record/Progress.h"

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

// Counts generations done out of `generations` (docs/evolution.md: the
// setting counts generation 0), so a run of 3 shows 1/3, 2/3, 3/3; the log
// and the gen_NNNN folders number from 0, so the folder is named too.
std::string Progress::line(const ProgressInfo &i) {
  std::string skipped =
      i.notTrained > 0 ? fmt::format("  {} not trained (nothing to learn)", i.notTrained) : "";
  return fmt::format("generation {}/{} (gen_{:04d})  best fitness {:.6g}  {:.1f} designs/s{}  "
                     "{} left",
                     i.generation + 1, i.generations, i.generation, i.bestFitness,
                     i.designsPerSecond, skipped,
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
