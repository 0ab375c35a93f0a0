// Loading a program: the main file and, transitively, every file it imports,
// resolved against the importing file's folder, then the stdlib search path.
#pragma once

#include "frontend/AST.h"
#include "support/Diagnostics.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace evoc::frontend {

/// Where imports are searched after the importing file's own folder.
struct ImportOptions {
  std::vector<std::string> stdlibDirs; ///< `--stdlib DIR`, searched first
  bool useEnv = true;                  ///< then EVOC_STDLIB_PATH (colon-separated)
  bool useBuiltin = true;              ///< then the compiled-in stdlib folder
};

/// The folders searched for imports, in order (after the importer's folder).
std::vector<std::string> importSearchPath(const ImportOptions &options);

/// Where `import "path";` written in the file `from` may be found, in the
/// order they are tried: (folder searched, file). An absolute path is its own
/// only candidate.
std::vector<std::pair<std::string, std::string>>
importCandidates(const std::string &path, const std::string &from,
                 const std::vector<std::string> &search);

/// The file `import "path";` written in the file `from` resolves to, or ""
/// when it is found nowhere.
std::string resolveImport(const std::string &path, const std::string &from,
                          const ImportOptions &options);

/// The import paths of the stdlib files that declare `name` as a `keyword`
/// ("material", "fn", "physics", "part", "grammar", "controller", "body"),
/// sorted; empty for none. Read once per process (StdlibIndex.cpp).
std::vector<std::string> stdlibDeclaring(const std::string &keyword, const std::string &name);

/// Parses `path` and everything it imports. Returns the program (dependencies
/// first, main file last), or null if the main file could not be read or any
/// file had syntax or import errors (all reported to `diags`).
std::unique_ptr<ast::Program> loadProgram(const std::string &path, const ImportOptions &options,
                                          SourceManager &sources, DiagnosticEngine &diags);

/// As loadProgram, for a main file already in `sources` (tests, fuzzing).
std::unique_ptr<ast::Program> loadProgramFromFile(int file, const ImportOptions &options,
                                                  SourceManager &sources, DiagnosticEngine &diags);

} // namespace evoc::frontend
