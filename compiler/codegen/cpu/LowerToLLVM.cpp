// Lowers evoc IR kernels to LLVM IR functions with llvm::IRBuilder.
//
// Shape of what is emitted for kernel k (see LowerToLLVM.h):
//
//   define internal void @evoc.body.k(ptr noalias %b0, ..., ptr %sizes, i64 %t)
//       alwaysinline          ; the kernel itself: counted loops, GEP+load/store
//   define void @evoc_kernel_k(ptr %buffers, ptr %sizes, i64 %t)
//       ; loads buffers[b] of each buffer the kernel uses, calls the body
//
// After inlining, the noalias parameters become scoped alias metadata, which
// is what lets loops over points, springs and units vectorise.
//
// Semantics mirror the IR interpreter (IR.h): min/max are compare + select,
// index buffers hold int32_t (loads sign-extend to i64), tanh calls libm
// (inline and vectorisable in fastFp mode), the other math ops are LLVM
// intrinsics that lower to the same libm functions (in fast mode sin and cos
// are replaced after the pipeline: InlineSinCos.h). Only in fastFp mode do
// float ops carry `contract` (FMA) and accumulator adds `reassoc`.
#include "codegen/cpu/LowerToLLVM.h"

#include <map>
#include <optional>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PatternMatch.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "codegen/cpu/UnrollAndJam.h"
#include "ir/Walk.h"
#include "support/Error.h"

namespace evoc::codegen::cpu {

std::string kernelSymbol(int k) { return "evoc_kernel_" + std::to_string(k); }

namespace {

using ir::Op;
using ir::Type;
using ir::ValueId;

/// Collects the buffers and sets a block (recursively) touches.
void collectUses(const ir::Block &b, std::vector<bool> &bufs, std::vector<bool> &sets) {
  ir::walk(b, [&](const ir::Inst &in) {
    if (in.buffer >= 0)
      bufs.at(in.buffer) = true;
    if (in.set >= 0 && (in.op == Op::Size || in.op == Op::Loop))
      sets.at(in.set) = true;
  });
}

class KernelLowering {
public:
  KernelLowering(const ir::Module &m, int kIndex, llvm::Module &lm, bool fastFp, int firstScratch,
                 int lanes, const JamOptions &jam)
      : m_(m), k_(m.kernels[kIndex]), kIndex_(kIndex), lm_(lm), ctx_(lm.getContext()), b_(ctx_),
        fastFp_(fastFp), firstScratch_(firstScratch), lanes_(lanes), jam_(jam) {
    fty_ = m.precision == ir::Precision::F64 ? b_.getDoubleTy() : b_.getFloatTy();
    vty_ = lanes > 1 ? llvm::FixedVectorType::get(fty_, unsigned(lanes)) : fty_;
    if (fastFp) {
      llvm::FastMathFlags fmf;
      fmf.setAllowContract(true);
      b_.setFastMathFlags(fmf);
    }
  }

