/* Links the installed libxgemv_nccl (and, through it, libxgemv and NCCL): the workspace a
 * reduction split needs, and an argument error of the whole problem, found before any
 * communicator is needed (there may be no GPU), as the BLAS argument position. */
#include <xgemv/xgemv_nccl.h>

#include <stdio.h>

int main(void) {
  const float one = 1.0f;
  const size_t bytes =
      xgemv_nccl_workspace_bytes(XGEMV_SPLIT_REDUCTION, XGEMV_RESULT_ALL, 'N', 1000, 64, 2, 2);
  xgemv_status status;

  if (bytes != 12032) { /* (2 + 1) ranks' fp32 partial sums of 1000 outputs, 256-byte rounded */
    fprintf(stderr, "workspace of %zu bytes, not 12032\n", bytes);
    return 1;
  }
  /* Op T, outputs split: every rank's A has all m rows, so lda < m is an lda error. */
  status = xgemv_nccl_sgemv(NULL, NULL, XGEMV_SPLIT_OUTPUTS, XGEMV_RESULT_ALL, NULL, 'T', 4, 4,
                            &one, NULL, 3, NULL, 1, &one, NULL, 1, NULL, 0);
  if (xgemv_status_argument(status) != 6) {
    fprintf(stderr, "lda < m gave %s\n", xgemv_status_string(status));
    return 1;
  }
  printf("installed xgemv_nccl works (%s)\n", xgemv_status_string(XGEMV_STATUS_NCCL_ERROR));
  return 0;
}
