// The weight gradients' window products on the CPU (ir::WindowProduct):
// a register-blocked loop nest built with llvm::IRBuilder for the host's
// vector width (internal to codegen/cpu).
#pragma once

#include <string>

namespace llvm {
class Module;
} // namespace llvm

namespace evoc::codegen::cpu {

/// Name of the exported function (codegen::WindowProductFn ABI).
std::string windowProductSymbol();

/// Adds the function `windowProductSymbol()` to `lm`: Executable::windowProduct
/// for the module's precision (`f32`), blocked for the host's vector registers
/// (`features`, llvm::sys::getHostCPUFeatures' "+avx512f" ... form). Each gradient
/// element sums its terms in the reference order (k = n - 1 down to 0); with
/// `fastFp` each term is one fused multiply-add, without it the reference's
/// guarded product and separate addition (the interpreter bit for bit).
/// With `lanes` L > 1 the function is the product of L episodes in lanes
/// (Executable::windowProduct's `lanes`): each term one vector operation over
/// the L lanes of an element, blocks of rows by columns of such vectors in
/// registers.
void addWindowProduct(llvm::Module &lm, bool f32, bool fastFp, const std::string &features,
                      int lanes);

} // namespace evoc::codegen::cpu
