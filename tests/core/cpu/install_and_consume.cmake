# Installs the build tree to a fresh prefix, then configures, builds and runs the consumer project
# (tests/core/consumer) against it, through find_package(xgemv) and through pkg-config.
# Usage: cmake -DBUILD_DIR=... -DWORK_DIR=... -DCONSUMER_SOURCE=... -DGENERATOR=...
#              -DC_COMPILER=... -DCUDA_ROOT=... [-DCONFIG=...] -P install_and_consume.cmake
foreach(var BUILD_DIR WORK_DIR CONSUMER_SOURCE GENERATOR C_COMPILER CUDA_ROOT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "install_and_consume.cmake: -D${var}=... is required")
  endif()
endforeach()

set(prefix ${WORK_DIR}/prefix)
set(consumer_build ${WORK_DIR}/consumer-build)
file(REMOVE_RECURSE ${WORK_DIR})

set(config_args "")
if(CONFIG)
  set(config_args --config ${CONFIG})
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix} ${config_args}
  OUTPUT_QUIET COMMAND_ERROR_IS_FATAL ANY)
foreach(header xgemv.h xgemv.hpp)
  if(NOT EXISTS ${prefix}/include/xgemv/${header})
    message(FATAL_ERROR "the install has no include/xgemv/${header}")
  endif()
endforeach()

find_program(PKG_CONFIG_EXECUTABLE NAMES pkg-config)
set(ENV{PKG_CONFIG_PATH} "${prefix}/lib/pkgconfig:${prefix}/lib64/pkgconfig")
execute_process(COMMAND ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE} -B ${consumer_build}
    -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_COMPILER=${C_COMPILER}
    -DCMAKE_PREFIX_PATH=${prefix} -DCUDAToolkit_ROOT=${CUDA_ROOT}
    -DPKG_CONFIG_EXECUTABLE=${PKG_CONFIG_EXECUTABLE}
  COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${CMAKE_COMMAND} --build ${consumer_build} --target consumer_cmake
  COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${consumer_build}/consumer_cmake COMMAND_ERROR_IS_FATAL ANY)

if(NOT PKG_CONFIG_EXECUTABLE)
  # Reported as skipped (SKIP_REGULAR_EXPRESSION), never as passed.
  message("SKIPPED: pkg-config not found; the find_package(xgemv) consumer passed")
  return()
endif()
execute_process(COMMAND ${PKG_CONFIG_EXECUTABLE} --cflags --libs xgemv
  OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
message(STATUS "pkg-config --cflags --libs xgemv: ${flags}")
if(NOT flags MATCHES "-I${prefix}/include" OR NOT flags MATCHES "-L${prefix}/lib" OR
   NOT flags MATCHES "-lxgemv")
  message(FATAL_ERROR "xgemv.pc installed under ${prefix} does not point there: ${flags}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${consumer_build} --target consumer_pkgconfig
  COMMAND_ERROR_IS_FATAL ANY)
execute_process(COMMAND ${consumer_build}/consumer_pkgconfig COMMAND_ERROR_IS_FATAL ANY)
