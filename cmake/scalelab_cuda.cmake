# Whether to build the CUDA backend (engine/backend/cuda), which needs the CUDA toolkit 12 or
# newer, cuDNN 9 and NCCL 2.13 or newer. SCALELAB_CUDA=AUTO builds it when all three are found, ON stops the
# configuration when one is missing, OFF leaves it out. Included from the top-level
# CMakeLists.txt (enable_language must run there); sets SCALELAB_WITH_CUDA and, when that is ON,
# the CUDA language. CUDNN_LIBRARY/NCCL_LIBRARY and their include folders are found here, for the
# layers and the communicator that will link them.
set(SCALELAB_CUDA AUTO CACHE STRING
    "Build the CUDA backend: AUTO (when CUDA 12+, cuDNN 9 and NCCL 2.13+ are found), ON or OFF")
set_property(CACHE SCALELAB_CUDA PROPERTY STRINGS AUTO ON OFF)
if(NOT SCALELAB_CUDA MATCHES "^(AUTO|ON|OFF)$")
    message(FATAL_ERROR "SCALELAB_CUDA is '${SCALELAB_CUDA}': use AUTO, ON or OFF")
endif()

# Finds `header` and `library` of a library NVIDIA ships apart from the toolkit, looking next to
# the toolkit first, and checks that `version_header` defines <prefix>_MAJOR as `major` and
# <prefix>_MINOR as at least `min_minor`. Sets <prefix>_VERSION, and appends what is wrong, if
# anything, to scalelab_cuda_missing.
function(scalelab_find_cuda_library prefix title header library version_header major min_minor)
    find_path(${prefix}_INCLUDE_DIR ${header} HINTS ${CUDAToolkit_INCLUDE_DIRS}
              DOC "Folder of ${title}'s ${header}")
    find_library(${prefix}_LIBRARY ${library} HINTS ${CUDAToolkit_LIBRARY_DIR}
                 DOC "${title}'s lib${library}")
    set(version_file "${${prefix}_INCLUDE_DIR}/${version_header}")
    if(NOT (${prefix}_INCLUDE_DIR AND ${prefix}_LIBRARY AND EXISTS "${version_file}"))
        set(hint "set ${prefix}_INCLUDE_DIR and ${prefix}_LIBRARY")
        list(APPEND scalelab_cuda_missing
             "${title} ${major}.${min_minor}+ (${header}, lib${library}: ${hint})")
        set(scalelab_cuda_missing "${scalelab_cuda_missing}" PARENT_SCOPE)
        return()
    endif()
    file(STRINGS "${version_file}" major_line REGEX "^#define ${prefix}_MAJOR +[0-9]+")
    file(STRINGS "${version_file}" minor_line REGEX "^#define ${prefix}_MINOR +[0-9]+")
    string(REGEX REPLACE "[^0-9]*([0-9]+).*" "\\1" found_major "${major_line}")
    string(REGEX REPLACE "[^0-9]*([0-9]+).*" "\\1" found_minor "${minor_line}")
    set(${prefix}_VERSION "${found_major}.${found_minor}" PARENT_SCOPE)
    if(NOT found_major STREQUAL "${major}" OR found_minor LESS min_minor)
        set(found "found version '${found_major}.${found_minor}' in ${version_file}")
        list(APPEND scalelab_cuda_missing "${title} ${major}.${min_minor}+ (${found})")
        set(scalelab_cuda_missing "${scalelab_cuda_missing}" PARENT_SCOPE)
    endif()
endfunction()

set(SCALELAB_WITH_CUDA OFF)
if(NOT SCALELAB_CUDA STREQUAL "OFF")
    set(scalelab_cuda_missing "")
    # FindCUDAToolkit looks at CUDAToolkit_ROOT, CUDA_PATH, nvcc on the PATH, then /usr/local/cuda.
    find_package(CUDAToolkit 12 QUIET)
    if(NOT CUDAToolkit_FOUND)
        if(CUDAToolkit_VERSION)
            list(APPEND scalelab_cuda_missing
                 "the CUDA toolkit 12 or newer (found ${CUDAToolkit_VERSION})")
        else()
            list(APPEND scalelab_cuda_missing
                 "the CUDA toolkit 12 or newer (set CUDAToolkit_ROOT to its folder)")
        endif()
    endif()
    scalelab_find_cuda_library(CUDNN cuDNN cudnn.h cudnn cudnn_version.h 9 0)
    # 2.13: ncclGetLastError, the words behind an NCCL error.
    scalelab_find_cuda_library(NCCL NCCL nccl.h nccl nccl.h 2 13)

    if(scalelab_cuda_missing)
        list(JOIN scalelab_cuda_missing "; " missing_text)
        if(SCALELAB_CUDA STREQUAL "ON")
            message(FATAL_ERROR "SCALELAB_CUDA is ON, but the CUDA backend needs what was not "
                                "found: ${missing_text}. Install it, or configure with "
                                "-DSCALELAB_CUDA=OFF for a CPU-only build.")
        endif()
        message(STATUS "CUDA backend: not built, missing ${missing_text}")
    else()
        set(SCALELAB_WITH_CUDA ON)
        message(STATUS "CUDA backend: built with CUDA ${CUDAToolkit_VERSION}, "
                       "cuDNN ${CUDNN_VERSION}, NCCL ${NCCL_VERSION}")
    endif()
endif()

if(SCALELAB_WITH_CUDA)
    # Compile with the toolkit that was found, also when its nvcc is not on the PATH.
    if(NOT CMAKE_CUDA_COMPILER)
        set(CMAKE_CUDA_COMPILER "${CUDAToolkit_NVCC_EXECUTABLE}")
    endif()
    # Machine code for the A100 (8.0, which also runs on 8.6 and 8.9) and the H100 (9.0), and
    # PTX of 9.0 that the driver compiles for newer GPUs.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
        set(CMAKE_CUDA_ARCHITECTURES "80-real;90-real;90-virtual" CACHE STRING
            "GPU architectures to compile the CUDA backend's kernels for")
    endif()
    enable_language(CUDA)
    # C++20 for .cu files as for the rest (engine headers use it). CMake 3.25 predates nvcc's
    # C++20 support (CUDA 12) and would refuse CUDA_STANDARD 20: it is told the flag here.
    if(CMAKE_CUDA_COMPILER_ID STREQUAL "NVIDIA" AND NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
        set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
        set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
        set(CMAKE_CUDA20_COMPILE_FEATURES cuda_std_20)
        list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
    endif()
    set(CMAKE_CUDA_STANDARD 20)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(CMAKE_CUDA_EXTENSIONS OFF)
endif()
