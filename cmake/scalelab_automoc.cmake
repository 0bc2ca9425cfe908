# scalelab_automoc(<target>...): turns AUTOMOC on for the targets, with moc run through
# moc_without_compiler_includes.sh (see there why: a test's moc step goes from 4.6 s to 0.4 s).
get_target_property(qt_moc Qt6::moc LOCATION)
set(compiler_include_flags)
foreach(directory IN LISTS CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)
    string(APPEND compiler_include_flags " '-I${directory}'")
endforeach()
set(scalelab_moc ${PROJECT_BINARY_DIR}/moc_without_compiler_includes.sh)
configure_file(${CMAKE_CURRENT_LIST_DIR}/moc_without_compiler_includes.sh.in ${scalelab_moc}
               @ONLY FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ
               GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

function(scalelab_automoc)
    set_target_properties(${ARGN} PROPERTIES AUTOMOC ON AUTOMOC_EXECUTABLE ${scalelab_moc})
endfunction()
