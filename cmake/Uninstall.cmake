# Removes what an install put in place, from its manifest:
#   cmake --build BUILD --target uninstall           (the last install)
#   cmake -DMANIFEST=FILE -P cmake/Uninstall.cmake
# Only the files listed are removed (with $DESTDIR in front when set, as
# for the install); directories are left, since others may share them.
if(NOT MANIFEST OR NOT EXISTS "${MANIFEST}")
  message(FATAL_ERROR "no install manifest '${MANIFEST}': install first")
endif()
file(STRINGS "${MANIFEST}" files)
foreach(f IN LISTS files)
  set(f "$ENV{DESTDIR}${f}")
  if(EXISTS "${f}" OR IS_SYMLINK "${f}")
    message(STATUS "Removing: ${f}")
    file(REMOVE "${f}")
  endif()
endforeach()
