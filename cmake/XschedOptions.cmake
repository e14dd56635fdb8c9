# Build options: vendor stacks (auto-detected, removable), sanitizers and
# warnings. Everything applies through the `xs_build` interface target, so
# no global flags leak into other projects that add_subdirectory() us.

find_package(Threads REQUIRED)
find_package(PkgConfig)

# xs_auto_option(NAME DOC FOUND): a feature that is ON, OFF, or AUTO (the
# default: on when FOUND). AUTO is decided again at every configure, so a
# build directory made before a package was installed picks it up.
function(xs_auto_option name doc found)
  set(${name} AUTO CACHE STRING "${doc} (ON, OFF, or AUTO: when found)")
  set_property(CACHE ${name} PROPERTY STRINGS AUTO ON OFF)
  if(${name} STREQUAL "AUTO")
    set(${name} ${found} PARENT_SCOPE)
  endif()
endfunction()

# CUDA: only headers are ever used (the driver is dlopen()ed at run time).
find_path(XSCHED_CUDA_INCLUDE_DIR cuda.h
  HINTS ENV CUDA_HOME ENV CUDA_PATH PATHS /usr/local/cuda
  PATH_SUFFIXES include)
if(XSCHED_CUDA_INCLUDE_DIR)
  set(_cuda_found ON)
else()
  set(_cuda_found OFF)
endif()
xs_auto_option(XSCHED_WITH_CUDA "Check our CUDA declarations against cuda.h" ${_cuda_found})

find_path(XSCHED_OPENCL_INCLUDE_DIR CL/cl.h)
find_library(XSCHED_OPENCL_LIBRARY OpenCL)
if(XSCHED_OPENCL_INCLUDE_DIR AND XSCHED_OPENCL_LIBRARY)
  set(_ocl_found ON)
else()
  set(_ocl_found OFF)
endif()
xs_auto_option(XSCHED_WITH_OPENCL "Build the OpenCL shim and its tests" ${_ocl_found})

find_path(XSCHED_LEVELZERO_INCLUDE_DIR level_zero/ze_api.h)
if(XSCHED_LEVELZERO_INCLUDE_DIR)
  set(_ze_found ON)
else()
  set(_ze_found OFF)
endif()
xs_auto_option(XSCHED_WITH_LEVELZERO "Build the Level Zero shim and its tests" ${_ze_found})

# Slurm: spank.h (libslurm-dev) for the SPANK plugin; nothing is linked.
find_path(XSCHED_SPANK_INCLUDE_DIR slurm/spank.h)
if(XSCHED_SPANK_INCLUDE_DIR)
  set(_spank_found ON)
else()
  set(_spank_found OFF)
endif()
xs_auto_option(XSCHED_WITH_SLURM "Build the Slurm SPANK plugin" ${_spank_found})

set(_bpf_found OFF)
if(PKG_CONFIG_FOUND)
  pkg_check_modules(LIBBPF QUIET IMPORTED_TARGET libbpf)
  find_program(XSCHED_BPFTOOL bpftool PATHS /usr/sbin /sbin)
  find_program(XSCHED_CLANG clang)
  # vmlinux.h: generated from this machine's BTF, or given (src/bpf/CMakeLists.txt).
  set(XSCHED_BPF_VMLINUX_H "" CACHE FILEPATH
    "vmlinux.h to build the eBPF programs with; empty: from /sys/kernel/btf/vmlinux")
  if(LIBBPF_FOUND AND XSCHED_BPFTOOL AND XSCHED_CLANG AND
     (XSCHED_BPF_VMLINUX_H OR EXISTS /sys/kernel/btf/vmlinux))
    set(_bpf_found ON)
  endif()
endif()
xs_auto_option(XSCHED_WITH_BPF
  "Build the eBPF tools: bypass detector, run-queue latency, USDT tracing" ${_bpf_found})
if(XSCHED_WITH_BPF AND NOT _bpf_found)
  message(FATAL_ERROR "XSCHED_WITH_BPF=ON needs pkg-config, libbpf (libbpf-dev), bpftool, "
    "clang and /sys/kernel/btf/vmlinux or -DXSCHED_BPF_VMLINUX_H=PATH; without them, "
    "configure with -DXSCHED_WITH_BPF=AUTO or OFF")
endif()

# USDT probes in the XQueue (src/xqueue/xq_usdt.h): systemtap-sdt-dev's header.
find_path(XSCHED_SDT_INCLUDE_DIR sys/sdt.h)
if(XSCHED_SDT_INCLUDE_DIR)
  set(_sdt_found ON)
else()
  set(_sdt_found OFF)
endif()
xs_auto_option(XSCHED_WITH_USDT "USDT probes in libxsched (systemtap-sdt-dev)" ${_sdt_found})
if(XSCHED_WITH_USDT AND NOT _sdt_found)
  message(FATAL_ERROR "XSCHED_WITH_USDT=ON needs <sys/sdt.h> (Debian: systemtap-sdt-dev)")
endif()

set(XSCHED_SANITIZE "" CACHE STRING
  "Sanitizers: empty, 'address,undefined' or 'thread'")
set_property(CACHE XSCHED_SANITIZE PROPERTY STRINGS "" "address,undefined" "thread")
option(XSCHED_WERROR "Treat warnings as errors" OFF)

add_library(xs_build INTERFACE)
target_compile_options(xs_build INTERFACE
  -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes)
target_compile_definitions(xs_build INTERFACE _GNU_SOURCE)
if(XSCHED_WERROR)
  target_compile_options(xs_build INTERFACE -Werror)
endif()
if(XSCHED_SANITIZE)
  if(NOT XSCHED_SANITIZE MATCHES "^(address,undefined|undefined,address|address|undefined|thread)$")
    message(FATAL_ERROR "XSCHED_SANITIZE: unknown value '${XSCHED_SANITIZE}'")
  endif()
  target_compile_options(xs_build INTERFACE
    -fsanitize=${XSCHED_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  target_link_options(xs_build INTERFACE -fsanitize=${XSCHED_SANITIZE})
endif()
