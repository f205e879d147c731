# An interface library exports only its own ABI and carries its SONAME: every defined dynamic
# symbol matches EXPORTS (a regex), each of REQUIRED is among them, and no NEEDED entry matches
# NOT_NEEDED (a regex; optional).
# Usage: cmake -DLIBRARY=<lib.so> -DSONAME=<lib.so.N> -DEXPORTS=<regex> "-DREQUIRED=a;b"
#              [-DNOT_NEEDED=<regex>] -DNM=<nm> -DOBJDUMP=<objdump> -P check_library.cmake
foreach(var LIBRARY SONAME EXPORTS REQUIRED NM OBJDUMP)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_library.cmake: -D${var}=... is required")
  endif()
endforeach()

include(${CMAKE_CURRENT_LIST_DIR}/../support/dynamic_symbols.cmake)
xgemv_defined_dynamic_symbols(${NM} ${LIBRARY} exported)
set(unexpected ${exported})
list(FILTER unexpected EXCLUDE REGEX "${EXPORTS}")
if(unexpected)
  message(FATAL_ERROR "${LIBRARY} exports beyond '${EXPORTS}': ${unexpected}")
endif()
set(missing ${REQUIRED})
list(REMOVE_ITEM missing ${exported})
if(missing)
  message(FATAL_ERROR "${LIBRARY} does not export ${missing}")
endif()

execute_process(COMMAND ${OBJDUMP} -p ${LIBRARY}
  OUTPUT_VARIABLE dynamic_section COMMAND_ERROR_IS_FATAL ANY)
if(NOT dynamic_section MATCHES "SONAME +${SONAME}\n")
  message(FATAL_ERROR "${LIBRARY}: SONAME is not ${SONAME}")
endif()
string(REGEX MATCHALL "NEEDED +[^\n]+" needed "${dynamic_section}")
list(TRANSFORM needed REPLACE "NEEDED +" "")
if(DEFINED NOT_NEEDED AND needed MATCHES "${NOT_NEEDED}")
  message(FATAL_ERROR "${LIBRARY} needs ${needed}")
endif()
list(LENGTH exported count)
message(STATUS "${count} symbols exported, all matching '${EXPORTS}'; SONAME ${SONAME}; needs ${needed}")
