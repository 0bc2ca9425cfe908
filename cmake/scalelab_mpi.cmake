# Whether processes started together by an MPI launcher (mpirun, srun) join into one run
# (engine/comm/mpi). SCALELAB_MPI=AUTO builds it when MPI (Debian: libopenmpi-dev) is found, ON
# stops the configuration when it is not, OFF leaves it out: every process then runs alone
# (engine/comm/launched_alone.cpp), as a program started without a launcher always does.
# Sets SCALELAB_WITH_MPI; included from the top-level CMakeLists.txt.
set(SCALELAB_MPI AUTO CACHE STRING "Join processes an MPI launcher starts: AUTO, ON or OFF")
set_property(CACHE SCALELAB_MPI PROPERTY STRINGS AUTO ON OFF)
if(NOT SCALELAB_MPI MATCHES "^(AUTO|ON|OFF)$")
    message(FATAL_ERROR "SCALELAB_MPI is '${SCALELAB_MPI}': use AUTO, ON or OFF")
endif()

set(SCALELAB_WITH_MPI OFF)
if(NOT SCALELAB_MPI STREQUAL "OFF")
    find_package(MPI COMPONENTS CXX QUIET)
    if(MPI_CXX_FOUND)
        set(SCALELAB_WITH_MPI ON)
        find_program(SCALELAB_MPIEXEC NAMES mpiexec mpirun HINTS ${MPI_CXX_COMPILER_DIR}
                     DOC "The MPI launcher the mpi tests start their processes with")
        message(STATUS "MPI: ${MPI_CXX_VERSION}, launcher ${SCALELAB_MPIEXEC}")
    elseif(SCALELAB_MPI STREQUAL "ON")
        message(FATAL_ERROR "SCALELAB_MPI=ON but MPI was not found: install libopenmpi-dev "
                            "(scripts/setup.sh does) or set SCALELAB_MPI=AUTO or OFF")
    else()
        message(STATUS "MPI: not found (libopenmpi-dev); processes run alone")
    endif()
endif()