  void run();

private:
  llvm::Type *typeOf(Type t) {
    switch (t) {
    case Type::F:
      return fty_;
    case Type::I:
      return b_.getInt64Ty();
    case Type::B:
      return b_.getInt1Ty();
    case Type::None:
      break;
    }
    internalError(__FILE__, __LINE__, "value of type None");
  }
  llvm::Value *val(ValueId v) {
    EVOC_ASSERT(v < values_.size() && values_[v], "LLVM lowering: use of undefined value %" +
                                                      std::to_string(v) + " in kernel " + k_.name);
    return values_[v];
  }
  Type valType(ValueId v) const { return v < k_.valueTypes.size() ? k_.valueTypes[v] : Type::None; }
  llvm::Value *elemPtr(const ir::Inst &in, llvm::Value *index) {
    auto it = bufPtr_.find(in.buffer);
    EVOC_ASSERT(it != bufPtr_.end(), "LLVM lowering: buffer not bound");
    if (lanes_ > 1 && episodic(in.buffer)) // element i of every lane: [i * lanes, (i + 1) * lanes)
      return b_.CreateInBoundsGEP(vty_, it->second, index);
    return b_.CreateInBoundsGEP(memTypeOf(in.buffer), it->second, index);
  }
  /// Whether a buffer holds one value per episode (lanes > 1: interleaved,
  /// docs/architecture.md "Episodes in lanes"): all but the shared body and
  /// parameters.
  bool episodic(int buffer) const {
    ir::Role r = m_.buffers.at(buffer).role;
    return r != ir::Role::Body && r != ir::Role::Param;
  }
  /// A uniform value as every lane's (lanes > 1), else itself.
  llvm::Value *spread(llvm::Value *v) {
    return lanes_ > 1 && !v->getType()->isVectorTy() ? b_.CreateVectorSplat(unsigned(lanes_), v)
                                                     : v;
  }
  /// The float constant `v`, in every lane.
  llvm::Constant *constF(double v) { return llvm::ConstantFP::get(vty_, v); }
  [[noreturn]] void notInLanes(const std::string &what) {
    throw Error("kernel '" + k_.name + "' cannot run episodes in lanes: " + what);
  }
  llvm::Value *unaryIntrinsic(llvm::Intrinsic::ID id, llvm::Value *x) {
    return b_.CreateUnaryIntrinsic(id, x);
  }
  // The IR's exact semantics (IR.h): min(a, c) = c < a ? c : a,
  // max(a, c) = c > a ? c : a; ties and NaN in c pick a.
  llvm::Value *irMin(llvm::Value *a, llvm::Value *c) {
    return b_.CreateSelect(b_.CreateFCmpOLT(c, a), c, a);
  }
  llvm::Value *irMax(llvm::Value *a, llvm::Value *c) {
    return b_.CreateSelect(b_.CreateFCmpOGT(c, a), c, a);
  }
  /// ftoi (IR.h): toward zero, saturated to int32, NaN -> 0, widened to i64.
  llvm::Value *ftoi(llvm::Value *x) {
    if (x->getType()->isVectorTy())
      notInLanes("it computes an index from each episode's values (ftoi)");
    llvm::Value *i32 =
        b_.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {b_.getInt32Ty(), x->getType()}, {x});
    return b_.CreateSExt(i32, b_.getInt64Ty());
  }
  /// A lane vector's alignment in memory: its element's (episodic buffers
  /// are interleaved element by element, not padded to the vector's size).
  llvm::Align elemAlign() const { return llvm::Align(fty_->isDoubleTy() ? 8 : 4); }
  /// Memory type of a buffer element: index buffers hold int32_t.
  llvm::Type *memTypeOf(int buffer) {
    return m_.buffers.at(buffer).elem == Type::I ? b_.getInt32Ty() : fty_;
  }
  llvm::Value *compare(const ir::Inst &in);
  llvm::Value *tanh(llvm::Value *x);
  llvm::Value *inlineTanh(llvm::Value *x);
  void lowerBlock(const ir::Block &blk);
  void lowerInst(const ir::Inst &in);
  llvm::Value *load(const ir::Inst &in);
  void store(const ir::Inst &in);
  void accumulate(const ir::Inst &in);
  llvm::Value *addGuarded(llvm::Value *old, llvm::Value *x);
  void declareLocal(const ir::Inst &in);
  void updateLocal(const ir::Inst &in);
  void lowerLoop(const ir::Inst &in);
  void lowerJammed(const ir::Inst &in, size_t inner, int rows);
  /// A loop over [start, end) (start null: 0) by `step` over a set's
  /// elements; body(i) emits one iteration.
  template <class Body>
  void countedLoop(int set, llvm::Value *start, llvm::Value *end, int64_t step, Body &&body);
  void define(const ir::Inst &in, llvm::Value *v) { bind(in.result, v); }
  void bind(ValueId id, llvm::Value *v) {
    if (id >= values_.size())
      values_.resize(id + 1, nullptr);
    values_[id] = v;
  }

