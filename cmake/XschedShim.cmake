# Generated files and the shims' common shape.
#
# Convention: a file generated from a table sits next to that table's
# consumer as a template <name>.in that includes the table (a .def of
# X-macro rows) and says what each row becomes; xs_generate() expands it
# with the C preprocessor into the build tree. Nothing but the C compiler
# and CMake is needed, and the generated file can never disagree with what
# the compiler sees of the same table.

# xs_generate(<output> <template>): <output> (in the build tree) is
# <template> run through the C preprocessor (-E -P, include path src/),
# regenerated when the template or anything it includes changes.
function(xs_generate out template)
  get_filename_component(_name ${out} NAME)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_C_COMPILER} -E -P -x c -I${PROJECT_SOURCE_DIR}/src
            -MD -MF ${out}.d -MT ${out} ${template} -o ${out}
    DEPENDS ${template}
    DEPFILE ${out}.d
    COMMENT "Generating ${_name}" VERBATIM)
endfunction()

# xs_add_shim(<target> NAME <output name> SONAME <vendor soname>
#             MAP <version script template> SOURCES <sources...>
#             [INCLUDES <system include dirs...>])
# A shim: a shared library lib<output name>.so carrying the vendor
# library's SONAME, exporting exactly what its version script (generated
# from MAP) lists, with the common shim code, linked with
# -Bsymbolic-functions (its own calls never go through an interposer) and
# --no-undefined; installed in <libdir>/xsched. It never links the vendor
# library: that is opened at run time.
function(xs_add_shim target)
  cmake_parse_arguments(S "" "NAME;SONAME;MAP" "SOURCES;INCLUDES" ${ARGN})
  set(_map ${CMAKE_CURRENT_BINARY_DIR}/lib${S_NAME}.map)
  xs_generate(${_map} ${CMAKE_CURRENT_SOURCE_DIR}/${S_MAP})
  add_library(${target} SHARED ${S_SOURCES} ${_map}
    ${PROJECT_SOURCE_DIR}/src/shim/common/shim_lib.c)
  set_target_properties(${target} PROPERTIES OUTPUT_NAME ${S_NAME} NO_SONAME ON
    LINK_DEPENDS ${_map})
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  if(S_INCLUDES)
    target_include_directories(${target} SYSTEM PRIVATE ${S_INCLUDES})
  endif()
  target_link_libraries(${target} PRIVATE xsched_core ${CMAKE_DL_LIBS} Threads::Threads)
  target_link_options(${target} PRIVATE
    -Wl,-soname,${S_SONAME}
    -Wl,--version-script=${_map}
    -Wl,-Bsymbolic-functions
    -Wl,--no-undefined)
  install(TARGETS ${target} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/xsched)
endfunction()
