// Parsing the printed IR text form back into a Module (for tests and tools).
#pragma once

#include <string>

#include "ir/IR.h"

namespace evoc::ir {

/// Parses text produced by print(). Value ids are kept as written, so
/// print(parse(print(m))) == print(m). Throws evoc::Error ("ir:LINE: ...")
/// on malformed input. Value types are inferred as the Builder does.
Module parse(const std::string &text);

} // namespace evoc::ir
