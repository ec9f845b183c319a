# cmake/CudaArchitectures.cmake's choice, driven with the listings nvcc 11.8, 12.4 and 13.0 print
# (--list-gpu-arch) and what nvidia-smi says of a GPU: no GPU or toolkit needed.
include("${SOURCE_DIR}/cmake/CudaArchitectures.cmake")
set(failures "")
function(expect what got want)
  if(NOT "${got}" STREQUAL "${want}")
    set(failures "${failures}\n  ${what}: got '${got}', want '${want}'" PARENT_SCOPE)
  endif()
endfunction()

set(nvcc_118 "compute_35\ncompute_37\ncompute_50\ncompute_52\ncompute_53\ncompute_60\ncompute_61\n\
compute_62\ncompute_70\ncompute_72\ncompute_75\ncompute_80\ncompute_86\ncompute_87\ncompute_89\n\
compute_90\n")
set(nvcc_124 "compute_50\ncompute_52\ncompute_53\ncompute_60\ncompute_61\ncompute_62\ncompute_70\n\
compute_72\ncompute_75\ncompute_80\ncompute_86\ncompute_87\ncompute_89\ncompute_90\ncompute_90a\n")
# 13.0 lists 110 before 103; a later one lists family variants (compute_100f).
set(nvcc_130 "compute_75\ncompute_80\ncompute_86\ncompute_87\ncompute_88\ncompute_89\ncompute_90\n\
compute_100\ncompute_110\ncompute_103\ncompute_120\ncompute_121\ncompute_100f\ncompute_121a\n")

cubench_choose_cuda_architectures("${nvcc_118}" "" c)
expect("11.8, no GPU" "${c_ARCHITECTURES}" "75-real;80-real;86-real;87-real;89-real;90")
expect("11.8, machine code" "${c_REAL}" "75;80;86;87;89;90")
expect("11.8, PTX" "${c_PTX}" "90")
cubench_choose_cuda_architectures("${nvcc_124}" "" c)
expect("12.4, no GPU" "${c_ARCHITECTURES}" "75-real;80-real;86-real;87-real;89-real;90")
cubench_choose_cuda_architectures("${nvcc_130}" "" c)
expect("13.0, no GPU" "${c_ARCHITECTURES}"
       "75-real;80-real;86-real;87-real;88-real;89-real;90-real;100-real;103-real;110-real;120-real;121")
expect("13.0, PTX" "${c_PTX}" "121")
if(NOT c_WHY MATCHES "no GPU seen" OR NOT c_WHY MATCHES "PTX for 121")
  set(failures "${failures}\n  13.0's reason says neither why nor the PTX: ${c_WHY}")
endif()
cubench_choose_cuda_architectures("${nvcc_130}" "NVIDIA GeForce RTX 4090, 8.9\n" c)
expect("a GPU seen" "${c_ARCHITECTURES}" "native")
if(NOT c_WHY MATCHES "RTX 4090 \\(compute capability 8.9\\)")
  set(failures "${failures}\n  native's reason does not name the GPU: ${c_WHY}")
endif()
# A GPU this nvcc cannot build for: 12.4 and a Blackwell card, 13.0 and a V100. Not native (its
# code would not run there): the list, saying why.
cubench_choose_cuda_architectures("${nvcc_124}" "NVIDIA GeForce RTX 5090, 12.0\n" c)
expect("12.4 with a GPU it cannot build for" "${c_ARCHITECTURES}"
       "75-real;80-real;86-real;87-real;89-real;90")
if(NOT c_WHY MATCHES "RTX 5090 \\(compute capability 12.0\\), which this nvcc cannot build for")
  set(failures "${failures}\n  the list's reason does not say why not native: ${c_WHY}")
endif()
cubench_choose_cuda_architectures("${nvcc_130}" "Tesla V100-SXM2-16GB, 7.0\n" c)
expect("13.0 with a V100" "${c_ARCHITECTURES}"
       "75-real;80-real;86-real;87-real;88-real;89-real;90-real;100-real;103-real;110-real;120-real;121")
cubench_choose_cuda_architectures("${nvcc_124}" "NVIDIA H200, 9.0\nNVIDIA H100 PCIe, 9.0\n" c)
expect("two GPUs it can build for" "${c_ARCHITECTURES}" "native")
cubench_choose_cuda_architectures("compute_52\ncompute_70\n" "" c)
expect("a toolkit with nothing from 7.5 up" "${c_ARCHITECTURES}" "")

if(failures)
  message(FATAL_ERROR "the architecture choice is wrong:${failures}")
endif()
message("architecture choices as expected for 11.8, 12.4, 13.0 and a seen GPU")
