// The optimisation passes over the IR and the pipeline that runs them.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/IR.h"

namespace evoc::opt {

/// Folds ops whose operands are constants (with the interpreter's exact
/// semantics and the module's precision) and simple identities:
/// x + 0, x - 0, x * 1, x / 1, neg(neg x), select on a constant condition,
/// select(c, x, x), and, or, not on constants.
void constantFold(ir::Module &m);
/// Common-subexpression elimination of pure ops (and loads of buffers the
/// kernel never writes), scoped by the loop nest.
void cse(ir::Module &m);
/// Removes instructions whose results are unused and that write nothing,
/// locals never read, and loops left empty.
void dce(ir::Module &m);
/// Fuses consecutive loops over the same set when legal: every buffer that
/// one writes and the other touches is accessed only at the iteration's own
/// element (index i, or i * comps + c), and no local is updated in both.
void fuseLoops(ir::Module &m);

/// Loop fission, the CPU back end's pass (pass name "fission"; the CPU back
/// end runs it on its own copy of the module in fast mode from O2 on, and
/// `--dump-after=fission` shows what it gives): splits every loop whose body
/// is "inner loops / reductions, then pure math ending in stores" (`for s:
/// acc = sum_u W[s,u] h[u]; act[s] = tanh(acc + b[s])`) into loops that
/// keep the reductions, run the costly elementwise slice (which LLVM then
/// vectorises: it vectorises innermost loops only) and the rest, and hoists
/// the costly ops of read-only data out of loops that cannot vectorise.
/// Values cross through scratch buffers appended to `m.buffers` (Temp, elem
/// F, over the loop's set), at indices >= the module's original buffer count;
/// the CPU lowering gives them storage of its own, so the kernel ABI does not
/// change. Legal because no buffer written in one of the loops is accessed in
/// another and no local spans loops. Returns the number of loops changed.
int fissionLoops(ir::Module &m);

/// Which passes to run and a hook called after each with its name.
struct PassOptions {
  bool fold = true, cse = true, dce = true, fuse = true;
  /// Called after every pass, e.g. to implement `--dump-after=PASS`
  /// (names: "fold", "cse", "dce", "fuse").
  std::function<void(const ir::Module &m, const std::string &pass)> afterPass;
};

/// Runs fold, cse, dce, fuse, then fold, cse, dce again (fusion exposes
/// more), verifying the IR after each pass in EVOC_VERIFY_IR builds.
void runPasses(ir::Module &m, const PassOptions &opts = {});

/// The pass names the pipeline knows, in order of first run.
std::vector<std::string> passNames();

/// Runs the one pass named `name` (one of passNames()), verifying the IR
/// after it in EVOC_VERIFY_IR builds; false when no pass has that name.
bool runPass(ir::Module &m, const std::string &name);

} // namespace evoc::opt
