# Install layout: GNUInstallDirs for everything, so that one build serves
# any prefix, `cmake --install --prefix P` and `DESTDIR=D`.
#
# Directories under the prefix are installed relative to it (they follow
# --prefix). A prefix of /usr is a distribution install: GNUInstallDirs
# then puts the configuration in /etc, and the systemd unit goes to the
# distribution's unit directory (pkg-config's systemdsystemunitdir,
# /lib/systemd/system on Debian 12). Those absolute directories honour
# DESTDIR; an install relocated with --prefix P puts them under P at the
# same path (P/etc/xsched, P/lib/systemd/system), so nothing is ever
# written outside P or D. Paths compiled in (the daemon's default
# configuration) and the .pc file of a /usr build keep the configured
# prefix; the unit is generated at install time and names the daemon
# where it was really installed.

set(XSCHED_CONFIGURED_PREFIX ${CMAKE_INSTALL_PREFIX})
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(_unitdir /usr/lib/systemd/system)
  if(PKG_CONFIG_FOUND)
    pkg_get_variable(_pc_unitdir systemd systemdsystemunitdir)
    if(_pc_unitdir)
      set(_unitdir ${_pc_unitdir})
    endif()
    pkg_get_variable(_pc_bashcomp bash-completion completionsdir)
  endif()
else()
  set(_unitdir lib/systemd/system)
endif()
# systemd also searches /usr/local/lib/systemd/system and
# /usr/local/lib/sysusers.d; bash-completion searches
# $XDG_DATA_DIRS/bash-completion/completions (/usr/local/share by default).
set(XSCHED_SYSTEMD_UNITDIR ${_unitdir} CACHE PATH
  "systemd system unit directory (relative: under the prefix)")
set(XSCHED_SYSUSERSDIR lib/sysusers.d CACHE PATH
  "sysusers.d directory (relative: under the prefix)")
if(_pc_bashcomp)
  set(_bashcomp ${_pc_bashcomp})
