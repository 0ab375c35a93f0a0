// The Init kernel of InitKernel.h.
#include "InitKernel.h"

#include "ir/Builder.h"

namespace evoc::test {

void appendInitKernel(ir::Module &m, const std::string &param) {
  ir::Kernel &k = ir::addKernel(m, "init");
  k.kind = ir::KernelKind::Init;
  ir::Builder b(m, k);
  ir::ValueId x1 = b.load(m.findBuffer("point.x"), b.constI(2));
  ir::ValueId s = b.beginLoop(m.findSet("spring"));
  b.store(m.findBuffer(param), s, b.add(b.load(m.findBuffer("spring.rest"), s), x1));
  b.endLoop();
}

} // namespace evoc::test
