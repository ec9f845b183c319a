# Runs TOOL with ARGS (a ;-list) in WORKDIR and checks that it failed the way every cubench tool
# must on bad input: exit status EXPECT_CODE, exactly one line on stderr, matching EXPECT_REGEX,
# no traceback; and, where NO_FILE is set, that it left no such file behind.
execute_process(COMMAND "${TOOL}" ${ARGS} WORKING_DIRECTORY "${WORKDIR}"
                RESULT_VARIABLE code OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT code EQUAL EXPECT_CODE)
  message(FATAL_ERROR "exit status ${code}, expected ${EXPECT_CODE}; stderr:\n${err}")
endif()
string(REGEX MATCHALL "\n" newlines "${err}")
list(LENGTH newlines n)
if(NOT n EQUAL 1 OR NOT err MATCHES "\n$")
  message(FATAL_ERROR "expected exactly one line on stderr, got ${n} newline(s):\n${err}")
endif()
string(REGEX REPLACE "\n$" "" line "${err}")  # so that $ in EXPECT_REGEX ends the line
if(NOT line MATCHES "${EXPECT_REGEX}")
  message(FATAL_ERROR "stderr does not match '${EXPECT_REGEX}':\n${err}")
endif()
if(err MATCHES "Traceback")
  message(FATAL_ERROR "a traceback:\n${err}")
endif()
if(NO_FILE AND NOT IS_ABSOLUTE "${NO_FILE}")
  set(NO_FILE "${WORKDIR}/${NO_FILE}")
endif()
if(NO_FILE AND EXISTS "${NO_FILE}")
  file(REMOVE_RECURSE "${NO_FILE}")
  message(FATAL_ERROR "it left ${NO_FILE} behind")
endif()
