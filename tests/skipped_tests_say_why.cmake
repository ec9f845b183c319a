# What ctest runs after every run of this build's tests (CTEST_CUSTOM_POST_TEST, which
# tests/CMakeLists.txt writes into the build's CTestCustom.cmake), after its own summary: each test
# this run skipped, one line each, "<test>: <reason>", so that a run ends saying why. ctest's
# summary names a skipped test alone ("(Skipped)") and prints its output only with -V; the reason
# is read here from the run's log (Testing/Temporary), as the test said it:
#   - a GPU test's script: "SKIP (no GPU): <reason>" (gpu_skip.cmake);
#   - a Google Test: GTEST_SKIP's message, between "...: Skipped" and "[  SKIPPED ]";
#   - a script that prints "SKIP: <reason>" (check_cubins.cmake);
#   - else (a SKIP_RETURN_CODE test) the last line of its output.
#   -DDIR=<the build folder>
# It never fails: a post-test command that fails fails ctest's whole run.
set(tmp "${DIR}/Testing/Temporary")
set(log_file "${tmp}/LastTest.log.tmp")  # this run's log, which ctest renames only after this
if(NOT EXISTS "${log_file}")
  set(log_file "${tmp}/LastTest.log")
endif()
if(NOT EXISTS "${tmp}/LastTestsDisabled.log" OR NOT EXISTS "${log_file}")
  return()
endif()
file(READ "${log_file}" log)
file(STRINGS "${tmp}/LastTestsDisabled.log" entries)  # "<index>:<name>", skipped or disabled

set(divider "----------------------------------------------------------\n")
set(lines "")
foreach(entry IN LISTS entries)
  string(REGEX REPLACE "^[0-9]+:" "" name "${entry}")
  # The test's block in this run's log ("<i>/<n> Test: <name>"); a disabled test has none, and a
  # listing (ctest -N) logs no test, so a name from an earlier run is not said again.
  string(FIND "${log}" " Test: ${name}\n" at)
  if(at EQUAL -1)
    continue()
  endif()
  string(SUBSTRING "${log}" ${at} -1 block)
  string(FIND "${block}" "Output:\n${divider}" begin)
  string(FIND "${block}" "<end of output>" end)
  if(begin EQUAL -1 OR end EQUAL -1 OR end LESS begin)
    continue()
  endif()
  string(LENGTH "Output:\n${divider}" skip)
  math(EXPR begin "${begin} + ${skip}")
  math(EXPR length "${end} - ${begin}")
  string(SUBSTRING "${block}" ${begin} ${length} output)

  set(reason "")
  foreach(marker "SKIP (no GPU): " ": Skipped\n" "SKIP: ")
    string(FIND "${output}" "${marker}" found)
    if(NOT found EQUAL -1)
      string(LENGTH "${marker}" n)
      math(EXPR found "${found} + ${n}")
      string(SUBSTRING "${output}" ${found} -1 reason)
      # Up to the end of what the test said: Google Test's "[  SKIPPED ]", CMake's blank line
      # after a message (whose lines it wraps and indents) or its call stack.
      foreach(stop "\n[  SKIPPED ]" "\n\n" "\nCall Stack")
        string(FIND "${reason}" "${stop}" cut)
        if(NOT cut EQUAL -1)
          string(SUBSTRING "${reason}" 0 ${cut} reason)
        endif()
      endforeach()
      if(marker STREQUAL "SKIP (no GPU): ")
        set(reason "no usable CUDA GPU: ${reason}")
      endif()
      break()
    endif()
  endforeach()
  if(reason STREQUAL "")  # the last line it printed
    string(STRIP "${output}" reason)
    string(FIND "${reason}" "\n" cut REVERSE)
    if(NOT cut EQUAL -1)
      math(EXPR cut "${cut} + 1")
      string(SUBSTRING "${reason}" ${cut} -1 reason)
    endif()
  endif()
  string(REGEX REPLACE "[ \t\r\n]+" " " reason "${reason}")
  string(STRIP "${reason}" reason)
  if(reason STREQUAL "")
    set(reason "(it printed no reason)")
  endif()
  string(APPEND lines "\t${name}: ${reason}\n")
endforeach()
if(NOT lines STREQUAL "")
  string(REGEX REPLACE "\n$" "" lines "${lines}")
  execute_process(COMMAND "${CMAKE_COMMAND}" -E echo "\nWhy each skipped test did not run:\n${lines}")
endif()
