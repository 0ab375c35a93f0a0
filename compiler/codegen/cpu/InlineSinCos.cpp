// Inline sin and cos for the fast mode (see InlineSinCos.h).
//
// Why after the pipeline: the loop vectoriser widens `llvm.sin.f64` into
// `llvm.sin.v4f64`, which the X86 back end can only scalarise into four libm
// calls; in the multi-task controller (sin activations, cos in the adjoint)
// those calls took a fifth of the run (docs/architecture.md, "Multi-task
// benchmark and where its time goes"). Replacing the widened calls keeps the vectoriser's choices
// and makes them cheap.
//
// For x (in f64):
//   n = rint(x * 2/pi),  r = ((x - n P1) - n P2) - n P3,  P1 + P2 + P3 = pi/2
// P1 and P2 have 30 significant bits, so n P1 and n P2 are exact for
// |n| <= 2^21 and x - n P1 is exact (Sterbenz); r is within an ulp of the
// true x mod pi/2, in [-pi/4, pi/4] (a rounding of n may overshoot slightly,
// which the polynomials tolerate). With z = r^2 and Cephes' coefficients,
//   s = r + r z S(z),  c = 1 - z/2 + z^2 C(z),
// and the quadrant q = n mod 4 (n + 1 for cos) picks s, c, -s, -c.
#include "codegen/cpu/InlineSinCos.h"

#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

