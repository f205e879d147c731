! Uses the installed Fortran module xgemv (libxgemv_fortran.a on libxgemv.so): an argument error
! comes back as a status carrying the BLAS argument position, before any device work.
program fortran_consumer
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_null_ptr, c_ptr
  use xgemv
  implicit none
  type(c_ptr) :: none
  integer(c_int) :: status

  none = c_null_ptr
  ! lda = 3 < m = 4
  status = xgemv_sgemv(none, 'N', 4_c_int64_t, 4_c_int64_t, none, none, 3_c_int64_t, none, &
                       1_c_int64_t, none, none, 1_c_int64_t)
  if (xgemv_status_argument(status) /= 6) then
    print '(2a)', 'lda < m gave ', xgemv_status_message(status)
    error stop 1
  end if
  print '(2a)', 'installed xgemv Fortran module works: ', xgemv_status_message(status)
end program fortran_consumer