  const ir::Module &m_;
  const ir::Kernel &k_;
  int kIndex_;
  llvm::Module &lm_;
  llvm::LLVMContext &ctx_;
  llvm::IRBuilder<> b_;
  bool fastFp_;
  int firstScratch_;
  int lanes_ = 1;             // episodes per call, one per vector lane (1: scalar)
  JamOptions jam_;            // unroll and jam in lanes
  llvm::Type *fty_ = nullptr; // the float element type
  llvm::Type *vty_ = nullptr; // a float value: fty_, or <lanes x fty_>
  llvm::Function *fn_ = nullptr;
  llvm::BasicBlock *allocaBlock_ = nullptr;
  std::vector<llvm::Value *> values_;
  std::map<int, llvm::Value *> bufPtr_;
  std::vector<llvm::Value *> sizes_;
  std::map<ValueId, llvm::AllocaInst *> locals_;
  llvm::Value *time_ = nullptr;
};

void KernelLowering::run() {
  std::vector<bool> usedBufs(m_.buffers.size()), usedSets(m_.sets.size());
  collectUses(k_.body, usedBufs, usedSets);

  llvm::Type *ptrTy = b_.getPtrTy();
  llvm::Type *i64 = b_.getInt64Ty();
  std::vector<llvm::Type *> params;
  std::vector<int> bufOrder;
  for (size_t i = 0; i < usedBufs.size(); ++i)
    if (usedBufs[i]) {
      params.push_back(ptrTy);
      bufOrder.push_back(int(i));
    }
  params.push_back(ptrTy); // sizes
  params.push_back(i64);   // t
  auto *bodyTy = llvm::FunctionType::get(b_.getVoidTy(), params, false);
  fn_ = llvm::Function::Create(bodyTy, llvm::GlobalValue::InternalLinkage, "evoc.body." + k_.name,
                               lm_);
  fn_->addFnAttr(llvm::Attribute::AlwaysInline);
  fn_->addFnAttr(llvm::Attribute::NoUnwind);
  fn_->addFnAttr(llvm::Attribute::MustProgress);
  for (size_t i = 0; i < bufOrder.size(); ++i) {
    llvm::Argument *a = fn_->getArg(unsigned(i));
    a->setName(m_.buffers[bufOrder[i]].name);
    a->addAttr(llvm::Attribute::NoAlias);
    a->addAttr(llvm::Attribute::NoCapture);
    bufPtr_[bufOrder[i]] = a;
  }
  llvm::Argument *sizesArg = fn_->getArg(unsigned(bufOrder.size()));
  sizesArg->setName("sizes");
  sizesArg->addAttr(llvm::Attribute::NoAlias);
  sizesArg->addAttr(llvm::Attribute::NoCapture);
  sizesArg->addAttr(llvm::Attribute::ReadOnly);
  time_ = fn_->getArg(unsigned(bufOrder.size() + 1));
  time_->setName("t");

  allocaBlock_ = llvm::BasicBlock::Create(ctx_, "entry", fn_);
  b_.SetInsertPoint(allocaBlock_);
  // Set sizes are loaded once, at entry: loops bounds are then loop-invariant.
  sizes_.assign(m_.sets.size(), nullptr);
  for (size_t s = 0; s < usedSets.size(); ++s)
    if (usedSets[s])
      sizes_[s] = b_.CreateLoad(i64, b_.CreateConstInBoundsGEP1_64(i64, sizesArg, s),
                                "size." + m_.sets[s].name);
  llvm::BasicBlock *start = llvm::BasicBlock::Create(ctx_, "start", fn_);
  b_.CreateBr(start);
  b_.SetInsertPoint(start);
  lowerBlock(k_.body);
  b_.CreateRetVoid();

  // The exported wrapper with the KernelFn ABI.
  auto *abiTy = llvm::FunctionType::get(b_.getVoidTy(), {ptrTy, ptrTy, i64}, false);
  llvm::Function *abi =
      llvm::Function::Create(abiTy, llvm::GlobalValue::ExternalLinkage, kernelSymbol(kIndex_), lm_);
  abi->addFnAttr(llvm::Attribute::NoUnwind);
  abi->getArg(0)->setName("buffers");
  abi->getArg(1)->setName("sizes");
  abi->getArg(2)->setName("t");
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", abi));
  std::vector<llvm::Value *> args, heap;
  for (int bi : bufOrder) {
    if (bi >= firstScratch_) { // codegen-private scratch over one set
      const ir::Buffer &sb = m_.buffers[bi];
      EVOC_ASSERT(sb.sets.size() == 1 && sb.comps == 1, "scratch buffer over one set");
      llvm::Value *n = b_.CreateLoad(
          i64, b_.CreateConstInBoundsGEP1_64(i64, abi->getArg(1), uint64_t(sb.sets[0])));
      if (lanes_ > 1)
        n = b_.CreateNSWMul(n, b_.getInt64(lanes_));
      // Up to kStackElems elements on the stack, larger sets on the heap (a
      // thread's stack is a few MiB): heap = big ? aligned_alloc : null, free(heap).
      constexpr int64_t kStackElems = 16384;
      llvm::Value *big = b_.CreateICmpSGT(n, b_.getInt64(kStackElems));
      // 64-byte aligned: the loops over scratch are vectorised.
      llvm::AllocaInst *stack = b_.CreateAlloca(
          memTypeOf(bi), b_.CreateSelect(big, b_.getInt64(1), n), sb.name + ".stack");
      stack->setAlignment(llvm::Align(64));
      const uint64_t elemBytes = lm_.getDataLayout().getTypeAllocSize(memTypeOf(bi));
      llvm::FunctionCallee mallocFn = lm_.getOrInsertFunction("aligned_alloc", ptrTy, i64, i64);
      llvm::BasicBlock *pre = b_.GetInsertBlock();
      llvm::BasicBlock *alloc = llvm::BasicBlock::Create(ctx_, sb.name + ".heap", abi);
      llvm::BasicBlock *join = llvm::BasicBlock::Create(ctx_, sb.name + ".ready", abi);
      b_.CreateCondBr(big, alloc, join);
      b_.SetInsertPoint(alloc);
      llvm::Value *bytes =
          b_.CreateAnd(b_.CreateAdd(b_.CreateMul(n, b_.getInt64(elemBytes)), b_.getInt64(63)),
                       b_.getInt64(~int64_t(63))); // a multiple of 64
      llvm::Value *mem = b_.CreateCall(mallocFn, {b_.getInt64(64), bytes});
      b_.CreateBr(join);
      b_.SetInsertPoint(join);
      llvm::PHINode *h = b_.CreatePHI(ptrTy, 2);
      h->addIncoming(llvm::ConstantPointerNull::get(b_.getPtrTy()), pre);
      h->addIncoming(mem, alloc);
      heap.push_back(h);
      args.push_back(b_.CreateSelect(big, h, stack));
      continue;
    }
    args.push_back(b_.CreateLoad(ptrTy, b_.CreateConstInBoundsGEP1_64(ptrTy, abi->getArg(0), bi),
                                 m_.buffers[bi].name));
  }
  args.push_back(abi->getArg(1));
  args.push_back(abi->getArg(2));
  b_.CreateCall(fn_, args);
  if (!heap.empty()) {
    llvm::FunctionCallee freeFn = lm_.getOrInsertFunction("free", b_.getVoidTy(), ptrTy);
    for (llvm::Value *h : heap)
      b_.CreateCall(freeFn, {h}); // free(null) does nothing
  }
  b_.CreateRetVoid();
}

void KernelLowering::lowerBlock(const ir::Block &blk) {
  for (const auto &in : blk.insts)
    lowerInst(*in);
}

llvm::Value *KernelLowering::compare(const ir::Inst &in) {
  // The predicate of each comparison: ordered for floats (false on NaN)
  // except !=, which C++ makes true on NaN; signed for indices.
  using P = llvm::CmpInst::Predicate;
  static constexpr struct {
    Op op;
    P f, i;
  } kPredicates[] = {
      {Op::Lt, P::FCMP_OLT, P::ICMP_SLT}, {Op::Le, P::FCMP_OLE, P::ICMP_SLE},
      {Op::Gt, P::FCMP_OGT, P::ICMP_SGT}, {Op::Ge, P::FCMP_OGE, P::ICMP_SGE},
      {Op::Eq, P::FCMP_OEQ, P::ICMP_EQ},  {Op::Ne, P::FCMP_UNE, P::ICMP_NE},
  };
  llvm::Value *a = val(in.args[0]), *c = val(in.args[1]);
  const bool fp = valType(in.args[0]) == Type::F;
  for (const auto &p : kPredicates)
    if (p.op == in.op)
      return b_.CreateCmp(fp ? p.f : p.i, a, c);
  internalError(__FILE__, __LINE__, "not a comparison");
}

llvm::Value *KernelLowering::tanh(llvm::Value *x) {
  if (x->getType()->isVectorTy()) { // libm lane by lane: the scalar kernel's values
    llvm::Value *r = llvm::PoisonValue::get(x->getType());
    for (int l = 0; l < lanes_; ++l)
      r = b_.CreateInsertElement(r, tanh(b_.CreateExtractElement(x, uint64_t(l))), uint64_t(l));
    return r;
  }
  // LLVM 19 has no llvm.tanh intrinsic: call libm, as the interpreter does.
  const char *name = fty_->isDoubleTy() ? "tanh" : "tanhf";
  llvm::FunctionCallee f = lm_.getOrInsertFunction(name, fty_, fty_);
  if (auto *decl = llvm::dyn_cast<llvm::Function>(f.getCallee())) {
    decl->setDoesNotThrow();
    decl->setDoesNotAccessMemory(); // tanh never sets errno
    decl->setWillReturn();
  }
  llvm::CallInst *c = b_.CreateCall(f, {x});
  c->setDoesNotAccessMemory();
  c->setDoesNotThrow();
  return c;
}

// tanh without a call, so loops over units and springs vectorise (fastFp
// only; strict mode calls libm). Both branches are computed and selected:
//   |x| < 0.625: x + x z P(z) / Q(z), z = x^2 (Cephes' rational, < 3e-16 rel.)
//   otherwise:   sign(x) (1 - 2 / (e^{2|x|} + 1)), with e^y for y <= 40 as
//                2^n e^r, r = y - n ln2 in [-ln2/2, ln2/2], e^r by Taylor to r^13.
// Agrees with glibc's tanh to about 4e-16 relative (checked by
// tests/compiler/codegen/cpu/MathTest.cpp).
llvm::Value *KernelLowering::inlineTanh(llvm::Value *x) {
  auto C = [&](double v) { return llvm::ConstantFP::get(x->getType(), v); };
  const bool f64 = fty_->isDoubleTy();
  llvm::Value *ax = unaryIntrinsic(llvm::Intrinsic::fabs, x);
  // Small |x|: rational approximation.
  llvm::Value *z = b_.CreateFMul(x, x);
  llvm::Value *p =
      b_.CreateFAdd(b_.CreateFMul(C(-9.64399179425052238628e-1), z), C(-9.92877231001918586564e1));
  p = b_.CreateFAdd(b_.CreateFMul(p, z), C(-1.61468768441708447952e3));
  llvm::Value *q = b_.CreateFAdd(z, C(1.12811678491632931402e2));
  q = b_.CreateFAdd(b_.CreateFMul(q, z), C(2.23548839060100448583e3));
  q = b_.CreateFAdd(b_.CreateFMul(q, z), C(4.84406305325125486048e3));
  llvm::Value *small = b_.CreateFAdd(x, b_.CreateFMul(b_.CreateFMul(x, z), b_.CreateFDiv(p, q)));
  // Large |x|: e^{2|x|} with y clamped (tanh is 1 to the last bit beyond 20).
  llvm::Value *y = irMin(b_.CreateFMul(ax, C(2.0)), C(40.0));
  llvm::Value *n =
      b_.CreateUnaryIntrinsic(llvm::Intrinsic::rint, b_.CreateFMul(y, C(1.4426950408889634074)));
  llvm::Value *r = b_.CreateFSub(y, b_.CreateFMul(n, C(6.93147180369123816490e-01)));
  r = b_.CreateFSub(r, b_.CreateFMul(n, C(1.90821492927058770002e-10)));
  llvm::Value *e = C(1.0 / 6227020800.0); // 1/13!
  double fact = 6227020800.0;
  for (int k = 12; k >= 0; --k) {
    fact /= (k + 1);
    e = b_.CreateFAdd(b_.CreateFMul(e, r), C(1.0 / fact));
  }
  llvm::Type *ity = f64 ? b_.getInt64Ty() : b_.getInt32Ty();
  if (x->getType()->isVectorTy())
    ity = llvm::FixedVectorType::get(ity, unsigned(lanes_));
  const int mant = f64 ? 52 : 23, bias = f64 ? 1023 : 127;
  llvm::Value *bits =
      b_.CreateShl(b_.CreateAdd(b_.CreateFPToSI(n, ity), llvm::ConstantInt::get(ity, bias)), mant);
  llvm::Value *s = b_.CreateFMul(e, b_.CreateBitCast(bits, x->getType())); // e^y
  llvm::Value *big = b_.CreateFSub(C(1.0), b_.CreateFDiv(C(2.0), b_.CreateFAdd(s, C(1.0))));
  // NaN: |x| < 0.625 is false and e^NaN is NaN, so NaN propagates. The sign
  // is x's (tanh is odd; this also keeps tanh(-0) = -0).
  llvm::Value *t = b_.CreateSelect(b_.CreateFCmpOLT(ax, C(0.625)), small, big);
  return b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, t, x);
}

