# Run at build time (cmake -P) so the revision in the run context is the one actually built,
# not the one at configure time. Rewrites the header only when the revision changes.
execute_process(COMMAND git describe --always --dirty --abbrev=12
  WORKING_DIRECTORY "${SOURCE_DIR}" OUTPUT_VARIABLE rev ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rev AND DEFINED ENV{CUBENCH_GIT_REVISION})
  # A copy of the tree without .git (the GPU machine's): the caller says which commit it is.
  set(rev "$ENV{CUBENCH_GIT_REVISION} (from CUBENCH_GIT_REVISION)")
endif()
if(NOT rev)
  set(rev "unknown")
endif()
set(content "#pragma once\n#define CUBENCH_GIT_REVISION \"${rev}\"\n")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT "${old}" STREQUAL "${content}")
  file(WRITE "${OUTPUT}" "${content}")
endif()
