# Run by CPack (CPACK_PRE_BUILD_SCRIPTS, see cmake/Packaging.cmake) on the
# staged tree of the Debian package, before it is packed: adds what Debian
# wants of every package and a plain `cmake --install` has no use for, the
# copyright file and the changelog of a native package, and compresses the
# man pages (gzip -9n: no name or time stamp, reproducible).

if(NOT CPACK_GENERATOR STREQUAL "DEB")
  return()
endif()
set(root "${CPACK_TEMPORARY_INSTALL_DIRECTORY}")
if(NOT IS_DIRECTORY "${root}/usr")
  message(FATAL_ERROR "DebStage: no staged /usr under ${root}")
endif()
find_program(XS_GZIP gzip REQUIRED)

set(doc "${root}/usr/${XSCHED_DEB_DOCDIR}")
file(MAKE_DIRECTORY "${doc}")
file(WRITE "${doc}/copyright"
"Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: xsched

Files: *
Copyright: 2026 the xsched developers
License: Apache-2.0
 Licensed under the Apache License, Version 2.0 (the \"License\"); you may
 not use this file except in compliance with the License.
 .
 On Debian systems, the complete text of the Apache License, Version 2.0
 can be found in \"/usr/share/common-licenses/Apache-2.0\".
")

# The package is built from a source tree, not from a Debian source
# package: one entry for the version, dated by SOURCE_DATE_EPOCH when set.
string(TIMESTAMP when "%a, %d %b %Y %H:%M:%S +0000" UTC)
file(WRITE "${doc}/changelog"
"xsched (${XSCHED_VERSION}) unstable; urgency=medium

  * Built from the xsched source tree with CPack (tools/package.sh).

 -- ${XSCHED_PACKAGE_CONTACT}  ${when}
")

file(GLOB_RECURSE pages "${root}/usr/${XSCHED_DEB_MANDIR}/*")
foreach(f "${doc}/changelog" ${pages})
  if(NOT f MATCHES "\\.gz$")
    execute_process(COMMAND ${XS_GZIP} -9nf "${f}" RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "DebStage: gzip ${f} failed")
    endif()
  endif()
endforeach()
# CPack gives staged files the permissions of the build; Debian wants 0644
# for everything that is not a program.
file(GLOB_RECURSE docs "${doc}/*" "${root}/usr/${XSCHED_DEB_MANDIR}/*")
file(CHMOD ${docs} PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
