# The two target shapes every folder's CMakeLists.txt repeats: a layer's
# static library and a Catch2 test suite registered with CTest.

# evoc_library(<target> [INCLUDE <dir>] SOURCES <files...> [LINK <libs...>]):
# a static library built with EVOC_WARNINGS. INCLUDE is its public include
# root; LINK is linked PUBLIC (a PRIVATE keyword inside LINK passes through).
function(evoc_library target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "" "INCLUDE" "SOURCES;LINK")
  add_library(${target} STATIC ${ARG_SOURCES})
  if(ARG_INCLUDE)
    target_include_directories(${target} PUBLIC ${ARG_INCLUDE})
  endif()
  if(ARG_LINK)
    target_link_libraries(${target} PUBLIC ${ARG_LINK})
  endif()
  target_compile_options(${target} PRIVATE ${EVOC_WARNINGS})
endfunction()

# evoc_test(<test name> <target> SOURCES <files...> LINK <libs...>): a Catch2
# suite linked PRIVATE with LINK and evoc_test_main, built with EVOC_WARNINGS,
# and registered with CTest as <test name>.
function(evoc_test name target)
  cmake_parse_arguments(PARSE_ARGV 2 ARG "" "" "SOURCES;LINK;ARGS")
  add_executable(${target} ${ARG_SOURCES})
  target_link_libraries(${target} PRIVATE ${ARG_LINK} evoc_test_main)
  target_compile_options(${target} PRIVATE ${EVOC_WARNINGS})
  add_test(NAME ${name} COMMAND ${target} ${ARG_ARGS})
endfunction()
