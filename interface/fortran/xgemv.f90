! Fortran interface to xgemv: bind(C) interfaces on the C ABI of libxgemv.so (xgemv/xgemv.h).
!
! Matrices and vectors are device (or managed) memory, passed as type(c_ptr) by value: c_loc of
! an array inside an OpenACC `host_data use_device` region, a CUDA Fortran device array's
! address, or a pointer from cudaMalloc bound through iso_c_binding. The handle is a type(c_ptr).
! alpha and beta are type(c_ptr) too: c_loc of host variables (TARGET) in
! XGEMV_POINTER_MODE_HOST, device addresses in XGEMV_POINTER_MODE_DEVICE. Sizes, leading
! dimensions, increments, strides, batch counts and right-hand-side counts are
! integer(c_int64_t). Every function returns an xgemv status (XGEMV_STATUS_*); argument errors
! carry the BLAS argument position.
!
!   use xgemv
!   type(c_ptr) :: handle
!   real(c_float), target :: alpha = 1, beta = 0
!   status = xgemv_create(handle)
!   status = xgemv_sgemv(handle, 'N', m, n, c_loc(alpha), d_a, lda, d_x, 1_c_int64_t, &
!                        c_loc(beta), d_y, 1_c_int64_t)
module xgemv
  use, intrinsic :: iso_c_binding, only: c_char, c_int, c_int64_t, c_ptr, c_size_t, &
                                         c_f_pointer, c_associated
  implicit none
  private

  ! The enumerators of xgemv.h and the typed entry points' public statement (generated from
  ! src/element_types.json and xgemv.h by cmake/generate_bindings.py).
  include 'xgemv_constants.inc'

  public :: xgemv_create, xgemv_destroy, xgemv_set_stream, xgemv_get_stream
  public :: xgemv_set_pointer_mode, xgemv_get_pointer_mode
  public :: xgemv_set_batch_invariant, xgemv_get_batch_invariant
  public :: xgemv_status_string, xgemv_status_argument, xgemv_last_cuda_error
  public :: xgemv_cuda_error_string, xgemv_status_message, xgemv_cuda_error_message

  interface
    integer(c_int) function xgemv_create(handle) bind(C, name="xgemv_create")
      import :: c_int, c_ptr
      type(c_ptr), intent(out) :: handle
    end function

    integer(c_int) function xgemv_destroy(handle) bind(C, name="xgemv_destroy")
      import :: c_int, c_ptr
      type(c_ptr), value :: handle
    end function

    integer(c_int) function xgemv_set_stream(handle, stream) bind(C, name="xgemv_set_stream")
      import :: c_int, c_ptr
      type(c_ptr), value :: handle, stream
    end function

    integer(c_int) function xgemv_get_stream(handle, stream) bind(C, name="xgemv_get_stream")
      import :: c_int, c_ptr
      type(c_ptr), value :: handle
      type(c_ptr), intent(out) :: stream
    end function

    integer(c_int) function xgemv_set_pointer_mode(handle, mode) &
        bind(C, name="xgemv_set_pointer_mode")
      import :: c_int, c_ptr
      type(c_ptr), value :: handle
      integer(c_int), value :: mode
    end function

    integer(c_int) function xgemv_get_pointer_mode(handle, mode) &
        bind(C, name="xgemv_get_pointer_mode")
      import :: c_int, c_ptr
      type(c_ptr), value :: handle
      integer(c_int), intent(out) :: mode
    end function

    ! Batch invariance (enabled /= 0): the handle's single-vector calls give the bits of column j
    ! of a few-right-hand-side call. XGEMV_BATCH_INVARIANT=1 enables it at xgemv_create.
    integer(c_int) function xgemv_set_batch_invariant(handle, enabled) &
        bind(C, name="xgemv_set_batch_invariant")
      import :: c_int, c_ptr
      type(c_ptr), value :: handle
      integer(c_int), value :: enabled
    end function

    integer(c_int) function xgemv_get_batch_invariant(handle, enabled) &
        bind(C, name="xgemv_get_batch_invariant")
      import :: c_int, c_ptr
      type(c_ptr), value :: handle
      integer(c_int), intent(out) :: enabled
    end function

    ! A C string; xgemv_status_message gives it as a Fortran string.
    type(c_ptr) function xgemv_status_string(status) bind(C, name="xgemv_status_string")
      import :: c_int, c_ptr
      integer(c_int), value :: status
    end function

    integer(c_int) function xgemv_status_argument(status) bind(C, name="xgemv_status_argument")
      import :: c_int
      integer(c_int), value :: status
    end function

    integer(c_int) function xgemv_last_cuda_error() bind(C, name="xgemv_last_cuda_error")
      import :: c_int
    end function

    ! A C string; xgemv_cuda_error_message gives it as a Fortran string.
    type(c_ptr) function xgemv_cuda_error_string() bind(C, name="xgemv_cuda_error_string")
      import :: c_ptr
    end function

    ! The typed entry points, one per element type of src/element_types.json and call form:
    ! xgemv_<p>gemv (one problem), xgemv_<p>gemv_strided_batched (batch_count problems of one
    ! shape: problem b uses a + b*stride_a, x + b*stride_x, y + b*stride_y, strides in elements)
    ! and xgemv_<p>gemv_nrhs (Y := alpha*op(A)*X + beta*Y for nrhs column-major vectors, X with
    ! leading dimension ldx, Y with ldy; argument errors ldx 8, ldy 11, nrhs 12), <p> = s, d, h,
    ! bf16. hgemv / bf16gemv: A, x, y in 16-bit storage, alpha and beta fp32.
    include 'xgemv_typed_calls.inc'
  end interface

  interface
    integer(c_size_t) function c_strlen(string) bind(C, name="strlen")
      import :: c_size_t, c_ptr
      type(c_ptr), value :: string
    end function
  end interface

contains

  ! xgemv_status_string as a Fortran string.
  function xgemv_status_message(status) result(message)
    integer(c_int), intent(in) :: status
    character(len=:), allocatable :: message

    message = fortran_string(xgemv_status_string(status))
  end function

  ! xgemv_cuda_error_string as a Fortran string.
  function xgemv_cuda_error_message() result(message)
    character(len=:), allocatable :: message

    message = fortran_string(xgemv_cuda_error_string())
  end function

  ! A copy of a NUL-terminated C string ("" for a NULL pointer).
  function fortran_string(text) result(string)
    type(c_ptr), intent(in) :: text
    character(len=:), allocatable :: string
    character(kind=c_char), pointer :: characters(:)
    integer :: i

    if (.not. c_associated(text)) then
      string = ""
      return
    end if
    call c_f_pointer(text, characters, [c_strlen(text)])
    allocate(character(len=size(characters)) :: string)
    do i = 1, size(characters)
      string(i:i) = characters(i)
    end do
  end function

end module xgemv
