# cubench_optional_package(<LIB> <Package> <doc>
#                          [FIND_ARGS <arg>...] [FOUND_VAR <var>] [AUTO_IF <var>]
#                          [NOT_USED <text>] [NOT_FOUND <text>...] [WHY_NOT <text>])
#
# One optional library, the same way for each (NCCL, cuDNN, MPI, LibTorch), so that a user and a
# preset turn any of them on or off alike and a build says alike why one is missing:
# - the cache option CUBENCH_WITH_<LIB> = AUTO (the default), ON or OFF, <doc> its help text;
# - OFF: not looked for; ON: find_package(<Package> REQUIRED <FIND_ARGS>), a missing library
#   stops the configure with find_package's own error; AUTO: find_package(<Package> QUIET
#   <FIND_ARGS>), and only where the variable AUTO_IF names is true (MPI: where a launcher is);
# - CUBENCH_HAVE_<LIB> is ON where <FOUND_VAR> (default <Package>_FOUND) is true, else OFF: what
#   cubench_sources (OptionalSources.cmake) keeps name.<lib>.cpp files by, and what the
#   CMakeLists.txt files link and add tests by;
# - where it is not OFF and no library was taken, a "-- cubench: ..." configure line says why, and
#   CUBENCH_<LIB>_WHY_NOT gets the one-line reason the run context's "not_built" gives for the
#   families left out:
#     the find module found one and passed it over (<Package>_NOT_USED, read only where NOT_USED
#     is given: NCCL, cuDNN): the line is "<Package>_NOT_USED: <NOT_USED>", the reason
#     <Package>_NOT_USED;
#     else: the line is the NOT_FOUND texts joined, the reason WHY_NOT (none where it is not
#     given: MPI, which leaves no family out).
#   A preset that turns a library OFF sets CUBENCH_<LIB>_WHY_NOT itself.
# What a found library adds (its "-- cubench:" line with version and path, LibTorch's CUDA
# check) stays at the call site, after this, under if(CUBENCH_HAVE_<LIB>).
#
# A macro, not a function: find_package's results (targets, <Package>_VERSION, TORCH_LIBRARIES,
# MPI's variables) and CUBENCH_HAVE_<LIB>, CUBENCH_<LIB>_WHY_NOT must land in the caller's scope,
# where the rest of the build reads them.
macro(cubench_optional_package lib package doc)
  cmake_parse_arguments(_cubench_opt "" "FOUND_VAR;AUTO_IF;NOT_USED;WHY_NOT"
                        "FIND_ARGS;NOT_FOUND" ${ARGN})
  if(_cubench_opt_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "cubench_optional_package(${lib}): unknown arguments "
                        "${_cubench_opt_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT DEFINED _cubench_opt_FOUND_VAR)
    set(_cubench_opt_FOUND_VAR ${package}_FOUND)
  endif()
  if(NOT DEFINED _cubench_opt_AUTO_IF)
    set(_cubench_opt_AUTO_IF TRUE)  # if(${_cubench_opt_AUTO_IF}) is then if(TRUE)
  endif()

  set(CUBENCH_WITH_${lib} AUTO CACHE STRING "${doc} (AUTO, ON, OFF)")
  set_property(CACHE CUBENCH_WITH_${lib} PROPERTY STRINGS AUTO ON OFF)
  set(CUBENCH_HAVE_${lib} OFF)
  if(NOT CUBENCH_WITH_${lib} STREQUAL "OFF")
    if(CUBENCH_WITH_${lib} STREQUAL "ON")
      find_package(${package} REQUIRED ${_cubench_opt_FIND_ARGS})
    elseif(${_cubench_opt_AUTO_IF})
      find_package(${package} QUIET ${_cubench_opt_FIND_ARGS})
    endif()
    if(${_cubench_opt_FOUND_VAR})
      set(CUBENCH_HAVE_${lib} ON)
    elseif(DEFINED _cubench_opt_NOT_USED AND ${package}_NOT_USED)
      message(STATUS "cubench: ${${package}_NOT_USED}: ${_cubench_opt_NOT_USED}")
      set(CUBENCH_${lib}_WHY_NOT "${${package}_NOT_USED}")
    else()
      list(JOIN _cubench_opt_NOT_FOUND "" _cubench_opt_NOT_FOUND)
      message(STATUS "cubench: ${_cubench_opt_NOT_FOUND}")
      if(DEFINED _cubench_opt_WHY_NOT)
        set(CUBENCH_${lib}_WHY_NOT "${_cubench_opt_WHY_NOT}")
      endif()
    endif()
  endif()

  foreach(_cubench_opt_var FOUND_VAR AUTO_IF NOT_USED WHY_NOT FIND_ARGS NOT_FOUND
                           UNPARSED_ARGUMENTS KEYWORDS_MISSING_VALUES)
    unset(_cubench_opt_${_cubench_opt_var})
  endforeach()
  unset(_cubench_opt_var)
endmacro()
