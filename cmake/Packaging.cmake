# The Debian package `xsched`, built by CPack from a build configured for
# the distribution's layout:
#   cmake -S . -B build -DCMAKE_INSTALL_PREFIX=/usr && cmake --build build
#   (cd build && cpack -G DEB)        # or: tools/package.sh
# It holds everything `cmake --install` installs (daemon, xschedctl, the
# shims, libxsched, headers, pkg-config file, man pages, unit, sysusers
# entry, bash completion, /etc/xsched/xschedd.conf as a conffile) plus the
# Debian files written by cmake/DebStage.cmake. The maintainer scripts are
# in dist/debian/. The vendor libraries the shims dlopen() are only
# suggested: a node has one vendor's stack, or none.

set(XSCHED_PACKAGE_CONTACT "xsched developers <xsched@example.org>" CACHE STRING
  "Maintainer of the Debian package (name <address>)")

set(CPACK_PACKAGE_NAME xsched)
set(CPACK_PACKAGE_VENDOR xsched)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT ${XSCHED_PACKAGE_CONTACT})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "preemptive, policy-driven scheduling for GPUs and other accelerators")
# CPack puts the summary first and indents these lines itself.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "xsched turns each hardware queue of an application (a CUDA stream, an
OpenCL command queue, a Level Zero queue) into a preemptible queue, so
that a node-wide scheduler can suspend and resume them by priority,
bandwidth share or deadline.

This package contains the daemon xschedd and its systemd unit, the
command-line client xschedctl, the LD_PRELOAD shims for the CUDA driver
API, OpenCL and Level Zero, and the libxsched C library with its headers.")
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS
  "ocl-icd-libopencl1 | libopencl1, pocl-opencl-icd, libze1, libcuda1")
set(CPACK_STRIP_FILES ON)
# Install with DESTDIR, so that /etc and the unit directory land in the
# package rather than on this machine.
set(CPACK_SET_DESTDIR ON)
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_GENERATOR DEB)
set(CPACK_SOURCE_GENERATOR "")

# Control files: maintainer scripts, conffiles, the shlibs entry of
# libxsched (only it: the shims carry the vendors' sonames and must never
# be picked as providers of them) and the ldconfig trigger.
set(_deb ${PROJECT_BINARY_DIR}/debian)
file(WRITE ${_deb}/conffiles "${XSCHED_DEFAULT_CONFIG}\n")
file(WRITE ${_deb}/shlibs
  "libxsched ${PROJECT_VERSION_MAJOR} xsched (>= ${PROJECT_VERSION})\n")
file(WRITE ${_deb}/triggers "activate-noawait ldconfig\n")
xs_full_dir(_sysusers ${XSCHED_SYSUSERSDIR})
set(XSCHED_SYSUSERS_FILE ${_sysusers}/xsched.conf)
foreach(_s postinst prerm postrm)
  configure_file(${PROJECT_SOURCE_DIR}/dist/debian/${_s} ${_deb}/${_s} @ONLY
    FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                     WORLD_READ WORLD_EXECUTE)
endforeach()
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
  "${_deb}/postinst;${_deb}/prerm;${_deb}/postrm;${_deb}/conffiles;${_deb}/shlibs;${_deb}/triggers")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

# Copyright, changelog and compressed man pages, added to the staged tree.
set(XSCHED_DEB_DOCDIR ${CMAKE_INSTALL_DATADIR}/doc/xsched)
set(XSCHED_DEB_MANDIR ${CMAKE_INSTALL_MANDIR})
set(CPACK_PRE_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/cmake/DebStage.cmake)
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_BINARY_DIR}/CPackXsched.cmake)
file(WRITE ${CPACK_PROJECT_CONFIG_FILE} "
# Written by cmake/Packaging.cmake.
if(CPACK_GENERATOR STREQUAL \"DEB\" AND NOT \"${CMAKE_INSTALL_PREFIX}\" STREQUAL \"/usr\")
  message(FATAL_ERROR \"the Debian package needs a build configured with \"
    \"-DCMAKE_INSTALL_PREFIX=/usr (this one has ${CMAKE_INSTALL_PREFIX}); tools/package.sh does it\")
endif()
set(XSCHED_SOURCE_DIR \"${PROJECT_SOURCE_DIR}\")
set(XSCHED_DEB_DOCDIR \"${XSCHED_DEB_DOCDIR}\")
set(XSCHED_DEB_MANDIR \"${XSCHED_DEB_MANDIR}\")
set(XSCHED_PACKAGE_CONTACT \"${XSCHED_PACKAGE_CONTACT}\")
set(XSCHED_VERSION \"${PROJECT_VERSION}\")
")
include(CPack)
