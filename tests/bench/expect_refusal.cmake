# Runs a command that must refuse: a non-zero exit and exactly one line of output (stdout and
# stderr together), which matches EXPECTED.
# Usage: cmake "-DCOMMAND=program;arg;..." -DEXPECTED=<regex> -P expect_refusal.cmake
foreach(var COMMAND EXPECTED)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "expect_refusal.cmake: -D${var}=... is required")
  endif()
endforeach()

execute_process(COMMAND ${COMMAND} RESULT_VARIABLE result
  OUTPUT_VARIABLE output ERROR_VARIABLE output)
string(REGEX REPLACE "\n$" "" text "${output}")
if(result EQUAL 0)
  message(FATAL_ERROR "exited 0; output:\n${output}")
endif()
if(text MATCHES "\n")
  message(FATAL_ERROR "more than one line (exit ${result}):\n${output}")
endif()
if(NOT text MATCHES "${EXPECTED}")
  message(FATAL_ERROR "output does not match '${EXPECTED}' (exit ${result}):\n${output}")
endif()
message(STATUS "exit ${result}: ${text}")