void KernelLowering::lowerInst(const ir::Inst &in) {
  auto arg = [&](int i) { return val(in.args.at(i)); };
  switch (in.op) {
  case Op::ConstF:
    define(in, constF(in.f));
    return;
  case Op::ConstI:
    define(in, b_.getInt64(in.i));
    return;
  case Op::ConstB:
    define(in, b_.getInt1(in.i != 0));
    return;
  case Op::Time:
    define(in, time_);
    return;
  case Op::Size:
    EVOC_ASSERT(in.set >= 0 && sizes_[in.set], "LLVM lowering: size of unknown set");
    define(in, sizes_[in.set]);
    return;
  case Op::Add:
    define(in, b_.CreateFAdd(arg(0), arg(1)));
    return;
  case Op::Sub:
    define(in, b_.CreateFSub(arg(0), arg(1)));
    return;
  case Op::Mul:
    define(in, b_.CreateFMul(arg(0), arg(1)));
    return;
  case Op::Div:
    define(in, b_.CreateFDiv(arg(0), arg(1)));
    return;
  case Op::Neg:
    define(in, b_.CreateFNeg(arg(0)));
    return;
  case Op::Min:
    define(in, irMin(arg(0), arg(1)));
    return;
  case Op::Max:
    define(in, irMax(arg(0), arg(1)));
    return;
  case Op::Pow:
    define(in, b_.CreateBinaryIntrinsic(llvm::Intrinsic::pow, arg(0), arg(1)));
    return;
  case Op::Sin:
    define(in, unaryIntrinsic(llvm::Intrinsic::sin, arg(0)));
    return;
  case Op::Cos:
    define(in, unaryIntrinsic(llvm::Intrinsic::cos, arg(0)));
    return;
  case Op::Tanh:
    define(in, fastFp_ ? inlineTanh(arg(0)) : tanh(arg(0)));
    return;
  case Op::Exp:
    define(in, unaryIntrinsic(llvm::Intrinsic::exp, arg(0)));
    return;
  case Op::Log:
    define(in, unaryIntrinsic(llvm::Intrinsic::log, arg(0)));
    return;
  case Op::Sqrt:
    define(in, unaryIntrinsic(llvm::Intrinsic::sqrt, arg(0)));
    return;
  case Op::Abs:
    define(in, unaryIntrinsic(llvm::Intrinsic::fabs, arg(0)));
    return;
  case Op::Floor:
    define(in, unaryIntrinsic(llvm::Intrinsic::floor, arg(0)));
    return;
  case Op::Select: {
    llvm::Value *c = arg(0), *x = arg(1), *y = arg(2);
    if (c->getType()->isVectorTy() && !x->getType()->isVectorTy())
      notInLanes("an index chosen by a per-episode condition");
    define(in, b_.CreateSelect(c, x, y));
    return;
  }
  case Op::Lt:
  case Op::Le:
  case Op::Gt:
  case Op::Ge:
  case Op::Eq:
  case Op::Ne:
    define(in, compare(in));
    return;
  case Op::And:
  case Op::Or: { // a condition on indices is uniform, one on floats per lane
    llvm::Value *x = arg(0), *y = arg(1);
    if (x->getType()->isVectorTy() != y->getType()->isVectorTy())
      x = spread(x), y = spread(y);
    define(in, in.op == Op::And ? b_.CreateAnd(x, y) : b_.CreateOr(x, y));
    return;
  }
  case Op::Not:
    define(in, b_.CreateNot(arg(0)));
    return;
  // Indices never overflow i64: nsw lets SCEV see affine accesses (i*2+c).
  case Op::IAdd:
    define(in, b_.CreateNSWAdd(arg(0), arg(1)));
    return;
  case Op::ISub:
    define(in, b_.CreateNSWSub(arg(0), arg(1)));
    return;
  case Op::IMul:
    define(in, b_.CreateNSWMul(arg(0), arg(1)));
    return;
  case Op::IToF:
    define(in, spread(b_.CreateSIToFP(arg(0), fty_)));
    return;
  case Op::FToI: // saturating, NaN -> 0 (the IR's definition), then widened
    define(in, ftoi(arg(0)));
    return;
  case Op::Load:
    define(in, load(in));
    return;
  case Op::Store:
    store(in);
    return;
  case Op::AccAdd:
    accumulate(in);
    return;
  case Op::Local:
    declareLocal(in);
    return;
  case Op::LocalAdd:
  case Op::LocalMax:
  case Op::LocalMin:
    updateLocal(in);
    return;
  case Op::LocalGet: {
    auto it = locals_.find(in.args.at(0));
    EVOC_ASSERT(it != locals_.end(), "LLVM lowering: read of an undeclared local");
    define(in, b_.CreateLoad(vty_, it->second));
    return;
  }
  case Op::Loop:
    lowerLoop(in);
    return;
  }
  internalError(__FILE__, __LINE__,
                std::string("LLVM lowering: unhandled op ") + ir::opName(in.op));
}

