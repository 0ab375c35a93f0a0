// The ORC LLJIT wrapper: links compiled objects into this process.
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace llvm::orc {
class LLJIT;
} // namespace llvm::orc

namespace evoc::codegen::cpu {

/// One LLJIT instance for the host, resolving libm and other process symbols.
/// Objects are added once and their symbols looked up once; the functions
/// returned are plain C functions, safe to call from any number of threads.
class Jit {
public:
  Jit();
  ~Jit();
  Jit(const Jit &) = delete;
  Jit &operator=(const Jit &) = delete;

  /// Links a relocatable object (a copy of `object` is kept).
  void addObject(std::string_view object, const std::string &name);
  /// Address of a function defined by an added object; internal error if absent.
  void *lookup(const std::string &symbol);

private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
};

} // namespace evoc::codegen::cpu
