// The reference window product (Executable::windowProduct): the
// interpreter's arithmetic, so compiled without FMA contraction.
#include "codegen/Executable.h"

namespace evoc::codegen {

namespace {

template <class T>
void product(T *grad, const T *rows, const T *x, int64_t S, int64_t U, int64_t n, int64_t ld,
             int64_t L) {
  for (int64_t s = 0; s < S; ++s)
    for (int64_t u = 0; u < U; ++u)
      for (int64_t l = 0; l < L; ++l) {
        T c = grad[(s * U + u) * L + l];
        for (int64_t k = n - 1; k >= 0; --k) {
          const T r = rows[k * ld + s * L + l];
          c += r == T(0) ? T(0) : r * x[k * ld + u * L + l];
        }
        grad[(s * U + u) * L + l] = c;
      }
}

} // namespace

void Executable::windowProduct(bool f32, void *grad, const void *rows, const void *x, int64_t S,
                               int64_t U, int64_t n, int64_t ld, int lanes) const {
  if (f32)
    product(static_cast<float *>(grad), static_cast<const float *>(rows),
            static_cast<const float *>(x), S, U, n, ld, lanes);
  else
    product(static_cast<double *>(grad), static_cast<const double *>(rows),
            static_cast<const double *>(x), S, U, n, ld, lanes);
}

} // namespace evoc::codegen
