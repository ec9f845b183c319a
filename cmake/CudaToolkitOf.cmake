# cubench_cuda_toolkit_of(PATH VAR): sets VAR to the CUDA toolkit folder PATH lies in (resolved,
# without symlinks), or to "" where it lies in none. A toolkit folder is the nearest one above PATH
# that holds bin/nvcc and include/cuda_runtime.h: /usr/local/cuda-13.0, /opt/cuda-12.4-debian
# (Debian's layout, unpacked by tools/install-deps), /usr with Debian's nvidia-cuda-toolkit; not
# /usr/local, whose bin may hold wrappers of another toolkit's nvcc but whose include has no CUDA.
# FindNCCL uses it to pass over an NCCL of another toolkit than the build's; tests/CMakeLists.txt
# (build.one_toolkit) checks the built binaries the same way.
function(cubench_cuda_toolkit_of path var)
  set(dir "${path}")
  set(found "")
  while(NOT found)
    get_filename_component(parent "${dir}" DIRECTORY)
    if(parent STREQUAL dir OR parent STREQUAL "")
      break()
    endif()
    set(dir "${parent}")
    if(EXISTS "${dir}/bin/nvcc" AND EXISTS "${dir}/include/cuda_runtime.h")
      file(REAL_PATH "${dir}" found)
    endif()
  endwhile()
  set(${var} "${found}" PARENT_SCOPE)
endfunction()

# cubench_in_other_toolkit(VAR WHAT PATH...): sets VAR to one line saying which of the PATHs (a
# library's file, its include folder) lies in another CUDA toolkit's folder than the build's
# (CUDAToolkit_BIN_DIR's), or to "" where none does. WHAT names it in that line ("NCCL 2.28.9").
# FindNCCL and FindCUDNN pass such a library over.
function(cubench_in_other_toolkit var what)
  cubench_cuda_toolkit_of("${CUDAToolkit_BIN_DIR}/nvcc" ours)
  set(why "")
  foreach(path IN LISTS ARGN)
    cubench_cuda_toolkit_of("${path}" theirs)
    if(NOT why AND theirs AND NOT theirs STREQUAL ours)
      set(why "${what} at ${path} belongs to the CUDA toolkit at ${theirs}, not to this build's (${ours})")
    endif()
  endforeach()
  set(${var} "${why}" PARENT_SCOPE)
endfunction()
