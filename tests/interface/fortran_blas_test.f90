! SGEMV and DGEMV from Fortran with host arrays, against a textbook loop (small integers: exact),
! and who served each call, from libxgemv_blas.so's log (XGEMV_BLAS_LOG=1, set by CTest):
!   host    -> the next BLAS in the process (not xgemv). Runs without a GPU.
!   staged  (XGEMV_BLAS_HOST=gpu) -> xgemv through the GPU when there is one, else still the
!           next BLAS. Real in both cases.
! Links libxgemv_blas.so and no other BLAS.
program fortran_blas_test
  use interface_test_support
  implicit none
  character(len=16) :: mode
  character(len=64) :: expected_server
  integer :: failures = 0, checked = 0, m, n, t, k
  character, parameter :: transposes(4) = ['N', 'T', 'C', 't']
  integer, parameter :: ms(3) = [1, 7, 33], ns(3) = [1, 5, 40]

  call get_command_argument(1, mode)
  call get_environment_variable('XGEMV_BLAS_LOG', expected_server)
  if (expected_server /= '1') then
    print '(a)', 'FAIL: run with XGEMV_BLAS_LOG=1 (the checks read the routing log)'
    error stop 1
  end if
  select case (trim(mode))
  case ('host')
    expected_server = 'host BLAS ('
  case ('staged')
    if (test_gpu_count() > 0) then
      expected_server = 'xgemv (host arrays staged through the GPU)'
    else
      expected_server = 'host BLAS ('
    end if
  case default
    print '(a)', 'usage: fortran_blas_test host|staged'
    error stop 2
  end select

  do t = 1, size(transposes)
    do m = 1, size(ms)
      do n = 1, size(ns)
        do k = 0, 3
          call run(transposes(t), ms(m), ns(n), ms(m) + mod(k, 2) * 3, 1 - 3 * (k / 2), &
                   1 + mod(k, 2), real(2 - k, 8), real(k / 2, 8) * 0.5d0)
        end do
      end do
    end do
  end do

  if (failures /= 0) then
    print '(a, i0, a, i0, a)', 'FAILED: ', checked, ' call(s) checked, ', failures, ' failure(s)'
    error stop 1
  end if
  print '(a, i0, a)', 'PASSED: ', checked, ' call(s) checked, 0 failure(s)'

contains

  ! One problem through DGEMV and, on the same values, SGEMV; both checked against the loop.
  subroutine run(trans, m, n, lda, incx, incy, alpha, beta)
    character, intent(in) :: trans
    integer, intent(in) :: m, n, lda, incx, incy
    double precision, intent(in) :: alpha, beta
    double precision, allocatable :: a(:, :), op_a(:, :), x(:), y(:), expected(:)
    real, allocatable :: sa(:, :), sx(:), sy(:)
    integer :: rows, cols, i, j, xlen, ylen
    character(len=120) :: arguments

    allocate(a(lda, n))
    do j = 1, n
      do i = 1, lda
        a(i, j) = mod(i * 7 + j * 3, 9) - 4
      end do
    end do
    if (trans == 'N' .or. trans == 'n') then
      op_a = a(1:m, :)
    else
      op_a = transpose(a(1:m, :))
    end if
    rows = size(op_a, 1)
    cols = size(op_a, 2)
    xlen = 1 + (cols - 1) * abs(incx)
    ylen = 1 + (rows - 1) * abs(incy)
    allocate(x(xlen), y(ylen))
    do i = 1, xlen
      x(i) = mod(i * 5, 7) - 3
    end do
    do i = 1, ylen
      y(i) = mod(i * 3, 5) - 2
    end do

    expected = y
    do i = 1, rows
      expected(element(i, rows, incy)) = beta * y(element(i, rows, incy)) + alpha * &
          sum([(op_a(i, j) * x(element(j, cols, incx)), j = 1, cols)])
    end do

    write (arguments, '(3a, 5(1x, i0), a, 2(1x, f0.2))') ' trans=', trans, &
        ' m n lda incx incy =', m, n, lda, incx, incy, ' alpha beta =', alpha, beta
    sa = real(a); sx = real(x); sy = real(y)
    call begin_capture()
    call dgemv(trans, m, n, alpha, a, lda, x, incx, beta, y, incy)
    call finish('dgemv_', arguments, all(y == expected))
    call begin_capture()
    call sgemv(trans, m, n, real(alpha), sa, lda, sx, incx, real(beta), sy, incy)
    call finish('sgemv_', arguments, all(dble(sy) == expected))
  end subroutine run

  subroutine begin_capture()
    if (test_capture_begin(TEST_STDERR) /= 0) then
      print '(a)', 'FAIL cannot capture stderr'
      failures = failures + 1
    end if
  end subroutine begin_capture

  ! Ends the capture; checks the result and who served the call.
  subroutine finish(entry, arguments, correct)
    character(len=*), intent(in) :: entry, arguments
    logical, intent(in) :: correct
    logical :: served_as_expected
    served_as_expected = captured_output_contains('xgemv_blas: ' // entry // ' -> ' // &
                                                  trim(expected_server))
    checked = checked + 1
    if (.not. (correct .and. served_as_expected)) then
      failures = failures + 1
      print '(4a, l1, 3a, l1)', 'FAIL ', entry, trim(arguments), ': correct ', correct, &
          ', served by "', trim(expected_server), '" ', served_as_expected
    end if
  end subroutine finish

  ! Position of logical element i (1-based) of a vector of `length` with increment `inc`.
  integer function element(i, length, inc)
    integer, intent(in) :: i, length, inc
    if (inc > 0) then
      element = 1 + (i - 1) * inc
    else
      element = 1 + (length - i) * (-inc)
    end if
  end function element

end program fortran_blas_test
