! Error exits of SGEMV and DGEMV through a program-supplied XERBLA, checked the way the reference
! BLAS test programs (sblat2.f / dblat2.f) check them: each exit's routine name and argument
! position, first failure wins, y untouched, valid calls report nothing. Links libxgemv_blas.so
! and the test support (its verdict line) only; runs without a GPU (argument errors are found
! before anything is routed).
module error_record
  implicit none
  character(len=6) :: last_name = ''
  integer :: last_info = 0, calls = 0
end module error_record

! Replaces the library's xerbla_ (the executable's definition comes first).
subroutine xerbla(srname, info)
  use error_record
  implicit none
  character(len=*), intent(in) :: srname
  integer, intent(in) :: info
  calls = calls + 1
  last_name = srname
  last_info = info
end subroutine xerbla

program fortran_xerbla_test
  use error_record
  use interface_test_support, only: report_and_stop
  implicit none
  integer :: failures = 0

  ! The reference test programs' exits: trans, m, n, lda, incx, incy.
  call check('/', 0, 0, 1, 1, 1, 1)
  call check('N', -1, 0, 1, 1, 1, 2)
  call check('N', 0, -1, 1, 1, 1, 3)
  call check('N', 2, 0, 1, 1, 1, 6)
  call check('N', 0, 0, 1, 0, 1, 8)
  call check('N', 0, 0, 1, 1, 0, 11)
  ! First failure wins; checks come before the quick return; lda against m whatever trans is.
  call check('X', -1, -1, 0, 0, 0, 1)
  call check('T', -1, -1, 0, 0, 0, 2)
  call check('t', 0, -1, 0, 0, 0, 3)
  call check('c', 2, 0, 1, 0, 0, 6)
  call check('C', 0, 0, 0, 1, 1, 6)
  call check('T', 3, 5, 2, 1, 1, 6)
  call check('n', 0, 0, 1, 0, 0, 8)
  ! Valid calls (quick returns here): no error.
  call check('T', 5, 3, 5, 1, 1, 0)
  call check('n', 0, 0, 1, -1, -1, 0)

  call report_and_stop(failures)

contains

  ! Calls SGEMV and DGEMV with the arguments; `expected` is the position XERBLA must receive
  ! (0: no call).
  subroutine check(trans, m, n, lda, incx, incy, expected)
    character, intent(in) :: trans
    integer, intent(in) :: m, n, lda, incx, incy, expected
    real :: a(16), x(8), y(8)
    double precision :: da(16), dx(8), dy(8)
    character(len=80) :: arguments

    write (arguments, '(3a, 5(1x, i0))') 'trans=', trans, ' m n lda incx incy =', &
        m, n, lda, incx, incy
    a = 0; x = 0; y = 42
    calls = 0; last_name = ''; last_info = 0
    call sgemv(trans, m, n, 0.0, a, lda, x, incx, 1.0, y, incy)
    call verify('SGEMV ', arguments, expected, all(y == 42))

    da = 0; dx = 0; dy = 42
    calls = 0; last_name = ''; last_info = 0
    call dgemv(trans, m, n, 0.0d0, da, lda, dx, incx, 1.0d0, dy, incy)
    call verify('DGEMV ', arguments, expected, all(dy == 42))
  end subroutine check

  subroutine verify(name, arguments, expected, y_untouched)
    character(len=6), intent(in) :: name
    character(len=*), intent(in) :: arguments
    integer, intent(in) :: expected
    logical, intent(in) :: y_untouched
    logical :: ok
    if (expected == 0) then
      ok = calls == 0
    else
      ok = calls == 1 .and. last_name == name .and. last_info == expected
    end if
    if (.not. (ok .and. y_untouched)) then
      failures = failures + 1
      print '(4a, i0, a, i0, 3a, l1)', 'FAIL ', name, trim(arguments), &
          ': expected position ', expected, ', XERBLA got ', last_info, ' from "', last_name, &
          '", y untouched: ', y_untouched
    end if
  end subroutine verify

end program fortran_xerbla_test
