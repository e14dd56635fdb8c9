# Generated files and the shims' common shape.
#
# Convention: a file generated from a table sits next to that table's
# consumer as a template <name>.in that includes the table (a .def of
# X-macro rows) and says what each row becomes; xs_generate() expands it
# with the C preprocessor into the build tree. Nothing but the C compiler
# and CMake is needed, and the generated file can never disagree with what
# the compiler sees of the same table.

# xs_generate(<output> <template> [<macro>...]): <output> (in the build
# tree) is <template> run through the C preprocessor (-E -P, include path
# src/, each <macro> defined), regenerated when the template or anything it
# includes changes.
function(xs_generate out template)
  get_filename_component(_name ${out} NAME)
  list(TRANSFORM ARGN PREPEND -D OUTPUT_VARIABLE _defs)
  add_custom_command(OUTPUT ${out}
    COMMAND ${CMAKE_C_COMPILER} -E -P -x c -I${PROJECT_SOURCE_DIR}/src ${_defs}
            -MD -MF ${out}.d -MT ${out} ${template} -o ${out}
    DEPENDS ${template}
    DEPFILE ${out}.d
    COMMENT "Generating ${_name}" VERBATIM)
endfunction()

# xs_add_shim(<target> NAME <output name> SONAME <vendor soname>
#             MAP <version script template> SOURCES <sources...>
#             [INCLUDES <system include dirs...>] [TEST_SOURCES <sources...>])
# A shim: a shared library lib<output name>.so carrying the vendor
# library's SONAME, exporting exactly what its version script (generated
# from MAP) lists, with the common shim code, linked with
# -Bsymbolic-functions (its own calls never go through an interposer) and
# --no-undefined; installed in <libdir>/xsched. It never links the vendor
# library: that is opened at run time.
#
# With TEST_SOURCES (the shim's diagnostics, which tests look up with
# dlsym) and BUILD_TESTING, also <target>_test: the same objects plus
# TEST_SOURCES, its version script generated with XS_SHIM_TEST defined,
# built as test/lib<output name>.so in the build tree and never installed.
# The installed shim exports its vendor's API and the dl hooks only.
function(xs_add_shim target)
  cmake_parse_arguments(S "" "NAME;SONAME;MAP" "SOURCES;INCLUDES;TEST_SOURCES" ${ARGN})
  add_library(${target}_objects OBJECT ${S_SOURCES}
    ${PROJECT_SOURCE_DIR}/src/shim/common/shim_lib.c)
  _xs_shim_setup(${target}_objects)
  _xs_shim_link(${target} "")
  install(TARGETS ${target} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/xsched)
  if(S_TEST_SOURCES AND BUILD_TESTING)
    _xs_shim_link(${target}_test "${S_TEST_SOURCES}" XS_SHIM_TEST)
    set_target_properties(${target}_test PROPERTIES
      LIBRARY_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/test)
  endif()
endfunction()

# Include directories and libraries of the shim's objects (or its test
# sources), from xs_add_shim's parsed arguments.
macro(_xs_shim_setup t)
  target_include_directories(${t} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  if(S_INCLUDES)
    target_include_directories(${t} SYSTEM PRIVATE ${S_INCLUDES})
  endif()
  target_link_libraries(${t} PRIVATE xsched_core ${CMAKE_DL_LIBS} Threads::Threads)
endmacro()

# The shared library <t> of xs_add_shim's objects and @extra sources, its
# version script expanded with the macros that follow.
macro(_xs_shim_link t extra)
  set(_map ${CMAKE_CURRENT_BINARY_DIR}/${t}.map)
  xs_generate(${_map} ${CMAKE_CURRENT_SOURCE_DIR}/${S_MAP} ${ARGN})
  add_library(${t} SHARED $<TARGET_OBJECTS:${target}_objects> ${extra} ${_map})
  set_target_properties(${t} PROPERTIES OUTPUT_NAME ${S_NAME} NO_SONAME ON
    LINK_DEPENDS ${_map})
  _xs_shim_setup(${t})
  target_link_options(${t} PRIVATE
    -Wl,-soname,${S_SONAME}
    -Wl,--version-script=${_map}
    -Wl,-Bsymbolic-functions
    -Wl,--no-undefined)
endmacro()