llvm::Value *KernelLowering::load(const ir::Inst &in) {
  llvm::Type *et = memTypeOf(in.buffer);
  if (lanes_ > 1 && episodic(in.buffer)) {
    if (et->isIntegerTy())
      notInLanes("it reads indices from '" + m_.buffers[in.buffer].name + "', one per episode");
    return b_.CreateAlignedLoad(vty_, elemPtr(in, val(in.args.at(0))), elemAlign());
  }
  llvm::Value *v = b_.CreateLoad(et, elemPtr(in, val(in.args.at(0))));
  return et->isIntegerTy() ? b_.CreateSExt(v, b_.getInt64Ty()) : spread(v);
}

void KernelLowering::store(const ir::Inst &in) {
  llvm::Type *et = memTypeOf(in.buffer);
  llvm::Value *x = val(in.args.at(1));
  if (lanes_ > 1) {
    if (!episodic(in.buffer) || et->isIntegerTy())
      notInLanes("it writes '" + m_.buffers[in.buffer].name + "', which the episodes share");
    b_.CreateAlignedStore(x, elemPtr(in, val(in.args.at(0))), elemAlign());
    return;
  }
  // Not inline in CreateStore's arguments: their order is unspecified, and
  // the printed IR should not depend on the compiler that built evoc.
  llvm::Value *v = et->isIntegerTy() ? b_.CreateTrunc(x, et) : x;
  b_.CreateStore(v, elemPtr(in, val(in.args.at(0))));
}

