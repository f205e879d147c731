// The default error handlers, weak so that a program's own xerbla_ / cblas_xerbla replaces them
// (the dynamic linker binds our calls to the program's definition first in any case; weak also
// lets a static link take the program's). They print what the reference ones print, but return
// instead of ending the process (reference: STOP / exit(-1)), as OpenBLAS's do: a library must
// not end its caller.
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "blas_abi.hpp"

#pragma GCC visibility push(default)
extern "C" {

int RowMajorStrg = 0;
int CBLAS_CallFromC = 0;

__attribute__((weak)) void xerbla_(const char *routine, const int *info,
                                   std::size_t routine_length) {
  std::size_t length = routine_length;  // Fortran LEN_TRIM
  while (length > 0 && routine[length - 1] == ' ') --length;
  std::printf(" ** On entry to %.*s parameter number %2d had an illegal value\n",
              static_cast<int>(length), routine, *info);
  std::fflush(stdout);
}

__attribute__((weak)) void cblas_xerbla(int info, const char *routine, const char *form, ...) {
  // The reference renumbers a row-major call's M and N (the error was found on the column-major
  // call, whose m is N); only the gemv rule is needed here.
  if (RowMajorStrg != 0 && std::strstr(routine, "gemv") != nullptr) {
    if (info == 3) {
      info = 4;
    } else if (info == 4) {
      info = 3;
    }
  }
  if (info != 0) std::fprintf(stderr, "Parameter %d to routine %s was incorrect\n", info, routine);
  va_list values;
  va_start(values, form);
  std::vfprintf(stderr, form, values);
  va_end(values);
}

}  // extern "C"
#pragma GCC visibility pop
