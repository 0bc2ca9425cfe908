# cmake -DNM=<nm> -DMODULE=<libscalelab_cuda.so> -P gpu_module_exports.cmake
# The GPU module keeps its copies of the engine's code to itself: its one exported function of
# ScaleLab's is scalelab_cuda_module(). Were the engine's functions exported too, then in a
# program that exports its own (linked with -rdynamic, say) the dynamic linker would bind the
# module's calls to the program's copies: which code and which static state the module used
# would depend on how the program was linked.
execute_process(COMMAND ${NM} --dynamic --defined-only ${MODULE}
                OUTPUT_VARIABLE symbols ERROR_VARIABLE errors RESULT_VARIABLE status)
if(NOT status EQUAL 0)
    message(FATAL_ERROR "${NM} could not read ${MODULE}: ${errors}")
endif()
string(REPLACE "\n" ";" lines "${symbols}")
set(entry_points "")
set(engine_exports "")
foreach(line IN LISTS lines)
    # "<address> <type> <name>": functions (T, W) and data (B, D, R) defined in the module.
    # Template instantiations of the standard library's (type V, u) are the C++ runtime's.
    if(line MATCHES "^[0-9a-f]+ [TWBDR] (.*)$")
        set(name "${CMAKE_MATCH_1}")
        if(name STREQUAL "scalelab_cuda_module")
            list(APPEND entry_points "${name}")
        elseif(name MATCHES "scalelab")
            list(APPEND engine_exports "${name}")
        endif()
    endif()
endforeach()
if(NOT entry_points)
    message(FATAL_ERROR "${MODULE} does not export scalelab_cuda_module")
endif()
if(engine_exports)
    list(LENGTH engine_exports count)
    list(JOIN engine_exports "\n  " listed)
    message(FATAL_ERROR "${MODULE} exports ${count} of ScaleLab's own symbols besides "
                        "scalelab_cuda_module (link it with --exclude-libs,ALL):\n  ${listed}")
endif()
message(STATUS "${MODULE} exports scalelab_cuda_module and none of the engine's code")
