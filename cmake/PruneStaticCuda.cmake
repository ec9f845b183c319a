# With CUBENCH_STATIC_CUDA: copies of the static CUDA libraries pruned by nvprune to the
# architectures we build for, linked in place of the originals (their imported targets are
# pointed at the copies), and the binary stripped after linking. Device code for every other GPU
# is most of what the static libraries weigh.
function(cubench_prune_static_cuda)
  find_program(CUBENCH_NVPRUNE nvprune HINTS "${CUDAToolkit_BIN_DIR}" REQUIRED)
  set(gencode "")
  # The architectures as numbers (native's as CMake detected them): nvprune takes no "native".
  set(architectures "${CUBENCH_CUDA_REAL_ARCHITECTURES}")
  if(NOT architectures)
    set(architectures "${CMAKE_CUDA_ARCHITECTURES}")
  endif()
  foreach(arch IN LISTS architectures)
    string(REGEX REPLACE "[-].*" "" arch "${arch}")
    list(APPEND gencode -gencode arch=compute_${arch},code=sm_${arch})
  endforeach()
  set(outputs "")
  foreach(lib cublas_static cublasLt_static cusolver_static cusparse_static)
    if(NOT TARGET CUDA::${lib})
      continue()
    endif()
    get_target_property(original CUDA::${lib} IMPORTED_LOCATION)
    get_filename_component(name "${original}" NAME)
    set(pruned "${PROJECT_BINARY_DIR}/pruned/${name}")
    add_custom_command(OUTPUT "${pruned}"
      COMMAND ${CMAKE_COMMAND} -E make_directory "${PROJECT_BINARY_DIR}/pruned"
      COMMAND ${CUBENCH_NVPRUNE} ${gencode} "${original}" -o "${pruned}"
      DEPENDS "${original}"
      COMMENT "nvprune ${name} to ${CMAKE_CUDA_ARCHITECTURES}")
    set_target_properties(CUDA::${lib} PROPERTIES IMPORTED_LOCATION "${pruned}")
    list(APPEND outputs "${pruned}")
  endforeach()
  add_custom_target(cubench_pruned_cuda DEPENDS ${outputs})
endfunction()
