// The weight gradients' window products, generated: C[s, u] += the sum over
// k = n - 1 down to 0 of R[k * ld + s] * X[k * ld + u], with C row-major
// S x U. Blocks of MR rows of C by NV vectors of its columns stay in
// registers across the window's steps, so each gradient element is read
// and written once per window; the last column block is masked. In lanes
// (L episodes interleaved) an element is a vector of its L lanes, and a
// block is MR rows by NU columns of such vectors.
#include "codegen/cpu/WindowProduct.h"

#include "codegen/cpu/Optimize.h"

#include <algorithm>
#include <vector>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

namespace evoc::codegen::cpu {

std::string windowProductSymbol() { return "evoc_window_product"; }

namespace {

/// The register block: MR rows by NV vectors of VL lanes. In lanes (L
/// episodes, `lanes` > 1): MR rows by NU columns, each element a vector of
/// its L lanes.
struct Blocking {
  int vl = 2, mr = 4, nv = 2;
  int lanes = 1, nu = 1;
};

Blocking blockingFor(const std::string &features, bool f32, int lanes) {
  const int bits = hasFeature(features, "avx512f") ? 512 : hasFeature(features, "avx") ? 256 : 128;
  Blocking b;
  b.vl = bits / (f32 ? 32 : 64);
  // MR x NV accumulators, NV loads and one broadcast: 21 of AVX-512's 32
  // registers, 11 of AVX's and SSE's 16.
  b.nv = bits == 512 ? 4 : 2;
  b.lanes = lanes;
  if (lanes > 1) {
    // A lanes vector takes P registers; MR x NU accumulators, MR rows and
    // NU columns loaded per step: the largest block that fits in the
    // registers less two (AVX-512: 3 x 3 of 16 doubles; AVX2: 1 x 1).
    // (Groups of 8 lanes, one register each and a 4 x 5 block, measured
    // slower on the multi-task Alpaca: 1.0-1.2 against 0.7 us a robot-step.)
    const int P = (lanes + b.vl - 1) / b.vl, regs = (bits == 512 ? 32 : 16) - 2;
    b.mr = b.nu = 1;
    for (int mr = 1; mr <= 4; ++mr)
      for (int nu = 1; nu <= 8; ++nu)
        if (P * (mr * nu + mr + nu) <= regs && mr * nu > b.mr * b.nu)
          b.mr = mr, b.nu = nu;
  }
  return b;
}

class ProductBuilder {
public:
  ProductBuilder(llvm::Module &lm, bool f32, bool fast, Blocking blk)
      : ctx_(lm.getContext()), b_(ctx_), fast_(fast), blk_(blk) {
    elem_ = f32 ? b_.getFloatTy() : b_.getDoubleTy();
    vec_ = llvm::FixedVectorType::get(elem_, unsigned(blk.vl));
    laneVec_ = llvm::FixedVectorType::get(elem_, unsigned(blk.lanes));
    llvm::Type *ptr = b_.getPtrTy(), *i64 = b_.getInt64Ty();
    auto *fty = llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr, ptr, i64, i64, i64, i64}, false);
    fn_ = llvm::Function::Create(fty, llvm::Function::ExternalLinkage, windowProductSymbol(), lm);
    fn_->addFnAttr(llvm::Attribute::NoUnwind);
    for (unsigned a = 0; a < 3; ++a)
      fn_->addParamAttr(a, llvm::Attribute::NoAlias);
    auto arg = [&](unsigned i, const char *name) {
      llvm::Value *v = fn_->getArg(i);
      v->setName(name);
      return v;
    };
    C_ = arg(0, "grad");
    R_ = arg(1, "rows");
    X_ = arg(2, "x");
    S_ = arg(3, "S");
    U_ = arg(4, "U");
    N_ = arg(5, "n");
    LD_ = arg(6, "ld");
  }

  void build() {
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn_));
    const bool lanes = blk_.lanes > 1;
    llvm::Type *accTy = lanes ? laneVec_ : vec_;
    for (int i = 0; i < blk_.mr * (lanes ? blk_.nu : blk_.nv); ++i)
      acc_.push_back(b_.CreateAlloca(accTy, nullptr, "acc"));
    // Whole blocks of MR rows, then the rows left one at a time.
    const int mr = blk_.mr;
    llvm::Value *whole = b_.CreateSub(S_, b_.CreateSRem(S_, i64(mr)), "S.whole");
    auto rows = [&](llvm::Value *s0, int n) {
      if (lanes)
        laneRowBlock(s0, n);
      else
        rowBlock(s0, n);
    };
    loop(i64(0), whole, i64(mr), "s", [&](llvm::Value *s0) { rows(s0, mr); });
    loop(whole, S_, i64(1), "s.rest", [&](llvm::Value *s0) { rows(s0, 1); });
    b_.CreateRetVoid();
  }

