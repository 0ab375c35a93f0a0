# One pass test on IR text: runs `evoc opt INPUT --passes=PASSES` and checks
# that it prints exactly EXPECTED (tests/compiler/opt/text/NAME.expected).
execute_process(COMMAND ${EVOC} opt ${INPUT} --passes=${PASSES}
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "evoc opt ${INPUT} --passes=${PASSES} failed (${rc}):\n${err}")
endif()
file(READ ${EXPECTED} want)
if(NOT out STREQUAL want)
  message(FATAL_ERROR "evoc opt ${INPUT} --passes=${PASSES} printed:\n${out}\nexpected (${EXPECTED}):\n${want}")
endif()
