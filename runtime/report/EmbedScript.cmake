# Turns the report's script (report.js) into a C++ header holding it as one
# raw string, so that the script is a real file (read, edited and checked
# with node --check by scripts/lint.sh) and the evoc binary still carries it
# (the report page must work with no file beside it). Run at build time:
#   cmake -DINPUT=report.js -DOUTPUT=ReportScriptText.h -P EmbedScript.cmake
# The file's leading '//' lines (its header comment) are left out: they
# describe the file, not the page.
file(READ "${INPUT}" text)
while(text MATCHES "^//")
  string(FIND "${text}" "\n" eol)
  if(eol LESS 0)
    set(text "")
    break()
  endif()
  math(EXPR eol "${eol} + 1")
  string(SUBSTRING "${text}" ${eol} -1 text)
endwhile()
set(delim "evoc_js")
string(FIND "${text}" ")${delim}\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains ')${delim}\"', which ends the raw string it is embedded in")
endif()
file(WRITE "${OUTPUT}"
  "// Generated from ${INPUT} by EmbedScript.cmake; edit the .js, not this.\n"
  "#pragma once\n\n"
  "namespace evoc::report {\n\n"
  "inline constexpr char kReportScriptText[] = R\"${delim}(${text})${delim}\";\n\n"
  "} // namespace evoc::report\n")
