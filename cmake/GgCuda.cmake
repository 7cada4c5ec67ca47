# gg_enable_cuda(): in the calling directory (a macro, so the scope is the caller's), enables
# CUDA with CUDA 13's nvcc (found at /usr/local/cuda when not on PATH), architectures given per
# target (-gencode), the toolkit's imported targets (CUDA::cudart, ...), none of the project's
# gcc warning flags, and gg_cuda_warn: the same warnings for nvcc, as errors under
# GG_FATAL_WARNINGS.
macro(gg_enable_cuda)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  set(CMAKE_CUDA_ARCHITECTURES OFF)
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  set_property(DIRECTORY PROPERTY COMPILE_OPTIONS "")
  set(gg_cuda_warn -Xcompiler=-Wall,-Wextra)
  if(GG_FATAL_WARNINGS)
    list(APPEND gg_cuda_warn -Werror=all-warnings -Xcompiler=-Werror)
  endif()
endmacro()
