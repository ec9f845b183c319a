# Source files are found, never listed: cubench_sources(<var> <glob>...) collects the files the
# globs match and keeps the optional ones only where their library was found:
#   name.<lib>.cpp     needs <lib>: kept when CUBENCH_HAVE_<LIB> is ON, else left out with a
#                      configure message (benchmarks/allreduce.nccl.cpp, resnet50_train.torch.cpp)
#   name.no_<lib>.cpp  the stand-in used where <lib> is missing (fixtures/detail/process/world.no_mpi.cpp)
# A new optional library is then one cubench_optional_package call in CMakeLists.txt
# (cmake/OptionalPackage.cmake: the CUBENCH_WITH_<LIB> option, the search, CUBENCH_HAVE_<LIB>)
# and its targets appended to CUBENCH_OPTIONAL_TARGETS; its files need no edit here.
# CUBENCH_<LIB>_WHY_NOT may say in one line why the library is missing: set where the search
# failed (cubench_optional_package), or by a preset that turns the library off.
#
# Each library a left-out benchmarks/ file needs is noted, with that line, for the run context
# (cubench_note_not_built; context key "not_built"): a comparison of two builds then says why a
# family is missing from one of them.
function(cubench_note_not_built lib why)
  # One list element (no ';', no brackets, which CMake's lists pair up) and one line of JSON.
  string(REGEX REPLACE "[;]" "," why "${why}")
  string(REGEX REPLACE "[][\t\r\n]" " " why "${why}")
  get_property(noted GLOBAL PROPERTY CUBENCH_NOT_BUILT)
  if(NOT "${noted}" MATCHES "(^|;)${lib}=")
    set_property(GLOBAL APPEND PROPERTY CUBENCH_NOT_BUILT "${lib}=${why}")
  endif()
endfunction()

# generated/not_built.h: CUBENCH_NOT_BUILT_JSON, a JSON object {"<lib>": "<why>"} of the notes.
function(cubench_write_not_built output)
  get_property(noted GLOBAL PROPERTY CUBENCH_NOT_BUILT)
  set(json "")
  set(sep "")
  foreach(entry IN LISTS noted)
    string(REGEX MATCH "^([^=]*)=(.*)$" _ "${entry}")
    set(why "${CMAKE_MATCH_2}")
    string(REPLACE [[\]] [[\\]] why "${why}")
    string(REPLACE [["]] [[\"]] why "${why}")
    string(APPEND json "${sep}\"${CMAKE_MATCH_1}\": \"${why}\"")
    set(sep ", ")
  endforeach()
  set(json "{${json}}")
  # The JSON text as a C string literal.
  string(REPLACE [[\]] [[\\]] literal "${json}")
  string(REPLACE [["]] [[\"]] literal "${literal}")
  file(CONFIGURE OUTPUT "${output}" @ONLY CONTENT [[#pragma once
// Written by CMake at configure time (cmake/OptionalSources.cmake): the optional libraries this
// build left its benchmark families out for, and why.
#define CUBENCH_NOT_BUILT_JSON "@literal@"
]])
endfunction()

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
        if(CUBENCH_${lib}_WHY_NOT)
          cubench_note_not_built(${needs} "${CUBENCH_${lib}_WHY_NOT}")
        else()
          cubench_note_not_built(${needs} "${needs} is off in this build (CUBENCH_WITH_${lib}=OFF)")
        endif()
      elseif(shown MATCHES "^benchmarks/")
        message(STATUS "cubench: ${shown} left out: ${needs} not found (CUBENCH_HAVE_${lib} is OFF)")
        if(CUBENCH_${lib}_WHY_NOT)
          cubench_note_not_built(${needs} "${CUBENCH_${lib}_WHY_NOT}")
        else()
          cubench_note_not_built(${needs} "${needs} not found when this build was configured")
        endif()
      endif()
    else()
      list(APPEND kept "${file}")
    endif()
  endforeach()
  set(${var} ${kept} PARENT_SCOPE)
endfunction()
