# Libraries found on the build machine, each optional so that a machine
# with nothing but a C compiler and CMake still builds the shims,
# libxsched and xschedctl (a GPU host image often lacks pkg-config and
# every -dev package):
#   inih   -> the daemon (XSCHED_WITH_DAEMON) and what needs it: the
#             benchmarks and the tests;
#   cmocka -> the tests.
# Each is looked up through pkg-config when there is one, else by its
# header and library, and becomes an imported target (xsched::inih,
# xsched::cmocka) so that users need not know how it was found.

# xs_find_lib(NAME HEADER LIBRARY): defines xsched::NAME and sets
# XSCHED_HAVE_<NAME> (upper case) in the caller's scope.
function(xs_find_lib name header library)
  string(TOUPPER ${name} up)
  set(XSCHED_HAVE_${up} OFF PARENT_SCOPE)
  if(TARGET xsched::${name})
    set(XSCHED_HAVE_${up} ON PARENT_SCOPE)
    return()
  endif()
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(XS_PC_${up} QUIET IMPORTED_TARGET GLOBAL ${name})
    if(XS_PC_${up}_FOUND)
      add_library(xsched::${name} ALIAS PkgConfig::XS_PC_${up})
      set(XSCHED_HAVE_${up} ON PARENT_SCOPE)
      return()
    endif()
  endif()
  find_path(XSCHED_${up}_INCLUDE_DIR ${header})
  find_library(XSCHED_${up}_LIBRARY ${library})
  if(XSCHED_${up}_INCLUDE_DIR AND XSCHED_${up}_LIBRARY)
    add_library(xsched::${name} UNKNOWN IMPORTED GLOBAL)
    set_target_properties(xsched::${name} PROPERTIES
      IMPORTED_LOCATION ${XSCHED_${up}_LIBRARY}
      INTERFACE_INCLUDE_DIRECTORIES ${XSCHED_${up}_INCLUDE_DIR})
    set(XSCHED_HAVE_${up} ON PARENT_SCOPE)
  endif()
endfunction()

# A daemon linked with Debian's libinih.a needs nothing but libc: the one
# to carry to a host without inih (see tests/gpu/run.sh).
option(XSCHED_INIH_STATIC "Link xschedd with the static inih (libinih.a)" OFF)
if(XSCHED_INIH_STATIC)
  find_path(XSCHED_INIH_INCLUDE_DIR ini.h)
  find_library(XSCHED_INIH_STATIC_LIBRARY NAMES libinih.a)
  if(NOT XSCHED_INIH_INCLUDE_DIR OR NOT XSCHED_INIH_STATIC_LIBRARY)
    message(FATAL_ERROR "XSCHED_INIH_STATIC: no ini.h and libinih.a (Debian: libinih-dev)")
  endif()
  add_library(xsched::inih STATIC IMPORTED GLOBAL)
  set_target_properties(xsched::inih PROPERTIES
    IMPORTED_LOCATION ${XSCHED_INIH_STATIC_LIBRARY}
    INTERFACE_INCLUDE_DIRECTORIES ${XSCHED_INIH_INCLUDE_DIR})
endif()
xs_find_lib(inih ini.h inih)
xs_auto_option(XSCHED_WITH_DAEMON "Build xschedd (needs inih: libinih-dev)" ${XSCHED_HAVE_INIH})
if(XSCHED_WITH_DAEMON AND NOT XSCHED_HAVE_INIH)
  message(FATAL_ERROR "XSCHED_WITH_DAEMON=ON needs inih (Debian: libinih-dev); "
    "without it, configure with -DXSCHED_WITH_DAEMON=AUTO or OFF")
endif()

xs_find_lib(cmocka cmocka.h cmocka)
# What is left out, and why, for the summary line.
set(XSCHED_TESTS_MISSING "")
if(BUILD_TESTING)
  if(NOT XSCHED_HAVE_CMOCKA)
    list(APPEND XSCHED_TESTS_MISSING "cmocka (libcmocka-dev)")
  endif()
  if(NOT XSCHED_WITH_DAEMON)
    list(APPEND XSCHED_TESTS_MISSING "the daemon (inih: libinih-dev)")
  endif()
endif()
