! The `xgemv` Fortran module (bind(C) interfaces on libxgemv.so), with device arrays from
! cudaMalloc bound through iso_c_binding:
!   errors  argument errors come back as statuses carrying the BLAS argument position, checked
!           before the handle and before any device work (runs without a GPU);
!   device  sgemv / dgemv in both ops, strided batched, hgemv, sgemv_nrhs in both ops, host and
!           device pointer modes, a non-default stream, against matmul on small integers
!           (exact), and the batch-invariant mode set and read back. Needs a GPU (exit 77
!           without).
program fortran_module_test
  use, intrinsic :: iso_c_binding
  use, intrinsic :: ieee_arithmetic, only: ieee_value, ieee_quiet_nan
  use xgemv
  use interface_test_support
  implicit none

  interface
    integer(c_int) function cudaMalloc(pointer, bytes) bind(C, name="cudaMalloc")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), intent(out) :: pointer
      integer(c_size_t), value :: bytes
    end function
    integer(c_int) function cudaFree(pointer) bind(C, name="cudaFree")
      import :: c_int, c_ptr
      type(c_ptr), value :: pointer
    end function
    integer(c_int) function cudaMemcpy(destination, source, bytes, kind) &
        bind(C, name="cudaMemcpy")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: destination, source
      integer(c_size_t), value :: bytes
      integer(c_int), value :: kind
    end function
    integer(c_int) function cudaStreamCreate(stream) bind(C, name="cudaStreamCreate")
      import :: c_int, c_ptr
      type(c_ptr), intent(out) :: stream
    end function
    integer(c_int) function cudaStreamSynchronize(stream) bind(C, name="cudaStreamSynchronize")
      import :: c_int, c_ptr
      type(c_ptr), value :: stream
    end function
    integer(c_int) function cudaStreamDestroy(stream) bind(C, name="cudaStreamDestroy")
      import :: c_int, c_ptr
      type(c_ptr), value :: stream
    end function
  end interface
  integer(c_int), parameter :: cudaMemcpyDefault = 4
  integer(c_int64_t), parameter :: one = 1

  character(len=16) :: mode
  integer :: failures = 0

  call get_command_argument(1, mode)
  select case (trim(mode))
  case ('errors')
    call argument_errors()
  case ('device')
    if (test_gpu_count() == 0) then
      print '(a)', 'SKIPPED: no CUDA device'
      stop 77, quiet=.true.
    end if
    call device_calls()
  case default
    print '(a)', 'usage: fortran_module_test errors|device'
    error stop 2
  end select

  call report_and_stop(failures)

