# A shared library exports exactly the functions its public headers declare (all xgemv_*),
# carries its SONAME, and does not depend on cuBLAS; with NEEDED (a regex), it depends on a
# library matching it. HEADER is one header or a list of them. MIN_DECLARATIONS (default 20,
# libxgemv's) guards against a header the declaration pattern no longer reads.
# Usage: cmake -DLIBRARY=<libxgemv.so> -DHEADER=<xgemv.h>[;<more.h>] -DSONAME=<libxgemv.so.N>
#              [-DMIN_DECLARATIONS=N] [-DNEEDED=<regex>] -DNM=<nm> -DOBJDUMP=<objdump>
#              -P check_exports.cmake
foreach(var LIBRARY HEADER SONAME NM OBJDUMP)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_exports.cmake: -D${var}=... is required")
  endif()
endforeach()
if(NOT DEFINED MIN_DECLARATIONS)
  set(MIN_DECLARATIONS 20)
endif()

include(${CMAKE_CURRENT_LIST_DIR}/../../support/dynamic_symbols.cmake)
xgemv_defined_dynamic_symbols(${NM} ${LIBRARY} exported)
list(SORT exported)

set(declarations "")
foreach(header IN LISTS HEADER)
  file(READ ${header} header_text)
  string(REGEX MATCHALL "XGEMV_API[^(]*[ *](xgemv_[a-z0-9_]+)\\(" header_declarations
    "${header_text}")
  list(APPEND declarations ${header_declarations})
endforeach()
set(declared "")
foreach(declaration IN LISTS declarations)
  string(REGEX MATCH "(xgemv_[a-z0-9_]+)\\($" name "${declaration}")
  list(APPEND declared ${CMAKE_MATCH_1})
endforeach()
list(SORT declared)

set(unexpected ${exported})
list(REMOVE_ITEM unexpected ${declared})
set(missing ${declared})
list(REMOVE_ITEM missing ${exported})
list(LENGTH declared declared_count)
if(declared_count LESS MIN_DECLARATIONS)
  message(FATAL_ERROR "found only ${declared_count} declarations in ${HEADER}: ${declared}")
endif()
if(unexpected)
  message(FATAL_ERROR "exported beyond the public headers: ${unexpected}")
endif()
if(missing)
  message(FATAL_ERROR "declared in the headers but not exported: ${missing}")
endif()

execute_process(COMMAND ${OBJDUMP} -p ${LIBRARY}
  OUTPUT_VARIABLE dynamic_section COMMAND_ERROR_IS_FATAL ANY)
string(REGEX MATCHALL "NEEDED +[^\n]+" needed "${dynamic_section}")
list(TRANSFORM needed REPLACE "NEEDED +" "")
if(needed MATCHES "libcublas")
  message(FATAL_ERROR "${LIBRARY} depends on cuBLAS: ${needed}")
endif()
if(DEFINED NEEDED AND NOT needed MATCHES "${NEEDED}")
  message(FATAL_ERROR "${LIBRARY} does not depend on ${NEEDED}: ${needed}")
endif()
if(NOT dynamic_section MATCHES "SONAME +${SONAME}\n")
  message(FATAL_ERROR "SONAME is not ${SONAME}")
endif()
message(STATUS "${declared_count} xgemv_* functions exported, nothing else; SONAME ${SONAME}; needs ${needed}")
