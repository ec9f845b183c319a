# Run at build time (cmake -P) so the revision in the run context is the one actually built,
# not the one at configure time. Rewrites the header only when the revision changes.
# The caller's word comes first: a copy of the tree placed inside another git checkout (the GPU
# machine's sits in a checkout of an older commit) would report that checkout's revision, not the
# one built.
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
