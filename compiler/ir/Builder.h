// IRBuilder-style helper for emitting instructions into a kernel's blocks.
#pragma once

#include "ir/IR.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace evoc::ir {

/// Emits instructions into the blocks of one kernel: at the end of its body
/// by default, or before any position of any block (setInsertPoint). Loops
/// are built with beginLoop()/endLoop(), which nest.
class Builder {
public:
  Builder(Module &m, Kernel &k);

  /// From now on, emits into `b` before position `pos` (by default at the
  /// end), the position advancing past each instruction emitted. Open loops
  /// are forgotten: the next endLoop() must follow a beginLoop() made after
  /// this call.
  void setInsertPoint(Block &b, size_t pos = kEnd);
  static constexpr size_t kEnd = ~size_t(0);
  /// Inserts an instruction made elsewhere (a clone, say) as it is, its
  /// result id and location included, at the insertion point.
  Inst &insert(std::unique_ptr<Inst> inst);
  /// A fresh value id of type t (the result of an instruction to insert()).
  ValueId newValue(Type t) { return fresh(t); }

  Module &module() { return m_; }
  Kernel &kernel() { return k_; }
  /// Source location stamped on every instruction emitted from now on.
  void setLoc(SrcLoc loc) { loc_ = loc; }

  ValueId constF(double v);
  ValueId constI(int64_t v);
  ValueId constB(bool v);
  ValueId time();
  ValueId size(int set);
  /// Any op with plain operands and a result (arithmetic, math, compare,
  /// logic, select, int ops, LocalGet).
  ValueId op(Op op, std::vector<ValueId> args);
  ValueId load(int buffer, ValueId index);
  void store(int buffer, ValueId index, ValueId value);
  void accAdd(int buffer, ValueId index, ValueId value);
  /// Declares an accumulator slot initialised to `init`; returns its id.
  ValueId local(double init = 0.0);
  void localUpdate(Op op, ValueId slot, ValueId value); // LocalAdd/Max/Min
  ValueId localGet(ValueId slot);
  /// Opens a loop over `set`; returns the element index value of its body.
  ValueId beginLoop(int set);
  void endLoop();

  /// The instruction this builder emitted for value `v`, or null (a value it
  /// did not emit, a loop's element index, a Local slot).
  const Inst *def(ValueId v) const { return v < defs_.size() ? defs_[v] : nullptr; }
  /// The loops open now, outermost first, each as a serial number unique to
  /// this builder: a value emitted while these were open is visible exactly
  /// while they still are.
  const std::vector<uint64_t> &openLoops() const { return openLoops_; }
  /// Stores and scatter-adds emitted so far (loads may see other values
  /// after one of these).
  uint64_t writes() const { return writes_; }
  /// Instructions emitted so far by this builder.
  uint64_t emitted() const { return emitted_; }

  /// Convenience: Add, Sub, Mul, Div.
  ValueId add(ValueId a, ValueId b) { return op(Op::Add, {a, b}); }
  ValueId sub(ValueId a, ValueId b) { return op(Op::Sub, {a, b}); }
  ValueId mul(ValueId a, ValueId b) { return op(Op::Mul, {a, b}); }
  ValueId div(ValueId a, ValueId b) { return op(Op::Div, {a, b}); }

private:
  Inst &emit(Op op, Type type, std::vector<ValueId> args);
  ValueId fresh(Type t);

  ValueId result(Inst &i, Type t); ///< a fresh value as i's result, recorded in defs_

  /// Where the next instruction goes: before insts[pos], or at the end.
  struct Point {
    Block *block;
    size_t pos;
  };
  Inst &place(std::unique_ptr<Inst> inst);

  Module &m_;
  Kernel &k_;
  std::vector<Point> blocks_;
  std::vector<uint64_t> openLoops_; ///< serials of blocks_[1..]
  uint64_t loopSerial_ = 0;
  std::vector<const Inst *> defs_; ///< by ValueId
  uint64_t writes_ = 0, emitted_ = 0;
  SrcLoc loc_;
};

/// Adds a buffer to the module and returns its index.
int addBuffer(Module &m, Buffer b);
/// Adds a buffer named `name` of `elem` over `sets`, `comps` components each.
int addBuffer(Module &m, std::string name, Role role, std::vector<int> sets, Type elem = Type::F,
              int comps = 1);
/// Adds an empty kernel named `name` and returns it (a reference into
/// m.kernels: valid until the next kernel is added).
Kernel &addKernel(Module &m, std::string name, KernelKind kind = KernelKind::Step);
/// Adds an element set (or returns the existing one of that name).
int addSet(Module &m, const std::string &name);

} // namespace evoc::ir
