// Printing the IR in its readable text form (parsed back by Parser.h).
#pragma once

#include <ostream>
#include <string>

#include "ir/IR.h"

namespace evoc::ir {

/// Prints the whole module: header, sets, buffers, kernels.
void print(const Module &m, std::ostream &os);
/// Prints one kernel (`kernel NAME attrs { ... }`).
void printKernel(const Module &m, const Kernel &k, std::ostream &os);
/// The module as a string.
std::string toString(const Module &m);
/// One instruction (without its nested body), e.g. `%5 = add %3, %4`.
std::string instToString(const Module &m, const Inst &in);

/// Lower-case names used in the text form.
const char *typeName(Type t);
const char *roleName(Role r);
const char *kindName(KernelKind k);
const char *timeRefName(TimeRef t);
const char *reduceName(WindowReduce r);

} // namespace evoc::ir
