! Fortran bindings of interface_test_support.h.
module interface_test_support
  use, intrinsic :: iso_c_binding, only: c_int, c_char, c_null_char
  implicit none
  private
  public :: test_gpu_count, test_capture_begin, captured_output_contains, report_and_stop

  integer(c_int), parameter, public :: TEST_STDOUT = 1, TEST_STDERR = 2

  interface
    integer(c_int) function test_gpu_count() bind(C, name="test_gpu_count")
      import :: c_int
    end function

    integer(c_int) function test_capture_begin(fd) bind(C, name="test_capture_begin")
      import :: c_int
      integer(c_int), value :: fd
    end function

    integer(c_int) function c_capture_end_contains(needle) &
        bind(C, name="test_capture_end_contains")
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: needle(*)
    end function
  end interface

contains

  ! Ends the capture; whether the captured text contains `needle`.
  logical function captured_output_contains(needle)
    character(len=*), intent(in) :: needle
    captured_output_contains = c_capture_end_contains(needle // c_null_char) /= 0
  end function

  ! The program's verdict line; after any failure, error stop 1.
  subroutine report_and_stop(failures)
    integer, intent(in) :: failures
    if (failures /= 0) then
      print '(a, i0, a)', 'FAILED: ', failures, ' failure(s)'
      error stop 1
    end if
    print '(a)', 'PASSED: 0 failure(s)'
  end subroutine

end module interface_test_support
