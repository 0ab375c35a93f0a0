// internalError: report a broken invariant and abort.
#include "support/Error.h"

#include <cstdio>
#include <cstdlib>

namespace evoc {

void internalError(const char *file, int line, const std::string &msg) {
  std::fprintf(stderr,
               "evoc: internal error at %s:%d: %s\n"
               "This is a bug in evoc; please report it with the input.\n",
               file, line, msg.c_str());
  std::abort();
}

} // namespace evoc
