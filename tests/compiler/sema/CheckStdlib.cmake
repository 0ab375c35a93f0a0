# Runs `evoc check --Werror` on every .evo file of the stdlib, each on its
# own, and fails unless every one passes (CTest script); the files are listed
# when the test runs, so a new stdlib file is covered without an edit here:
#   cmake -DEVOC=path -DSTDLIB=dir -P CheckStdlib.cmake
file(GLOB_RECURSE files "${STDLIB}/*.evo")
list(LENGTH files n)
if(n LESS 20)
  message(FATAL_ERROR "only ${n} .evo files under ${STDLIB}")
endif()
set(failed "")
foreach(f IN LISTS files)
  execute_process(COMMAND ${EVOC} check --Werror ${f}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(APPEND failed "evoc check --Werror ${f}: exit code ${rc}\n${out}${err}\n")
  endif()
endforeach()
if(failed)
  message(FATAL_ERROR "${failed}")
endif()
message(STATUS "evoc check: the ${n} stdlib files pass on their own")
