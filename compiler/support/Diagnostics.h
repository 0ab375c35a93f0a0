// The one diagnostics engine: errors, warnings and notes with source ranges,
// rendered as `file:line:col: error: message`, the source line and a caret.
#pragma once

#include "support/SourceRange.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace evoc {

class SourceManager;

enum class Severity { Error, Warning, Note };

/// One note attached to a diagnostic (`note: 'x' was declared here`).
struct DiagNote {
  SourceRange range;
  std::string message;
};

/// One reported problem.
struct Diagnostic {
  Severity severity = Severity::Error;
  SourceRange range;
  std::string message;
  std::vector<DiagNote> notes;
};

class DiagnosticEngine;

/// Returned by DiagnosticEngine::error/warning to attach notes.
class DiagBuilder {
public:
  DiagBuilder(DiagnosticEngine *engine, int index) : engine_(engine), index_(index) {}
  /// Attaches a note to the diagnostic (ignored if it was suppressed).
  DiagBuilder &note(SourceRange range, std::string message);

private:
  DiagnosticEngine *engine_;
  int index_; // -1: suppressed
};

/// Collects diagnostics for one run. Rendering needs the SourceManager that
/// owns the files the ranges point into.
class DiagnosticEngine {
public:
  explicit DiagnosticEngine(const SourceManager &sources) : sources_(sources) {}

  DiagBuilder error(SourceRange range, std::string message);
  DiagBuilder warning(SourceRange range, std::string message);
  /// An error with no source location (bad command line, unreadable file).
  DiagBuilder error(std::string message) { return error(SourceRange{}, std::move(message)); }

  int errorCount() const { return errors_; }
  int warningCount() const { return warnings_; }
  bool hasErrors() const { return errors_ > 0; }
  const std::vector<Diagnostic> &diagnostics() const { return diags_; }

  /// Turns warnings off (`-w`), or into errors (`--Werror`).
  void setWarningsEnabled(bool on) { warningsOn_ = on; }
  void setWarningsAsErrors(bool on) { werror_ = on; }
  /// After this many errors further ones are dropped (one line says so).
  void setErrorLimit(int n) { errorLimit_ = n; }

  /// `file:line:col: error: message` (no source line, no caret): the form the
  /// golden tests compare.
  std::string headline(const Diagnostic &d) const;
  std::string headline(Severity s, const SourceRange &r, const std::string &msg) const;
  /// The headlines of every diagnostic and each of its notes, in order.
  std::vector<std::string> headlines() const;
  /// The full rendering: headline, source line, caret, then notes likewise.
  std::string render(const Diagnostic &d) const;
  /// Renders every diagnostic not printed yet to `out`.
  void flush(std::ostream &out);

private:
  friend class DiagBuilder;
  DiagBuilder add(Severity s, SourceRange range, std::string message);
  std::string renderOne(Severity s, const SourceRange &r, const std::string &msg) const;

  const SourceManager &sources_;
  std::vector<Diagnostic> diags_;
  int errors_ = 0, warnings_ = 0;
  int errorLimit_ = 100;
  bool warningsOn_ = true, werror_ = false, limitReported_ = false;
  size_t flushed_ = 0;
};

} // namespace evoc
