/* Loads a library with RTLD_LOCAL, as Python loads PyTorch's extension modules, and runs its
 * checks: usage: dlopen_local_host <library> <function> [argument]. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc < 3) {
    printf("usage: %s <library> <function> [argument]\n", argv[0]);
    return 2;
  }
  void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    printf("FAIL: %s\n", dlerror());
    return 1;
  }
  int (*run)(const char *) = (int (*)(const char *))dlsym(library, argv[2]);
  if (run == NULL) {
    printf("FAIL: %s\n", dlerror());
    return 1;
  }
  return run(argc > 3 ? argv[3] : NULL);
}
