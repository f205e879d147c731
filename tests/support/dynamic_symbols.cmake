# The dynamic symbols a shared library defines, without their version suffix, for the export
# checks of every library (tests/core/cpu/check_exports.cmake, tests/interface/check_library.cmake).
function(xgemv_defined_dynamic_symbols nm library out_var)
  execute_process(COMMAND ${nm} -D --defined-only ${library}
    OUTPUT_VARIABLE nm_output COMMAND_ERROR_IS_FATAL ANY)
  string(REGEX MATCHALL "[^\n]+" nm_lines "${nm_output}")
  set(symbols "")
  foreach(line IN LISTS nm_lines)
    # "<address> <type> <name>[@version]"
    if(line MATCHES "^[0-9a-fA-F]+ [A-Za-z] ([^@ ]+)")
      list(APPEND symbols ${CMAKE_MATCH_1})
    endif()
  endforeach()
  set(${out_var} ${symbols} PARENT_SCOPE)
endfunction()
