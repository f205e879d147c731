# Installs the build tree to a fresh prefix, then configures, builds and runs the consumer project
# (tests/core/consumer) for one installed library, LIBRARY (xgemv, blas, cublas, fortran or nccl),
# through find_package(xgemv) and through pkg-config. Each consumer program must load the
# library by its SONAME.
# Usage: cmake -DLIBRARY=... -DSONAME=... -DBUILD_DIR=... -DWORK_DIR=... -DCONSUMER_SOURCE=...
#              -DGENERATOR=... -DCOMPILER=... -DCUDA_ROOT=... -DOBJDUMP=... [-DCONFIG=...]
#              [-DLINKER_FLAGS=...] -P install_and_consume.cmake
# COMPILER is the C compiler, or the Fortran compiler for LIBRARY=fortran; SONAME is that of
# libxgemv.so for fortran (its module is a static library on it). LINKER_FLAGS: the consumers'
# CMAKE_EXE_LINKER_FLAGS (the build's own, e.g. its sanitizers).
foreach(var LIBRARY SONAME BUILD_DIR WORK_DIR CONSUMER_SOURCE GENERATOR COMPILER CUDA_ROOT OBJDUMP)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "install_and_consume.cmake: -D${var}=... is required")
  endif()
endforeach()

set(prefix ${WORK_DIR}/prefix)
if(LIBRARY STREQUAL "xgemv")
  set(pc_module xgemv)
  set(link_flag -lxgemv)
else()
  set(pc_module xgemv-${LIBRARY})
  set(link_flag -lxgemv_${LIBRARY})
endif()
# Where the library's header or Fortran module is (blas and cublas have none of their own;
# nccl's is beside xgemv.h, which its .pc file requires).
set(include_flag "")
if(LIBRARY STREQUAL "xgemv" OR LIBRARY STREQUAL "nccl")
  set(include_flag -I${prefix}/include)
elseif(LIBRARY STREQUAL "fortran")
  set(include_flag -I${prefix}/include/xgemv)
endif()
if(LIBRARY STREQUAL "fortran")
  set(compiler_variable CMAKE_Fortran_COMPILER)
else()
  set(compiler_variable CMAKE_C_COMPILER)
endif()

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

# Builds and runs one consumer program; it must need the library by its SONAME.
function(build_and_run target)
  execute_process(COMMAND ${CMAKE_COMMAND} --build ${consumer_build} --target ${target}
    COMMAND_ERROR_IS_FATAL ANY)
  execute_process(COMMAND ${OBJDUMP} -p ${consumer_build}/${target}
    OUTPUT_VARIABLE dynamic_section COMMAND_ERROR_IS_FATAL ANY)
  if(NOT dynamic_section MATCHES "NEEDED +${SONAME}\n")
    message(FATAL_ERROR "${target} does not need ${SONAME}:\n${dynamic_section}")
  endif()
  execute_process(COMMAND ${consumer_build}/${target} COMMAND_ERROR_IS_FATAL ANY)
endfunction()

find_program(PKG_CONFIG_EXECUTABLE NAMES pkg-config)
set(ENV{PKG_CONFIG_PATH} "${prefix}/lib/pkgconfig:${prefix}/lib64/pkgconfig")
execute_process(COMMAND ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE} -B ${consumer_build}
    -G ${GENERATOR} -DCMAKE_BUILD_TYPE=Release -D${compiler_variable}=${COMPILER}
    -DLIBRARY=${LIBRARY} -DCMAKE_PREFIX_PATH=${prefix} -DCUDAToolkit_ROOT=${CUDA_ROOT}
    "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}"
    -DPKG_CONFIG_EXECUTABLE=${PKG_CONFIG_EXECUTABLE}
  COMMAND_ERROR_IS_FATAL ANY)
build_and_run(consumer_cmake)

if(NOT PKG_CONFIG_EXECUTABLE)
  # Reported as skipped (SKIP_REGULAR_EXPRESSION), never as passed.
  message("SKIPPED: pkg-config not found; the find_package(xgemv) consumer passed")
  return()
endif()
execute_process(COMMAND ${PKG_CONFIG_EXECUTABLE} --cflags --libs ${pc_module}
  OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
message(STATUS "pkg-config --cflags --libs ${pc_module}: ${flags}")
if(NOT flags MATCHES "-L${prefix}/lib" OR NOT flags MATCHES "${link_flag}( |$)" OR
   NOT flags MATCHES "${include_flag}")
  message(FATAL_ERROR "${pc_module}.pc installed under ${prefix} does not point there: ${flags}")
endif()
build_and_run(consumer_pkgconfig)