void KernelLowering::accumulate(const ir::Inst &in) {
  llvm::Type *et = memTypeOf(in.buffer);
  llvm::Value *p = elemPtr(in, val(in.args.at(0)));
  if (lanes_ > 1) {
    if (!episodic(in.buffer) || et->isIntegerTy())
      notInLanes("it adds to '" + m_.buffers[in.buffer].name + "', which the episodes share");
    llvm::Value *old = b_.CreateAlignedLoad(vty_, p, elemAlign());
    b_.CreateAlignedStore(addGuarded(old, val(in.args.at(1))), p, elemAlign());
    return;
  }
  llvm::Value *old = b_.CreateLoad(et, p);
  llvm::Value *x = val(in.args.at(1));
  b_.CreateStore(
      et->isIntegerTy() ? b_.CreateAdd(old, b_.CreateTrunc(x, et)) : b_.CreateFAdd(old, x), p);
}

// old + x, where an adjoint's guarded partial x = select(c, 0, y) (an
// untaken branch adds nothing) is, in fast mode, select(c, old, old + y):
// the same but for the sign of a zero sum, and old + y contracts into an
// FMA, which AVX-512 masks by c (one instruction per vector in place of a
// multiply, a blend and an add).
llvm::Value *KernelLowering::addGuarded(llvm::Value *old, llvm::Value *x) {
  namespace pm = llvm::PatternMatch;
  llvm::Value *c = nullptr, *y = nullptr;
  if (fastFp_) {
    if (pm::match(x, pm::m_Select(pm::m_Value(c), pm::m_AnyZeroFP(), pm::m_Value(y))))
      return b_.CreateSelect(b_.CreateNot(c), b_.CreateFAdd(old, y), old);
    if (pm::match(x, pm::m_Select(pm::m_Value(c), pm::m_Value(y), pm::m_AnyZeroFP())))
      return b_.CreateSelect(c, b_.CreateFAdd(old, y), old);
  }
  return b_.CreateFAdd(old, x);
}

