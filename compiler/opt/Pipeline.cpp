// The optimisation pipeline: a linear script of passes with a dump hook.
#include "ir/Verifier.h"
#include "opt/Passes.h"

namespace evoc::opt {

namespace {
struct NamedPass {
  const char *name;
  void (*run)(ir::Module &);
};
constexpr NamedPass kPasses[] = {{"fold", constantFold},
                                 {"cse", cse},
                                 {"dce", dce},
                                 {"fuse", fuseLoops},
                                 {"fission", [](ir::Module &m) { fissionLoops(m); }}};
} // namespace

// Every pass by name; runPasses runs all but fission (the CPU back end's).
std::vector<std::string> passNames() {
  std::vector<std::string> names;
  for (const NamedPass &p : kPasses)
    names.push_back(p.name);
  return names;
}

bool runPass(ir::Module &m, const std::string &name) {
  for (const NamedPass &p : kPasses)
    if (name == p.name) {
      p.run(m);
      ir::verifyAfter(m, name);
      return true;
    }
  return false;
}

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
