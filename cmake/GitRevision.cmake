# Run at build time (cmake -P) so the revision in the run context is the one actually built,
# not the one at configure time. Rewrites the header only when the revision changes.
# The caller's word comes first: the GPU machine's copy of the tree sits in a git checkout of an
# older commit (its files JSON said bb3e282d8f68-dirty for builds of later commits, 2026-12-03).
if(DEFINED ENV{CUBENCH_GIT_REVISION} AND NOT "$ENV{CUBENCH_GIT_REVISION}" STREQUAL "")
  set(rev "$ENV{CUBENCH_GIT_REVISION} (from CUBENCH_GIT_REVISION)")
else()
  execute_process(COMMAND git describe --always --dirty --abbrev=12
    WORKING_DIRECTORY "${SOURCE_DIR}" OUTPUT_VARIABLE rev ERROR_QUIET
    OUTPUT_STRIP_TRAILING_WHITESPACE)
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