void KernelLowering::declareLocal(const ir::Inst &in) {
  llvm::IRBuilder<> ab(allocaBlock_, allocaBlock_->begin());
  llvm::AllocaInst *slot = ab.CreateAlloca(vty_, nullptr, "local");
  locals_[in.result] = slot;
  b_.CreateStore(constF(in.f), slot); // (re)initialised here
}

void KernelLowering::updateLocal(const ir::Inst &in) {
  auto it = locals_.find(in.args.at(0));
  EVOC_ASSERT(it != locals_.end(), "LLVM lowering: update of an undeclared local");
  llvm::Value *old = b_.CreateLoad(vty_, it->second);
  llvm::Value *x = val(in.args.at(1));
  llvm::Value *nv = in.op == Op::LocalAdd   ? b_.CreateFAdd(old, x)
                    : in.op == Op::LocalMax ? irMax(old, x)
                                            : irMin(old, x);
  if (fastFp_ && in.op == Op::LocalAdd) // a sum may be reassociated: vector reduction
    if (auto *inst = llvm::dyn_cast<llvm::Instruction>(nv))
      inst->setHasAllowReassoc(true);
  b_.CreateStore(nv, it->second);
}

template <class Body>
void KernelLowering::countedLoop(int set, llvm::Value *start, llvm::Value *end, int64_t step,
                                 Body &&body) {
  const std::string &name = m_.sets[set].name;
  llvm::BasicBlock *pre = b_.GetInsertBlock();
  llvm::BasicBlock *bb = llvm::BasicBlock::Create(ctx_, "loop." + name, fn_);
  llvm::BasicBlock *exit = llvm::BasicBlock::Create(ctx_, "after." + name, fn_);
  // Guarded bottom-tested loop: the rotated form LoopVectorize expects.
  b_.CreateCondBr(start ? b_.CreateICmpSLT(start, end) : b_.CreateICmpSGT(end, b_.getInt64(0)), bb,
                  exit);
  b_.SetInsertPoint(bb);
  llvm::PHINode *i = b_.CreatePHI(b_.getInt64Ty(), 2, name + ".i");
  i->addIncoming(start ? start : b_.getInt64(0), pre);
  body(i);
  llvm::Value *next =
      b_.CreateAdd(i, b_.getInt64(step), name + ".next", /*NUW=*/true, /*NSW=*/true);
  llvm::BranchInst *br = b_.CreateCondBr(b_.CreateICmpSLT(next, end), bb, exit);
  i->addIncoming(next, b_.GetInsertBlock());
  // Loop metadata: a distinct self-referencing node, plus mustprogress.
  llvm::MDNode *progress =
      llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.mustprogress")});
  llvm::MDNode *loopId = llvm::MDNode::getDistinct(ctx_, {nullptr, progress});
  loopId->replaceOperandWith(0, loopId);
  br->setMetadata(llvm::LLVMContext::MD_loop, loopId);
  b_.SetInsertPoint(exit);
}