private:
  llvm::Value *i64(int64_t v) { return b_.getInt64(uint64_t(v)); }

  /// Emits `for (iv = lo; iv < hi; iv += step) body(iv)` at the insertion
  /// point and leaves it after the loop.
  template <class Body>
  void loop(llvm::Value *lo, llvm::Value *hi, llvm::Value *step, const char *name, Body &&body) {
    llvm::BasicBlock *pre = b_.GetInsertBlock();
    auto *head = llvm::BasicBlock::Create(ctx_, std::string(name) + ".head", fn_);
    auto *inner = llvm::BasicBlock::Create(ctx_, std::string(name) + ".body", fn_);
    auto *exit = llvm::BasicBlock::Create(ctx_, std::string(name) + ".exit", fn_);
    b_.CreateBr(head);
    b_.SetInsertPoint(head);
    llvm::PHINode *iv = b_.CreatePHI(b_.getInt64Ty(), 2, name);
    iv->addIncoming(lo, pre);
    b_.CreateCondBr(b_.CreateICmpSLT(iv, hi), inner, exit);
    b_.SetInsertPoint(inner);
    body(static_cast<llvm::Value *>(iv));
    iv->addIncoming(b_.CreateAdd(iv, step), b_.GetInsertBlock());
    b_.CreateBr(head);
    b_.SetInsertPoint(exit);
  }

  llvm::Value *at(llvm::Value *base, llvm::Value *index) {
    return b_.CreateGEP(elem_, base, index);
  }

  /// Rows [s0, s0 + mr) of C, column block by column block.
  void rowBlock(llvm::Value *s0, int mr) {
    const int nv = blk_.nv, vl = blk_.vl;
    const llvm::Align align(elem_->getPrimitiveSizeInBits() / 8);
    loop(i64(0), U_, i64(int64_t(nv) * vl), "u", [&](llvm::Value *u0) {
      // Lane l of vector v is column u0 + v * VL + l, in C when below U.
      std::vector<llvm::Value *> mask, col;
      std::vector<llvm::Constant *> lanes;
      for (int l = 0; l < vl; ++l)
        lanes.push_back(b_.getInt64(uint64_t(l)));
      llvm::Value *laneIds = llvm::ConstantVector::get(lanes);
      llvm::Value *limit = b_.CreateVectorSplat(unsigned(vl), U_);
      for (int v = 0; v < nv; ++v) {
        col.push_back(b_.CreateAdd(u0, i64(int64_t(v) * vl)));
        llvm::Value *ids = b_.CreateAdd(b_.CreateVectorSplat(unsigned(vl), col.back()), laneIds);
        mask.push_back(b_.CreateICmpSLT(ids, limit));
      }
      llvm::Value *zero = llvm::Constant::getNullValue(vec_);
      auto cAt = [&](int i, int v) {
        return at(C_, b_.CreateAdd(b_.CreateMul(b_.CreateAdd(s0, i64(i)), U_), col[size_t(v)]));
      };
      for (int i = 0; i < mr; ++i)
        for (int v = 0; v < nv; ++v)
          b_.CreateStore(b_.CreateMaskedLoad(vec_, cAt(i, v), align, mask[size_t(v)], zero),
                         acc_[size_t(i * nv + v)]);
      loop(i64(0), N_, i64(1), "k", [&](llvm::Value *j) {
        llvm::Value *base = b_.CreateMul(b_.CreateSub(b_.CreateSub(N_, i64(1)), j), LD_);
        std::vector<llvm::Value *> x;
        for (int v = 0; v < nv; ++v)
          x.push_back(b_.CreateMaskedLoad(vec_, at(X_, b_.CreateAdd(base, col[size_t(v)])), align,
                                          mask[size_t(v)], zero));
        for (int i = 0; i < mr; ++i) {
          llvm::Value *r =
              b_.CreateLoad(elem_, at(R_, b_.CreateAdd(base, b_.CreateAdd(s0, i64(i)))));
          llvm::Value *rv = b_.CreateVectorSplat(unsigned(vl), r);
          llvm::Value *rZero = nullptr;
          if (!fast_) // step.adj's guard: a zero row adds 0 even to an infinite input
            rZero = b_.CreateFCmpOEQ(rv, zero);
          for (int v = 0; v < nv; ++v) {
            llvm::AllocaInst *slot = acc_[size_t(i * nv + v)];
            llvm::Value *a = b_.CreateLoad(vec_, slot);
            if (fast_)
              a = b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {vec_}, {rv, x[size_t(v)], a});
            else
              a = b_.CreateFAdd(a, b_.CreateSelect(rZero, zero, b_.CreateFMul(rv, x[size_t(v)])));
            b_.CreateStore(a, slot);
          }
        }
      });
      for (int i = 0; i < mr; ++i)
        for (int v = 0; v < nv; ++v)
          b_.CreateMaskedStore(b_.CreateLoad(vec_, acc_[size_t(i * nv + v)]), cAt(i, v), align,
                               mask[size_t(v)]);
    });
  }

  /// Lanes: rows [s0, s0 + mr) of C by blocks of NU columns, then the
  /// columns left one at a time.
  void laneRowBlock(llvm::Value *s0, int mr) {
    const int nu = blk_.nu;
    llvm::Value *whole = b_.CreateSub(U_, b_.CreateSRem(U_, i64(nu)), "U.whole");
    loop(i64(0), whole, i64(nu), "u", [&](llvm::Value *u0) { laneBlock(s0, mr, u0, nu); });
    loop(whole, U_, i64(1), "u.rest", [&](llvm::Value *u0) { laneBlock(s0, mr, u0, 1); });
  }

  /// Lanes: the mr x nu elements of C at (s0, u0), each a vector of its L
  /// lanes (element i of lane l at i * L + l), over the window's steps.
  void laneBlock(llvm::Value *s0, int mr, llvm::Value *u0, int nu) {
    const llvm::Align align(elem_->getPrimitiveSizeInBits() / 8);
    const int64_t L = blk_.lanes;
    auto lanesOf = [&](llvm::Value *element) { return b_.CreateMul(element, i64(L)); };
    auto lanesAt = [&](llvm::Value *base, llvm::Value *first, int i) {
      return at(base, lanesOf(b_.CreateAdd(first, i64(i))));
    };
    auto cAt = [&](int i, int j) {
      return at(C_, lanesOf(b_.CreateAdd(b_.CreateMul(b_.CreateAdd(s0, i64(i)), U_),
                                         b_.CreateAdd(u0, i64(j)))));
    };
    for (int i = 0; i < mr; ++i)
      for (int j = 0; j < nu; ++j)
        b_.CreateStore(b_.CreateAlignedLoad(laneVec_, cAt(i, j), align), acc_[size_t(i * nu + j)]);
    llvm::Value *zero = llvm::Constant::getNullValue(laneVec_);
    loop(i64(0), N_, i64(1), "k", [&](llvm::Value *k) {
      llvm::Value *step = b_.CreateMul(b_.CreateSub(b_.CreateSub(N_, i64(1)), k), LD_);
      llvm::Value *R = at(R_, step), *X = at(X_, step);
      std::vector<llvm::Value *> r, x, rZero;
      for (int i = 0; i < mr; ++i) {
        r.push_back(b_.CreateAlignedLoad(laneVec_, lanesAt(R, s0, i), align));
        if (!fast_) // the guard: a zero row's term is 0, even against an infinite input
          rZero.push_back(b_.CreateFCmpOEQ(r.back(), zero));
      }
      for (int j = 0; j < nu; ++j)
        x.push_back(b_.CreateAlignedLoad(laneVec_, lanesAt(X, u0, j), align));
      for (int i = 0; i < mr; ++i)
        for (int j = 0; j < nu; ++j) {
          llvm::AllocaInst *slot = acc_[size_t(i * nu + j)];
          llvm::Value *a = b_.CreateLoad(laneVec_, slot);
          if (fast_)
            a = b_.CreateIntrinsic(llvm::Intrinsic::fmuladd, {laneVec_},
                                   {r[size_t(i)], x[size_t(j)], a});
          else
            a = b_.CreateFAdd(a, b_.CreateSelect(rZero[size_t(i)], zero,
                                                 b_.CreateFMul(r[size_t(i)], x[size_t(j)])));
          b_.CreateStore(a, slot);
        }
    });
    for (int i = 0; i < mr; ++i)
      for (int j = 0; j < nu; ++j)
        b_.CreateAlignedStore(b_.CreateLoad(laneVec_, acc_[size_t(i * nu + j)]), cAt(i, j), align);
  }

  llvm::LLVMContext &ctx_;
  llvm::IRBuilder<> b_;
  bool fast_;
  Blocking blk_;
  llvm::Type *elem_ = nullptr;
  llvm::FixedVectorType *vec_ = nullptr;
  llvm::FixedVectorType *laneVec_ = nullptr; // lanes: one element's L lanes
  llvm::Function *fn_ = nullptr;
  std::vector<llvm::AllocaInst *> acc_; // promoted to registers by the pipeline's SROA
  llvm::Value *C_ = nullptr, *R_ = nullptr, *X_ = nullptr, *S_ = nullptr, *U_ = nullptr,
              *N_ = nullptr, *LD_ = nullptr;
};

} // namespace

void addWindowProduct(llvm::Module &lm, bool f32, bool fastFp, const std::string &features,
                      int lanes) {
  ProductBuilder(lm, f32, fastFp, blockingFor(features, f32, std::max(1, lanes))).build();
}

} // namespace evoc::codegen::cpu