else()
  set(_bashcomp ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
endif()
set(XSCHED_BASHCOMPLETIONDIR ${_bashcomp} CACHE PATH
  "bash-completion completions directory (relative: under the prefix)")

# xs_full_dir(OUT DIR): DIR made absolute against the configured prefix.
function(xs_full_dir out dir)
  if(IS_ABSOLUTE "${dir}")
    set(${out} "${dir}" PARENT_SCOPE)
  else()
    set(${out} "${CMAKE_INSTALL_PREFIX}/${dir}" PARENT_SCOPE)
  endif()
endfunction()

xs_full_dir(XSCHED_FULL_SBINDIR ${CMAKE_INSTALL_SBINDIR})
set(XSCHED_FULL_CONFDIR ${CMAKE_INSTALL_FULL_SYSCONFDIR}/xsched)
set(XSCHED_DEFAULT_CONFIG ${XSCHED_FULL_CONFDIR}/xschedd.conf)

# xs_install_files(DESTINATION DIR FILES...): install(FILES) into DIR. A
# DIR outside the configured prefix (/etc for /usr) is installed by a rule
# of ours that moves it under a prefix given to `cmake --install --prefix`.
function(xs_install_files)
  cmake_parse_arguments(A "" "DESTINATION" "FILES" ${ARGN})
  set(dir ${A_DESTINATION})
  xs_full_dir(full ${dir})
  string(FIND "${full}/" "${CMAKE_INSTALL_PREFIX}/" at)
  if(NOT IS_ABSOLUTE "${dir}" OR at EQUAL 0)
    file(RELATIVE_PATH rel ${CMAKE_INSTALL_PREFIX} ${full})
    install(FILES ${A_FILES} DESTINATION ${rel})
    return()
  endif()
  install(CODE "
set(_xs_dest \"${full}\")
if(NOT CMAKE_INSTALL_PREFIX STREQUAL \"${CMAKE_INSTALL_PREFIX}\")
  set(_xs_dest \"\${CMAKE_INSTALL_PREFIX}${full}\")
endif()
file(INSTALL DESTINATION \"\${_xs_dest}\" TYPE FILE FILES ${A_FILES})")
endfunction()

# --- libxsched: headers, pkg-config file ---------------------------------
install(FILES include/xsched/xsched.h include/xsched/sim.h include/xsched/policy.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/xsched)
# A /usr build names its directories; any other prefix finds them from the
# .pc file's own place, so a relocated install still compiles.
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr" OR IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}"
   OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(XSCHED_PC_PREFIX ${CMAKE_INSTALL_PREFIX})
  set(XSCHED_PC_LIBDIR ${CMAKE_INSTALL_FULL_LIBDIR})
  set(XSCHED_PC_INCLUDEDIR ${CMAKE_INSTALL_FULL_INCLUDEDIR})
else()
  file(RELATIVE_PATH _up ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
  string(REGEX REPLACE "/$" "" _up "${_up}")
  set(XSCHED_PC_PREFIX "\${pcfiledir}/${_up}")
  set(XSCHED_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
  set(XSCHED_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
configure_file(cmake/xsched.pc.in ${PROJECT_BINARY_DIR}/xsched.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/xsched.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# --- the daemon's files: configuration, unit, sysusers entry --------------
xs_install_files(DESTINATION ${XSCHED_FULL_CONFDIR} FILES ${PROJECT_SOURCE_DIR}/dist/xschedd.conf)
xs_install_files(DESTINATION ${XSCHED_SYSUSERSDIR}
  FILES ${PROJECT_SOURCE_DIR}/dist/sysusers.d/xsched.conf)

# The unit in the build tree names the daemon at its configured place (for
# tests/test_units.sh); the installed one is generated again at install
# time for the prefix really used.
set(_unit_in ${PROJECT_SOURCE_DIR}/dist/systemd/xschedd.service.in)
set(XSCHED_UNIT_SBINDIR ${XSCHED_FULL_SBINDIR})
configure_file(${_unit_in} ${PROJECT_BINARY_DIR}/dist/xschedd.service @ONLY)
set(XSCHED_UNIT_FILE ${PROJECT_BINARY_DIR}/dist/xschedd.service)
if(IS_ABSOLUTE "${CMAKE_INSTALL_SBINDIR}")
  set(_sbin "${CMAKE_INSTALL_SBINDIR}")
else()
  set(_sbin "\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_SBINDIR}")
endif()
install(CODE "
set(XSCHED_UNIT_SBINDIR \"${_sbin}\")
set(XSCHED_DEFAULT_CONFIG \"${XSCHED_DEFAULT_CONFIG}\")
configure_file(\"${_unit_in}\" \"${PROJECT_BINARY_DIR}/dist/install/xschedd.service\" @ONLY)")
xs_install_files(DESTINATION ${XSCHED_SYSTEMD_UNITDIR}
  FILES ${PROJECT_BINARY_DIR}/dist/install/xschedd.service)

# --- the documentation: README.md and the pages it links to, in the same
# relative places, so that the installed copy's links resolve (the
# configuration file and the unit point at docs/operating.md) ------------
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
file(GLOB _xs_doc_pages ${PROJECT_SOURCE_DIR}/docs/*.md)
install(FILES ${_xs_doc_pages} DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
install(DIRECTORY docs/results DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)

# --- deploy/: the Kubernetes manifests, as documentation ----------------
install(FILES deploy/kubernetes/xschedd.yaml deploy/kubernetes/example-pods.yaml
  deploy/kubernetes/Containerfile DESTINATION ${CMAKE_INSTALL_DOCDIR}/kubernetes)

# `cmake --build build --target uninstall` removes the last install's files.
add_custom_target(uninstall
  COMMAND ${CMAKE_COMMAND} -DMANIFEST=${PROJECT_BINARY_DIR}/install_manifest.txt
          -P ${PROJECT_SOURCE_DIR}/cmake/Uninstall.cmake
  COMMENT "Removing the files of install_manifest.txt" VERBATIM)