void KernelLowering::lowerLoop(const ir::Inst &in) {
  EVOC_ASSERT(in.body && in.set >= 0 && sizes_[in.set], "LLVM lowering: malformed loop");
  if (jam_.rows != 1)
    if (std::optional<size_t> inner = jammableInner(in)) {
      const int elemBytes = fty_->isDoubleTy() ? 8 : 4;
      const int rows =
          jam_.rows > 1 ? jam_.rows : jamRows(in, *inner, lanes_, elemBytes, jam_.regs);
      if (rows > 1) {
        lowerJammed(in, *inner, rows);
        return;
      }
    }
  countedLoop(in.set, nullptr, sizes_[in.set], 1, [&](llvm::Value *i) {
    bind(in.body->arg, i);
    lowerBlock(*in.body);
  });
}

// Unroll and jam (UnrollAndJam.h): rows u0 .. u0+B-1 of `for u: { prefix;
// for i: inner; suffix }` as B prefixes, one inner loop running the B rows'
// inner bodies for each i, and B suffixes; the rows left over (size mod B)
// run one at a time after. Each copy has its own values and locals. In
// lanes, an inner `x.adj[i] += ...` of B rows then becomes one load, B adds
// and one store (LLVM forwards the stores in between), and B rows of a
// matrix-vector product read each x[i] once, in B independent chains.
void KernelLowering::lowerJammed(const ir::Inst &in, size_t k, int rows) {
  const ir::Block &body = *in.body;
  const ir::Inst &inner = *body.insts[k];
  EVOC_ASSERT(inner.set >= 0 && sizes_[inner.set], "LLVM lowering: malformed loop");
  llvm::Value *n = sizes_[in.set];
  llvm::Value *whole = b_.CreateNSWMul(b_.CreateSDiv(n, b_.getInt64(rows)), b_.getInt64(rows));
  countedLoop(in.set, nullptr, whole, rows, [&](llvm::Value *u0) {
    struct Copy {
      std::vector<llvm::Value *> values;
      std::map<ValueId, llvm::AllocaInst *> locals;
    };
    std::vector<Copy> copies(static_cast<size_t>(rows));
    auto enter = [&](int r) {
      values_ = copies[size_t(r)].values;
      locals_ = copies[size_t(r)].locals;
    };
    auto leave = [&](int r) {
      copies[size_t(r)].values = values_;
      copies[size_t(r)].locals = locals_;
    };
    for (int r = 0; r < rows; ++r) {
      if (r > 0)
        enter(r - 1);
      bind(body.arg, r == 0 ? u0 : b_.CreateNSWAdd(u0, b_.getInt64(r)));
      for (size_t j = 0; j < k; ++j)
        lowerInst(*body.insts[j]);
      leave(r);
    }
    countedLoop(inner.set, nullptr, sizes_[inner.set], 1, [&](llvm::Value *i) {
      for (int r = 0; r < rows; ++r) {
        enter(r);
        bind(inner.body->arg, i);
        lowerBlock(*inner.body);
        leave(r);
      }
    });
    for (int r = 0; r < rows; ++r) {
      enter(r);
      for (size_t j = k + 1; j < body.insts.size(); ++j)
        lowerInst(*body.insts[j]);
      leave(r);
    }
  });
  countedLoop(in.set, whole, n, 1, [&](llvm::Value *u) {
    bind(body.arg, u);
    lowerBlock(body);
  });
}

} // namespace

std::unique_ptr<llvm::Module> lowerToLLVM(const ir::Module &m, llvm::LLVMContext &ctx,
                                          const llvm::DataLayout &dl, const std::string &triple,
                                          bool fastFp, int firstScratch, int lanes,
                                          const JamOptions &jam) {
  auto lm = std::make_unique<llvm::Module>("evoc." + m.name, ctx);
  lm->setDataLayout(dl);
  lm->setTargetTriple(triple);
  for (size_t k = 0; k < m.kernels.size(); ++k)
    if (loweredInLanes(m.kernels[k], lanes))
      KernelLowering(m, int(k), *lm, fastFp, firstScratch, lanes, jam).run();
  std::string err;
  llvm::raw_string_ostream os(err);
  if (llvm::verifyModule(*lm, &os))
    internalError(__FILE__, __LINE__,
                  "LLVM IR of module '" + m.name + "' does not verify:\n" + os.str());
  return lm;
}

} // namespace evoc::codegen::cpu