namespace evoc::codegen::cpu {

namespace {

// pi/2 = kP1 + kP2 + kP3 (to 4e-35); kP1 = 0x1.921fb54p+0, kP2 = 0x1.10b46118p-30.
constexpr double kP1 = 1.570796325802803;
constexpr double kP2 = 9.920935791635221e-10;
constexpr double kP3 = 5.170182981794105e-19;
constexpr double kTwoOverPi = 0.6366197723675814;
// Above this |x| (and for NaN, inf) the lane takes libm's value.
constexpr double kLimit = 2097152.0; // 2^21
// Cephes (sin.c): sin(r) = r + r z S(z), cos(r) = 1 - z/2 + z^2 C(z), z = r^2.
constexpr double kSin[] = {1.58962301576546568060e-10, -2.50507477628578072866e-8,
                           2.75573136213857245213e-6,  -1.98412698295895385996e-4,
                           8.33333333332211858878e-3,  -1.66666666666666307295e-1};
constexpr double kCos[] = {-1.13585365213876817300e-11, 2.08757008419747316778e-9,
                           -2.75573141792967388112e-7,  2.48015872888517045348e-5,
                           -1.38888888888730564116e-3,  4.16666666666665929218e-2};

/// sin(x) or cos(x) of an f64 scalar or vector `x`, straight-line.
llvm::Value *fastSinCos(llvm::IRBuilder<> &b, llvm::Value *x, bool cosine) {
  llvm::Type *t = x->getType();
  auto C = [&](double v) { return llvm::ConstantFP::get(t, v); };
  llvm::Type *it = t->getWithNewType(b.getInt64Ty());
  auto I = [&](int64_t v) { return llvm::ConstantInt::get(it, uint64_t(v)); };
  llvm::Value *n = b.CreateUnaryIntrinsic(llvm::Intrinsic::rint, b.CreateFMul(x, C(kTwoOverPi)));
  llvm::Value *r = b.CreateFSub(x, b.CreateFMul(n, C(kP1)));
  r = b.CreateFSub(r, b.CreateFMul(n, C(kP2)));
  r = b.CreateFSub(r, b.CreateFMul(n, C(kP3)));
  // n = 0: r is x itself (-0 - -0 would make it +0).
  r = b.CreateSelect(b.CreateFCmpOEQ(n, C(0.0)), x, r);
  llvm::Value *z = b.CreateFMul(r, r);
  auto poly = [&](const double *k) {
    llvm::Value *p = C(k[0]);
    for (int i = 1; i < 6; ++i)
      p = b.CreateFAdd(b.CreateFMul(p, z), C(k[i]));
    return p;
  };
  llvm::Value *s = b.CreateFAdd(r, b.CreateFMul(b.CreateFMul(r, z), poly(kSin)));
  // sin r has r's sign on [-pi/4, pi/4]; this also keeps sin(-0) = -0.
  s = b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, s, r);
  llvm::Value *c = b.CreateFAdd(b.CreateFSub(C(1.0), b.CreateFMul(z, C(0.5))),
                                b.CreateFMul(b.CreateFMul(z, z), poly(kCos)));
  // |n| <= 2^21 on the path whose result is used, so the conversion is exact.
  llvm::Value *q = b.CreateFPToSI(n, it);
  if (cosine)
    q = b.CreateAdd(q, I(1));
  llvm::Value *odd = b.CreateICmpNE(b.CreateAnd(q, I(1)), I(0));
  llvm::Value *neg = b.CreateICmpNE(b.CreateAnd(q, I(2)), I(0));
  llvm::Value *v = b.CreateSelect(odd, c, s);
  return b.CreateSelect(neg, b.CreateFNeg(v), v);
}

/// Replaces one llvm.sin / llvm.cos call.
void replace(llvm::CallInst *call, bool cosine) {
  llvm::LLVMContext &ctx = call->getContext();
  llvm::IRBuilder<> b(call);
  llvm::FastMathFlags fmf;
  fmf.setAllowContract(true);
  b.setFastMathFlags(fmf);
  llvm::Value *x = call->getArgOperand(0);
  llvm::Type *t = x->getType();
  const bool f32 = t->getScalarType()->isFloatTy();
  llvm::Value *xd = f32 ? b.CreateFPExt(x, t->getWithNewType(b.getDoubleTy())) : x;
  llvm::Value *fast = fastSinCos(b, xd, cosine);
  if (f32)
    fast = b.CreateFPTrunc(fast, t);
  llvm::Value *ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, xd);
  // Unordered: NaN counts as large.
  llvm::Value *large = b.CreateFCmpUGT(ax, llvm::ConstantFP::get(xd->getType(), kLimit));
  llvm::Value *any = t->isVectorTy() ? b.CreateOrReduce(large) : large;
  llvm::MDNode *rare = llvm::MDBuilder(ctx).createBranchWeights(1, 1 << 20);
  llvm::Instruction *thenTerm = llvm::SplitBlockAndInsertIfThen(any, call, false, rare);
  llvm::BasicBlock *thenBB = thenTerm->getParent();
  llvm::BasicBlock *headBB = thenBB->getSinglePredecessor();
  b.SetInsertPoint(thenTerm);
  llvm::Function *libm = llvm::Intrinsic::getDeclaration(
      call->getModule(), cosine ? llvm::Intrinsic::cos : llvm::Intrinsic::sin, {t});
  llvm::Value *slow = b.CreateSelect(large, b.CreateCall(libm, {x}), fast);
  b.SetInsertPoint(call);
  llvm::PHINode *phi = b.CreatePHI(t, 2);
  phi->addIncoming(fast, headBB);
  phi->addIncoming(slow, thenBB);
  call->replaceAllUsesWith(phi);
  call->eraseFromParent();
}

} // namespace

void inlineSinCos(llvm::Module &m) {
  std::vector<std::pair<llvm::CallInst *, bool>> calls;
  for (llvm::Function &f : m)
    for (llvm::BasicBlock &bb : f)
      for (llvm::Instruction &in : bb)
        if (auto *ii = llvm::dyn_cast<llvm::IntrinsicInst>(&in)) {
          llvm::Intrinsic::ID id = ii->getIntrinsicID();
          llvm::Type *et = ii->getType()->getScalarType();
          if ((id == llvm::Intrinsic::sin || id == llvm::Intrinsic::cos) &&
              (et->isDoubleTy() || et->isFloatTy()))
            calls.push_back({ii, id == llvm::Intrinsic::cos});
        }
  // The slow paths' own calls are created after this list, so they stay.
  for (auto [call, cosine] : calls)
    replace(call, cosine);
}

} // namespace evoc::codegen::cpu
