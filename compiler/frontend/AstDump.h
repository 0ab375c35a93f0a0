// The readable AST dump (`evoc compile FILE --emit ast`): one node per line,
// indented, each with its source range <line:col-line:col> and, after sema,
// its type.
#pragma once

#include "frontend/AST.h"

#include <iosfwd>

namespace evoc::ast {

/// Writes every module of the program, dependencies first.
void dumpProgram(const Program &program, std::ostream &out);

} // namespace evoc::ast
