/* Links the installed libxgemv: the library it loads is the version its header names, and an
 * argument error comes back as the BLAS argument position. */
#include <xgemv/xgemv.h>

#include <stdio.h>
#include <string.h>

int main(void) {
  char header_version[32];
  const float one = 1.0f;
  xgemv_status status;

  snprintf(header_version, sizeof header_version, "%d.%d.%d", XGEMV_VERSION_MAJOR,
           XGEMV_VERSION_MINOR, XGEMV_VERSION_PATCH);
  if (strcmp(xgemv_version_string(), header_version) != 0) {
    fprintf(stderr, "library %s, header %s\n", xgemv_version_string(), header_version);
    return 1;
  }
  status = xgemv_sgemv(NULL, 'N', 4, 4, &one, NULL, 3, NULL, 1, &one, NULL, 1);
  if (xgemv_status_argument(status) != 6) {
    fprintf(stderr, "lda < m gave %s\n", xgemv_status_string(status));
    return 1;
  }
  printf("installed xgemv %s works\n", xgemv_version_string());
  return 0;
}
