// The evoc command line: the subcommand table, options common to every
// subcommand, and the `--emit` kinds of `evoc compile`. Each subcommand lives
// in its own file and registers itself here.
#pragma once

#include "autodiff/Differentiate.h"
#include "sema/Program.h"

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace evoc {
class SourceManager;
class DiagnosticEngine;
} // namespace evoc

namespace evoc::app {

/// A subcommand: `evoc NAME args...`. `run` gets the arguments after NAME.
/// `usage` is what `evoc NAME --help` prints after "usage: " (its synopsis
/// and options); main answers --help for every subcommand, before `run`.
struct Subcommand {
  const char *name;
  const char *summary;
  int (*run)(const std::vector<std::string> &args);
  const char *usage = nullptr;
  bool commonOptions = true; ///< --help lists the common options too
};

/// Registers a subcommand (call from a static initializer in its file).
bool addSubcommand(Subcommand cmd);
const std::vector<Subcommand> &subcommands();
/// Runs subcommand `name` with `args` (the arguments after NAME), as `evoc
/// NAME args...` does; -1 when there is no such subcommand. The Python
/// module runs `evoc run` and `evoc render` through it (docs/python.md).
int runSubcommand(const std::string &name, const std::vector<std::string> &args);
/// A function `evoc run` calls after every committed generation (null: none).
/// An evoc::Error it throws stops the run there, resumable: Python's progress
/// and Ctrl-C (docs/python.md).
void setRunHook(std::function<void()> hook);
const std::function<void()> &runHook();

/// Options shared by the subcommands that read a .evo file.
struct CommonOptions {
  std::string file;              ///< the .evo file (first positional)
  sema::CheckOptions check;      ///< --stdlib DIR, --set key=value
  bool warnings = true;          ///< -w turns them off
  bool warningsAsErrors = false; ///< --Werror
  /// --replay-temps: Replay; --no-window-products: Keep (PipelineOptions::tape)
  autodiff::Tape tape = autodiff::Tape::Products;
  /// PipelineOptions::bodyGradients (the Python module's body_grads; no
  /// command-line flag sets it).
  bool bodyGradients = false;
  std::vector<std::string> rest; ///< arguments this parser did not take
  /// The file's text when it is not to be read from disk (Python's
  /// evoc.load of a string); `file` is then the name diagnostics show.
  std::optional<std::string> text;
};

/// Parses the common options; unknown `--x` arguments go to `rest`. Returns
/// false (after printing why) on a malformed option.
bool parseCommonOptions(const std::vector<std::string> &args, CommonOptions &out);

/// Loads and checks `opts.file`, printing diagnostics to stderr. Returns the
/// checked program, or nullopt on errors.
std::optional<sema::CheckedProgram> loadChecked(const CommonOptions &opts, SourceManager &sources,
                                                DiagnosticEngine &diags);
/// The same for a command that reports nothing after checking (check,
/// compile): its diagnostics end with the check.
std::optional<sema::CheckedProgram> loadChecked(const CommonOptions &opts, SourceManager &sources);

/// The default run directory of FILE: runs/<file stem>.
std::string defaultRunDir(const std::string &file);
/// The whole text of a file ("" when it cannot be read).
std::string readText(const std::string &path);
/// The experiment as run, for a run directory's resolved.evo: a header
/// naming `command` and the --set overrides as comments, then every module's
/// text (imports first).
std::string resolvedSource(const std::string &command, const CommonOptions &opts,
                           const sema::CheckedProgram &program);

/// The options of `evoc run` and `evoc train` after the common ones.
struct RunArgs {
  std::string out, resume, backend = "cpu";
  std::string robot; ///< --robot R.json (evoc train: the body to train)
  int threads = 0;
  int lanes = 0; ///< --lanes L (evoc train): episodes per kernel call; 0: the default
};
/// Parses them for `command` ("evoc run", "evoc train"); --robot and
/// --lanes only where `robot` is set (evoc train). Prints why and returns false on a malformed
/// option.
bool parseRunArgs(const std::vector<std::string> &rest, const char *command, bool robot,
                  RunArgs &out);

class Session;
/// `evoc train`: trains the fixed body of a program with a `train` block
/// (also what `evoc run` does with one). `rest`: the options after the common
/// ones. `compiled`: the program already compiled for the back end `rest`
/// names (evoc run's), so that it is not compiled twice; null compiles it.
int runTrainProgram(const CommonOptions &opts, const std::vector<std::string> &rest,
                    const Session *compiled = nullptr);

/// An `evoc compile --emit KIND` output. `ast` is built in; later layers
/// register ir, grad-ir, opt-ir, llvm, cuda.
struct EmitKind {
  const char *name;
  int (*emit)(const sema::CheckedProgram &program, const SourceManager &sources,
              const CommonOptions &opts, std::ostream &out);
};
bool addEmitKind(EmitKind kind);
const std::vector<EmitKind> &emitKinds();

} // namespace evoc::app
