# docs/adding-a-benchmark.md shows each of the example's files whole, as a ```cpp block holding
# exactly the file's text, so what a reader copies is what ctest builds
# (contract.walkthrough_family_registers_from_one_file).
#   -DSOURCE_DIR=<repository root>
file(READ "${SOURCE_DIR}/docs/adding-a-benchmark.md" doc)
set(missing "")
foreach(rel kernels/scale.h kernels/scale.cu benchmarks/scale.cpp)
  file(READ "${SOURCE_DIR}/docs/examples/scale/${rel}" text)
  string(FIND "${doc}" "```cpp\n${text}```" at)
  if(at EQUAL -1)
    list(APPEND missing "docs/examples/scale/${rel}")
  endif()
endforeach()
if(missing)
  message(FATAL_ERROR "docs/adding-a-benchmark.md does not show these files whole, as they are: ${missing}")
endif()
