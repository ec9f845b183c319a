# nlohmann/json (header only), through which the harness writes its result file and listings
# (fixtures/detail/support/json_text.h). The system's package (Debian's nlohmann-json3-dev, which
# tools/install-deps installs), else the json.hpp beside cudnn-frontend's headers, where
# cudnn-frontend's own includes find it (CUDNN_FRONTEND_ROOT, $CUBENCH_CUDNN_FRONTEND_ROOT,
# tools/install-deps' folder: a machine without Debian's archive carries it there). 3.9 is the
# first with ordered_json, which keeps members in the order they are written.
# Defines the target nlohmann_json::nlohmann_json, or stops configure saying where to get it.
macro(cubench_find_nlohmann_json)
  find_package(nlohmann_json 3.9 CONFIG QUIET)
  if(NOT TARGET nlohmann_json::nlohmann_json)
    find_path(CUBENCH_JSON_INCLUDE_DIR nlohmann/json.hpp
      HINTS ${CUDNN_FRONTEND_ROOT} $ENV{CUBENCH_CUDNN_FRONTEND_ROOT} /opt/cudnn-frontend-debian
      PATH_SUFFIXES include)
    if(NOT CUBENCH_JSON_INCLUDE_DIR)
      message(FATAL_ERROR "cubench: nlohmann/json.hpp not found (the harness writes its JSON "
                          "through it): tools/install-deps installs it (Debian's "
                          "nlohmann-json3-dev), or set CUDNN_FRONTEND_ROOT to a folder whose "
                          "include/ holds nlohmann/json.hpp")
    endif()
    add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
    set_target_properties(nlohmann_json::nlohmann_json PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${CUBENCH_JSON_INCLUDE_DIR}")
    message(STATUS "cubench: nlohmann/json from ${CUBENCH_JSON_INCLUDE_DIR}")
  endif()
endmacro()
