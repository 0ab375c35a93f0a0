// ir::writesWholeFirst: which scratch buffers a kernel stores whole before
// it reads them (the rollout contract's zero lists are built on it).
#include <catch2/catch.hpp>

#include <string>

#include "ir/Parser.h"
#include "ir/WholeWrites.h"

using namespace evoc::ir;

namespace {

// One kernel; each buffer is written (and read) in its own way.
const char *const kModule = R"(module whole precision=f64
set point body
set input base=3 terms=point*2
set unit base=4
buffer a elem=f role=temp sets=point
buffer v elem=f role=temp sets=point comps=2
buffer half elem=f role=temp sets=point comps=2
buffer in elem=f role=temp sets=input
buffer gap elem=f role=temp sets=input
buffer acc elem=f role=temp sets=point
buffer early elem=f role=temp sets=unit
buffer own elem=f role=temp sets=unit
buffer other elem=f role=temp sets=unit
buffer nested elem=f role=temp sets=unit
buffer scalar elem=f role=temp
buffer inloop elem=f role=temp
buffer mat elem=f role=temp sets=unit,point
buffer late elem=f role=temp sets=point
buffer idx elem=i role=body sets=point
buffer gathered elem=f role=temp sets=point
kernel k kind=step {
  %1 = constf 1
  %2 = consti 0
  %3 = consti 1
  %4 = consti 2
  %5 = size point
  store scalar[%2], %1
  %6 = load early[%2]
  store in[%2], %1
  store gap[%2], %1
  loop point %10 {
    store a[%10], %1
    %11 = imul %10, %4
    store v[%11], %1
    %12 = iadd %11, %3
    store v[%12], %1
    store half[%11], %1
    store in[%12], %1
    %13 = iadd %12, %3
    store in[%13], %1
    store gap[%12], %1
    store gap[%13], %1
    accadd acc[%10], %1
    store inloop[%2], %1
    %15 = load late[%10]
    store late[%10], %1
    %14 = load idx[%10]
    store gathered[%14], %1
  }
  %20 = imul %5, %4
  %21 = iadd %20, %3
  store in[%21], %1
  store gap[%21], %1
  %22 = iadd %21, %3
  store in[%22], %1
  loop unit %30 {
    store early[%30], %1
    store own[%30], %1
    %31 = load own[%30]
    store other[%30], %1
    %32 = load other[%2]
    loop point %33 {
      store nested[%30], %1
      %34 = imul %30, %5
      %35 = iadd %34, %33
      store mat[%35], %1
    }
  }
  %40 = load a[%2]
  %41 = load in[%2]
  %42 = load gathered[%2]
}
)";

} // namespace

TEST_CASE("writesWholeFirst: stores that tile a buffer before it is read", "[ir][whole]") {
  const Module m = parse(kModule);
  const Kernel &k = m.kernels.at(0);
  auto whole = [&](const std::string &name) {
    const int b = m.findBuffer(name);
    REQUIRE(b >= 0);
    return writesWholeFirst(m, k, b);
  };
  // Whole: every element, before any read.
  CHECK(whole("a"));      // b[e] over its own set
  CHECK(whole("v"));      // b[2e], b[2e + 1]: both components
  CHECK(whole("in"));     // [0, 1) + [1, 1 + 2N) + [1 + 2N, 2 + 2N) + [2 + 2N, 3 + 2N)
  CHECK(whole("scalar")); // one element, stored at the top
  CHECK(whole("own"));    // read in the loop, but only the element just stored
  // Not whole, or not provably so.
  CHECK_FALSE(whole("early"));    // read at the top before the loop that stores it
  CHECK_FALSE(whole("half"));     // only the first component
  CHECK_FALSE(whole("gap"));      // the last of the 3 + 2N entries is missing
  CHECK_FALSE(whole("acc"));      // accadd reads what it adds to
  CHECK_FALSE(whole("other"));    // reads another element than the one it stored
  CHECK_FALSE(whole("nested"));   // stored in a nested loop, which may run no iteration
  CHECK_FALSE(whole("inloop"));   // one index, in a loop over a set that may be empty
  CHECK_FALSE(whole("mat"));      // over two sets: not analysed
  CHECK_FALSE(whole("late"));     // its element read in the loop before it is stored
  CHECK_FALSE(whole("gathered")); // at indices loaded from memory
  CHECK_FALSE(writesWholeFirst(m, k, -1));
  CHECK_FALSE(writesWholeFirst(m, k, int(m.buffers.size())));
}
