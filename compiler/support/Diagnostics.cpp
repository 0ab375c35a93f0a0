// DiagnosticEngine: collecting and rendering diagnostics with carets.
#include "support/Diagnostics.h"

#include "support/SourceManager.h"

#include <algorithm>
#include <ostream>

namespace evoc {

DiagBuilder &DiagBuilder::note(SourceRange range, std::string message) {
  if (index_ >= 0)
    engine_->diags_[index_].notes.push_back({range, std::move(message)});
  return *this;
}

DiagBuilder DiagnosticEngine::error(SourceRange range, std::string message) {
  return add(Severity::Error, range, std::move(message));
}

DiagBuilder DiagnosticEngine::warning(SourceRange range, std::string message) {
  if (!warningsOn_)
    return DiagBuilder(this, -1);
  return add(werror_ ? Severity::Error : Severity::Warning, range, std::move(message));
}

DiagBuilder DiagnosticEngine::add(Severity s, SourceRange range, std::string message) {
  if (s == Severity::Error) {
    if (errors_ >= errorLimit_) {
      ++errors_;
      if (!limitReported_) {
        limitReported_ = true;
        diags_.push_back({Severity::Note, {}, "too many errors; stopping here", {}});
      }
      return DiagBuilder(this, -1);
    }
    ++errors_;
  } else if (s == Severity::Warning) {
    ++warnings_;
  }
  diags_.push_back({s, range, std::move(message), {}});
  return DiagBuilder(this, int(diags_.size() - 1));
}

static const char *severityName(Severity s) {
  switch (s) {
  case Severity::Error:
    return "error";
  case Severity::Warning:
    return "warning";
  case Severity::Note:
    return "note";
  }
  return "error";
}

std::string DiagnosticEngine::headline(Severity s, const SourceRange &r,
                                       const std::string &msg) const {
  std::string out;
  if (r.begin.file >= 0 && r.begin.file < sources_.numFiles()) {
    out += sources_.path(r.begin.file);
    if (r.begin.line > 0)
      out += ":" + std::to_string(r.begin.line) + ":" + std::to_string(r.begin.col);
    out += ": ";
  } else {
    out += "evoc: ";
  }
  out += severityName(s);
  out += ": ";
  out += msg;
  return out;
}

std::string DiagnosticEngine::headline(const Diagnostic &d) const {
  return headline(d.severity, d.range, d.message);
}

std::vector<std::string> DiagnosticEngine::headlines() const {
  std::vector<std::string> out;
  for (const auto &d : diags_) {
    out.push_back(headline(d));
    for (const auto &n : d.notes)
      out.push_back(headline(Severity::Note, n.range, n.message));
  }
  return out;
}

std::string DiagnosticEngine::renderOne(Severity s, const SourceRange &r,
                                        const std::string &msg) const {
  std::string out = headline(s, r, msg) + "\n";
  if (!r.valid() || r.begin.file >= sources_.numFiles())
    return out;
  std::string_view line = sources_.lineText(r.begin.file, r.begin.line);
  std::string shown;
  for (char c : line)
    shown += (c == '\t') ? ' ' : ((unsigned char)c < 0x20 ? '?' : c);
  out += "  " + shown + "\n";
  int startCol = r.begin.col;
  int endCol = startCol + 1;
  if (r.end.file == r.begin.file && r.end.line == r.begin.line && r.end.col > startCol)
    endCol = r.end.col;
  else if (r.end.line > r.begin.line)
    endCol = int(line.size()) + 1;
  endCol = std::max(endCol, startCol + 1);
  // Columns count bytes; the terminal shows characters, so UTF-8
  // continuation bytes take no room.
  auto width = [&](int from, int to) { // 0-based byte columns [from, to)
    int w = 0;
    for (int i = from; i < to; ++i)
      if (i >= int(line.size()) || (static_cast<unsigned char>(line[size_t(i)]) & 0xC0) != 0x80)
        ++w;
    return w;
  };
  std::string caret(size_t(width(0, std::max(0, startCol - 1))), ' ');
  caret += '^';
  caret += std::string(size_t(std::max(0, width(startCol, endCol - 1))), '~');
  out += "  " + caret + "\n";
  return out;
}

std::string DiagnosticEngine::render(const Diagnostic &d) const {
  std::string out = renderOne(d.severity, d.range, d.message);
  for (const auto &n : d.notes)
    out += renderOne(Severity::Note, n.range, n.message);
  return out;
}

void DiagnosticEngine::flush(std::ostream &out) {
  for (; flushed_ < diags_.size(); ++flushed_)
    out << render(diags_[flushed_]);
  out.flush();
}

} // namespace evoc