contains

  subroutine expect(condition, what)
    logical, intent(in) :: condition
    character(len=*), intent(in) :: what
    if (.not. condition) then
      failures = failures + 1
      print '(2a)', 'FAIL ', what
    end if
  end subroutine expect

  subroutine expect_status(status, expected, what)
    integer(c_int), intent(in) :: status, expected
    character(len=*), intent(in) :: what
    if (status /= expected) then
      failures = failures + 1
      print '(3a, i0, a, i0, 3a)', 'FAIL ', what, ': status ', status, ', expected ', &
          expected, ' (', xgemv_status_message(status), ')'
    end if
  end subroutine expect_status

  subroutine argument_errors()
    type(c_ptr) :: none
    integer(c_int) :: enabled
    none = c_null_ptr
    call expect_status(xgemv_sgemv(none, 'X', one, one, none, none, one, none, one, none, &
                                   none, one), XGEMV_STATUS_INVALID_TRANS, 'sgemv trans')
    call expect_status(xgemv_sgemv(none, 'N', -one, one, none, none, one, none, one, none, &
                                   none, one), XGEMV_STATUS_INVALID_M, 'sgemv m')
    call expect_status(xgemv_dgemv(none, 't', one, -one, none, none, one, none, one, none, &
                                   none, one), XGEMV_STATUS_INVALID_N, 'dgemv n')
    call expect_status(xgemv_dgemv(none, 'T', 2 * one, 0 * one, none, none, one, none, one, &
                                   none, none, one), XGEMV_STATUS_INVALID_LDA, 'dgemv lda')
    call expect_status(xgemv_hgemv(none, 'N', one, one, none, none, one, none, 0 * one, none, &
                                   none, one), XGEMV_STATUS_INVALID_INCX, 'hgemv incx')
    call expect_status(xgemv_bf16gemv(none, 'C', one, one, none, none, one, none, one, none, &
                                      none, 0 * one), XGEMV_STATUS_INVALID_INCY, 'bf16gemv incy')
    call expect_status(xgemv_sgemv_strided_batched(none, 'N', one, one, none, none, one, one, &
                                                   none, one, one, none, none, one, one, -one), &
                       XGEMV_STATUS_INVALID_BATCH, 'strided batched count')
    ! Few right-hand sides: trans 1, ldx 8 (rows of X: n for 'N'), ldy 11 (rows of Y: n for
    ! 'T'), nrhs 12, in that order.
    call expect_status(xgemv_bf16gemv_nrhs(none, 'X', one, one, none, none, one, none, one, &
                                           none, none, one, one), XGEMV_STATUS_INVALID_TRANS, &
                       'bf16gemv_nrhs trans')
    call expect_status(xgemv_dgemv_nrhs(none, 'N', one, 2 * one, none, none, one, none, one, &
                                        none, none, one, -one), XGEMV_STATUS_INVALID_LDX, &
                       'dgemv_nrhs ldx before nrhs')
    call expect_status(xgemv_hgemv_nrhs(none, 'T', 2 * one, 3 * one, none, none, 2 * one, none, &
                                        2 * one, none, none, 2 * one, one), &
                       XGEMV_STATUS_INVALID_LDY, 'hgemv_nrhs ldy')
    call expect_status(xgemv_sgemv_nrhs(none, 'N', one, one, none, none, one, none, one, none, &
                                        none, one, -one), XGEMV_STATUS_INVALID_NRHS, &
                       'sgemv_nrhs nrhs')
    ! Valid arguments: the NULL handle is the first thing wrong.
    call expect_status(xgemv_sgemv(none, 'N', one, one, none, none, one, none, one, none, &
                                   none, one), XGEMV_STATUS_INVALID_HANDLE, 'NULL handle')
    call expect_status(xgemv_sgemv_nrhs(none, 'N', one, one, none, none, one, none, one, none, &
                                        none, one, 3 * one), XGEMV_STATUS_INVALID_HANDLE, &
                       'sgemv_nrhs NULL handle')
    call expect_status(xgemv_set_batch_invariant(none, 1_c_int), XGEMV_STATUS_INVALID_HANDLE, &
                       'set_batch_invariant NULL handle')
    call expect_status(xgemv_get_batch_invariant(none, enabled), XGEMV_STATUS_INVALID_HANDLE, &
                       'get_batch_invariant NULL handle')
    call expect(xgemv_status_argument(XGEMV_STATUS_INVALID_LDA) == 6, 'lda is argument 6')
    call expect(index(xgemv_status_message(XGEMV_STATUS_INVALID_LDA), 'lda') > 0, &
                'status message names lda')
    call expect(xgemv_status_argument(XGEMV_STATUS_INVALID_NRHS) == 12, 'nrhs is argument 12')
    call expect(index(xgemv_status_message(XGEMV_STATUS_INVALID_NRHS), 'nrhs') > 0, &
                'status message names nrhs')
    ! Argument errors involve no CUDA call.
    call expect(xgemv_last_cuda_error() == 0, 'no CUDA error recorded')
    call expect(xgemv_cuda_error_message() == 'no error', 'CUDA error message "no error"')
  end subroutine argument_errors

  ! A device copy of `bytes` bytes at `host`.
  type(c_ptr) function to_device(host, bytes) result(device)
    type(c_ptr), intent(in) :: host
    integer, intent(in) :: bytes
    call expect(cudaMalloc(device, int(bytes, c_size_t)) == 0, 'cudaMalloc')
    call expect(cudaMemcpy(device, host, int(bytes, c_size_t), cudaMemcpyDefault) == 0, &
                'cudaMemcpy to the device')
  end function to_device

  subroutine from_device(host, device, bytes)
    type(c_ptr), intent(in) :: host, device
    integer, intent(in) :: bytes
    call expect(cudaMemcpy(host, device, int(bytes, c_size_t), cudaMemcpyDefault) == 0, &
                'cudaMemcpy from the device')
    call expect(cudaFree(device) == 0, 'cudaFree')
  end subroutine from_device

  ! xgemv_sgemv of op `trans` with host scalars on the device's A at d_a (m x n, leading dimension
  ! lda): x and y copied to the device, y back (both device copies freed).
  subroutine sgemv_host_scalars(handle, trans, m, n, d_a, lda, alpha, x, beta, y, what)
    type(c_ptr), intent(in) :: handle, d_a
    character, intent(in) :: trans
    integer, intent(in) :: m, n, lda
    real(c_float), intent(in), target :: alpha, beta
    real(c_float), intent(in), target, contiguous :: x(:)
    real(c_float), intent(inout), target, contiguous :: y(:)
    character(len=*), intent(in) :: what
    type(c_ptr) :: d_x, d_y
    ! gfortran 12 passes a character dummy to a value character argument as its address's low
    ! byte: a local copy is passed as it should be.
    character(kind=c_char) :: op
    op = trans
    d_x = to_device(c_loc(x), size(x) * 4)
    d_y = to_device(c_loc(y), size(y) * 4)
    call expect_status(xgemv_sgemv(handle, op, int(m, c_int64_t), int(n, c_int64_t), &
                                   c_loc(alpha), d_a, int(lda, c_int64_t), d_x, one, c_loc(beta), &
                                   d_y, one), XGEMV_STATUS_SUCCESS, what)
    call from_device(c_loc(y), d_y, size(y) * 4)
    call expect(cudaFree(d_x) == 0, 'cudaFree')
  end subroutine sgemv_host_scalars

  subroutine device_calls()
    integer, parameter :: m = 37, n = 23, lda = 40, batch = 3
    real(c_float), target :: a(lda, n), x(n), y(m), xt(m), yt(n), expected(m)
    real(c_float), target :: alpha = 2, beta = -1, zero = 0, device_alpha = 3, device_beta = 0
    real(c_double), target :: da(lda, n), dxt(m), dyt(n), dexpected(n)
    real(c_double), target :: dalpha = -3, dbeta = 0.5d0
    real(c_float), target :: batch_a(lda, n, batch), batch_x(n, batch), batch_y(m, batch)
    real(c_float), target :: batch_expected(m, batch)
    integer(c_int16_t), target :: half_a(4, 3), half_x(3), half_y(4)
    type(c_ptr) :: handle, stream, d_a, d_x, d_y, d_alpha, d_beta
    integer :: i, j, b

    do j = 1, n
      do i = 1, lda
        a(i, j) = real(mod(3 * i + 5 * j, 7) - 3)
      end do
    end do
    x = [(real(mod(i, 5) - 2), i = 1, n)]
    y = [(real(mod(i, 3) - 1), i = 1, m)]
    xt = [(real(mod(i, 4) - 2), i = 1, m)]
    yt = [(real(mod(i, 6) - 3), i = 1, n)]
    da = a
    dxt = xt
    dyt = yt

    call expect_status(xgemv_create(handle), XGEMV_STATUS_SUCCESS, 'create')

    ! sgemv 'N', host scalars.
    expected = alpha * matmul(a(1:m, :), x) + beta * y
    d_a = to_device(c_loc(a), size(a) * 4)
    call sgemv_host_scalars(handle, 'N', m, n, d_a, lda, alpha, x, beta, y, 'sgemv N')
    call expect(all(y == expected), 'sgemv N result')

    ! sgemv 'N' again with device scalars on a non-default stream: y := 3*A*x + 0*y.
    expected = device_alpha * matmul(a(1:m, :), x)
    y = ieee_value(y, ieee_quiet_nan)  ! beta == 0: never read
    d_x = to_device(c_loc(x), size(x) * 4)
    d_y = to_device(c_loc(y), size(y) * 4)
    d_alpha = to_device(c_loc(device_alpha), 4)
    d_beta = to_device(c_loc(device_beta), 4)
    call expect(cudaStreamCreate(stream) == 0, 'cudaStreamCreate')
    call expect_status(xgemv_set_stream(handle, stream), XGEMV_STATUS_SUCCESS, 'set stream')
    call expect_status(xgemv_set_pointer_mode(handle, XGEMV_POINTER_MODE_DEVICE), &
                       XGEMV_STATUS_SUCCESS, 'set pointer mode')
    call expect_status(xgemv_sgemv(handle, 'N', int(m, c_int64_t), int(n, c_int64_t), &
                                   d_alpha, d_a, int(lda, c_int64_t), d_x, one, d_beta, d_y, &
                                   one), XGEMV_STATUS_SUCCESS, 'sgemv device scalars')
    call expect(cudaStreamSynchronize(stream) == 0, 'cudaStreamSynchronize')
    call from_device(c_loc(y), d_y, size(y) * 4)
    call expect(all(y == expected), 'sgemv device scalars, stream result')
    call expect(cudaFree(d_alpha) == 0 .and. cudaFree(d_beta) == 0, 'cudaFree')
    call expect_status(xgemv_set_pointer_mode(handle, XGEMV_POINTER_MODE_HOST), &
                       XGEMV_STATUS_SUCCESS, 'set pointer mode back')
    call expect_status(xgemv_set_stream(handle, c_null_ptr), XGEMV_STATUS_SUCCESS, 'stream 0')
    call expect(cudaStreamDestroy(stream) == 0, 'cudaStreamDestroy')
    call expect(cudaFree(d_x) == 0, 'cudaFree')

    ! sgemv 'T' and dgemv 'T'.
    call sgemv_host_scalars(handle, 'T', m, n, d_a, lda, alpha, xt, zero, yt, 'sgemv T')
    call expect(all(yt == alpha * matmul(xt, a(1:m, :))), 'sgemv T result')
    call expect(cudaFree(d_a) == 0, 'cudaFree')

    dexpected = dalpha * matmul(dxt, da(1:m, :)) + dbeta * dyt
    d_a = to_device(c_loc(da), size(da) * 8)
    d_x = to_device(c_loc(dxt), size(dxt) * 8)
    d_y = to_device(c_loc(dyt), size(dyt) * 8)
    call expect_status(xgemv_dgemv(handle, 'C', int(m, c_int64_t), int(n, c_int64_t), &
                                   c_loc(dalpha), d_a, int(lda, c_int64_t), d_x, one, &
                                   c_loc(dbeta), d_y, one), XGEMV_STATUS_SUCCESS, 'dgemv C')
    call from_device(c_loc(dyt), d_y, size(dyt) * 8)
    call expect(all(dyt == dexpected), 'dgemv C result')
    call expect(cudaFree(d_x) == 0 .and. cudaFree(d_a) == 0, 'cudaFree')

    ! Strided batched: problem b uses A(:, :, b), x(:, b), y(:, b).
    do b = 1, batch
      batch_a(:, :, b) = a + b
      batch_x(:, b) = x - b
      batch_y(:, b) = y + b
      batch_expected(:, b) = alpha * matmul(batch_a(1:m, :, b), batch_x(:, b)) + &
                             beta * batch_y(:, b)
    end do
    d_a = to_device(c_loc(batch_a), size(batch_a) * 4)
    d_x = to_device(c_loc(batch_x), size(batch_x) * 4)
    d_y = to_device(c_loc(batch_y), size(batch_y) * 4)
    call expect_status(xgemv_sgemv_strided_batched(handle, 'N', int(m, c_int64_t), &
        int(n, c_int64_t), c_loc(alpha), d_a, int(lda, c_int64_t), int(lda * n, c_int64_t), &
        d_x, one, int(n, c_int64_t), c_loc(beta), d_y, one, int(m, c_int64_t), &
        int(batch, c_int64_t)), XGEMV_STATUS_SUCCESS, 'sgemv strided batched')
    call from_device(c_loc(batch_y), d_y, size(batch_y) * 4)
    call expect(all(batch_y == batch_expected), 'strided batched result')
    call expect(cudaFree(d_x) == 0 .and. cudaFree(d_a) == 0, 'cudaFree')

    ! hgemv on fp16 bit patterns: A all 1.0 (0x3C00), x all 2.0 (0x4000), beta 0 -> y all 6.0.
    half_a = int(z'3C00', c_int16_t)
    half_x = int(z'4000', c_int16_t)
    half_y = -1_c_int16_t  ! a NaN pattern: beta == 0 must not read it
    alpha = 1
    d_a = to_device(c_loc(half_a), size(half_a) * 2)
    d_x = to_device(c_loc(half_x), size(half_x) * 2)
    d_y = to_device(c_loc(half_y), size(half_y) * 2)
    call expect_status(xgemv_hgemv(handle, 'N', 4_c_int64_t, 3_c_int64_t, c_loc(alpha), d_a, &
                                   4_c_int64_t, d_x, one, c_loc(zero), d_y, one), &
                       XGEMV_STATUS_SUCCESS, 'hgemv')
    call from_device(c_loc(half_y), d_y, size(half_y) * 2)
    call expect(all(half_y == int(z'4600', c_int16_t)), 'hgemv result (6.0 = 0x4600)')
    call expect(cudaFree(d_x) == 0 .and. cudaFree(d_a) == 0, 'cudaFree')

    call nrhs_calls(handle, a, lda, m, n)

    call expect_status(xgemv_destroy(handle), XGEMV_STATUS_SUCCESS, 'destroy')
  end subroutine device_calls

  ! sgemv_nrhs 'N' and 'T' on nrhs padded columns (the padding must stay untouched), and the
  ! handle's batch invariance, set and read back.
  subroutine nrhs_calls(handle, a, lda, m, n)
    type(c_ptr), intent(in) :: handle
    integer, intent(in) :: lda, m, n
    real(c_float), intent(in), target :: a(lda, n)
    integer, parameter :: nrhs = 3, ldx = 40, ldy = 41  ! rows of X and Y: at most 37
    real(c_float), target :: xs(ldx, nrhs), ys(ldy, nrhs), expected(ldy, nrhs)
    real(c_float), target :: alpha = 2, beta = -1
    type(c_ptr) :: d_a, d_x, d_y
    character :: trans
    integer :: i, j, t
    integer(c_int) :: enabled

    d_a = to_device(c_loc(a), size(a) * 4)
    do t = 1, 2
      trans = merge('N', 'T', t == 1)
      xs = reshape([((real(mod(i + 2 * j, 5) - 2), i = 1, ldx), j = 1, nrhs)], shape(xs))
      ys = reshape([((real(mod(3 * i + j, 7) - 3), i = 1, ldy), j = 1, nrhs)], shape(ys))
      expected = ys
      do j = 1, nrhs
        if (t == 1) then
          expected(1:m, j) = alpha * matmul(a(1:m, 1:n), xs(1:n, j)) + beta * ys(1:m, j)
        else
          expected(1:n, j) = alpha * matmul(xs(1:m, j), a(1:m, 1:n)) + beta * ys(1:n, j)
        end if
      end do
      d_x = to_device(c_loc(xs), size(xs) * 4)
      d_y = to_device(c_loc(ys), size(ys) * 4)
      call expect_status(xgemv_sgemv_nrhs(handle, trans, int(m, c_int64_t), int(n, c_int64_t), &
                                          c_loc(alpha), d_a, int(lda, c_int64_t), d_x, &
                                          int(ldx, c_int64_t), c_loc(beta), d_y, &
                                          int(ldy, c_int64_t), int(nrhs, c_int64_t)), &
                         XGEMV_STATUS_SUCCESS, 'sgemv_nrhs ' // trans)
      call from_device(c_loc(ys), d_y, size(ys) * 4)
      call expect(all(ys == expected), 'sgemv_nrhs ' // trans // ' result')
      call expect(cudaFree(d_x) == 0, 'cudaFree')
    end do
    call expect(cudaFree(d_a) == 0, 'cudaFree')

    call expect_status(xgemv_set_batch_invariant(handle, 1_c_int), XGEMV_STATUS_SUCCESS, &
                       'set_batch_invariant')
    call expect_status(xgemv_get_batch_invariant(handle, enabled), XGEMV_STATUS_SUCCESS, &
                       'get_batch_invariant')
    call expect(enabled == 1, 'batch invariance enabled')
    call expect_status(xgemv_set_batch_invariant(handle, 0_c_int), XGEMV_STATUS_SUCCESS, &
                       'set_batch_invariant off')
  end subroutine nrhs_calls

end program fortran_module_test
