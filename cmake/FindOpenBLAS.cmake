# Finds OpenBLAS with its CBLAS header, as the host reference for tests and benchmarks.
# Tries, in order: OpenBLAS's own CMake package, pkg-config (openblas), FindBLAS with the
# OpenBLAS vendor. Defines the imported target OpenBLAS::OpenBLAS.
if(TARGET OpenBLAS::OpenBLAS)
  set(OpenBLAS_FOUND TRUE)
  return()
endif()

find_package(OpenBLAS CONFIG QUIET)
set(_openblas_libs "")
set(_openblas_incs "")
if(OpenBLAS_FOUND AND OpenBLAS_LIBRARIES)
  set(_openblas_libs ${OpenBLAS_LIBRARIES})
  set(_openblas_incs ${OpenBLAS_INCLUDE_DIRS})
else()
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(PC_OPENBLAS QUIET openblas)
  endif()
  if(PC_OPENBLAS_FOUND)
    find_library(_openblas_lib NAMES openblas HINTS ${PC_OPENBLAS_LIBRARY_DIRS})
    set(_openblas_libs ${_openblas_lib})
    set(_openblas_incs ${PC_OPENBLAS_INCLUDE_DIRS})
  else()
    set(BLA_VENDOR OpenBLAS)
    find_package(BLAS QUIET)
    set(_openblas_libs ${BLAS_LIBRARIES})
  endif()
endif()

find_path(OpenBLAS_CBLAS_INCLUDE_DIR cblas.h
  HINTS ${_openblas_incs}
  PATH_SUFFIXES openblas openblas-pthread openblas-openmp x86_64-linux-gnu/openblas-pthread)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(OpenBLAS REQUIRED_VARS _openblas_libs OpenBLAS_CBLAS_INCLUDE_DIR)
if(OpenBLAS_FOUND)
  add_library(OpenBLAS::OpenBLAS INTERFACE IMPORTED)
  set_target_properties(OpenBLAS::OpenBLAS PROPERTIES
    INTERFACE_LINK_LIBRARIES "${_openblas_libs}"
    INTERFACE_INCLUDE_DIRECTORIES "${OpenBLAS_CBLAS_INCLUDE_DIR}")
endif()
