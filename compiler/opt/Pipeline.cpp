// The optimisation pipeline: a linear script of passes with a dump hook.
#include "ir/Verifier.h"
#include "opt/Passes.h"

namespace evoc::opt {

std::vector<std::string> passNames() { return {"fold", "cse", "dce", "fuse"}; }

void runPasses(ir::Module &m, const PassOptions &o) {
  auto step = [&](bool on, const char *name, void (*pass)(ir::Module &)) {
    if (!on)
      return;
    pass(m);
    ir::verifyAfter(m, name);
    if (o.afterPass)
      o.afterPass(m, name);
  };
  step(o.fold, "fold", constantFold);
  step(o.cse, "cse", cse);
  step(o.dce, "dce", dce);
  step(o.fuse, "fuse", fuseLoops);
  if (o.fuse) { // fused bodies expose more folding and sharing
    step(o.fold, "fold", constantFold);
    step(o.cse, "cse", cse);
    step(o.dce, "dce", dce);
  }
}

} // namespace evoc::opt
