# Runs `evoc ARGS` and checks its exit code and output (CTest script):
#   cmake -DEVOC=path -DARGS="check;file.evo" -DRC=1 -DMATCH=regex -P RunEvoc.cmake
execute_process(COMMAND ${EVOC} ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL RC)
  message(FATAL_ERROR "evoc ${ARGS}: exit code ${rc}, expected ${RC}\n${out}${err}")
endif()
if(MATCH AND NOT "${out}${err}" MATCHES "${MATCH}")
  message(FATAL_ERROR "evoc ${ARGS}: output does not match '${MATCH}':\n${out}${err}")
endif()
