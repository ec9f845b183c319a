# Source files are found, never listed: cubench_sources(<var> <glob>...) collects the files the
# globs match and keeps the optional ones only where their library was found:
#   name.<lib>.cpp     needs <lib>: kept when CUBENCH_HAVE_<LIB> is ON, else left out with a
#                      configure message (benchmarks/allreduce.nccl.cpp, resnet50_train.torch.cpp)
#   name.no_<lib>.cpp  the stand-in used where <lib> is missing (fixtures/detail/world.no_mpi.cpp)
# A new optional library is then one find_package that sets CUBENCH_HAVE_<LIB> and appends its
# targets to CUBENCH_OPTIONAL_TARGETS (CMakeLists.txt); its files need no edit here.
function(cubench_sources var)
  file(GLOB found CONFIGURE_DEPENDS ${ARGN})
  set(kept)
  foreach(file IN LISTS found)
    get_filename_component(name "${file}" NAME)
    file(RELATIVE_PATH shown "${PROJECT_SOURCE_DIR}" "${file}")
    if(name MATCHES "\\.no_([a-z0-9]+)\\.(cpp|cu)$")
      string(TOUPPER "${CMAKE_MATCH_1}" lib)
      if(NOT CUBENCH_HAVE_${lib})
        list(APPEND kept "${file}")
      endif()
    elseif(name MATCHES "\\.([a-z0-9]+)\\.(cpp|cu)$")
      set(needs "${CMAKE_MATCH_1}")  # the next MATCHES overwrites CMAKE_MATCH_1
      string(TOUPPER "${needs}" lib)
      if(CUBENCH_HAVE_${lib})
        list(APPEND kept "${file}")
      elseif(shown MATCHES "^benchmarks/" AND CUBENCH_WITH_${lib} STREQUAL "OFF")
        message(STATUS "cubench: ${shown} left out: ${needs} is off in this preset or by -D "
                       "(CUBENCH_WITH_${lib}=OFF)")
      elseif(shown MATCHES "^benchmarks/")
        message(STATUS "cubench: ${shown} left out: ${needs} not found (CUBENCH_HAVE_${lib} is OFF)")
      endif()
    else()
      list(APPEND kept "${file}")
    endif()
  endforeach()
  set(${var} ${kept} PARENT_SCOPE)
endfunction()
