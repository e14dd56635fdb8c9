# Workloads of the evaluation scenarios (bench/scenarios/*.sh), included by
# bench/CMakeLists.txt. Each entry is self-contained: one program, what it
# links and why, so that scenarios can be added without touching the rest.

# cu_load: a plain CUDA driver-API application (periodic tasks or a flood)
# that the CUDA scenarios run natively on the simulated driver and unchanged
# under the CUDA shim. It links the simulated driver by its SONAME
# (libcuda.so.1), like an application linked with -lcuda, and nothing of
# xsched's. The target has a bench_ prefix because tests/ already has a
# cu_load target; the program is build/bench/cu_load.
add_executable(bench_cu_load cu_load.c)
set_target_properties(bench_cu_load PROPERTIES OUTPUT_NAME cu_load)
target_include_directories(bench_cu_load PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(bench_cu_load PRIVATE xsched_sim_cuda)
# What the scenario scripts start besides it.
add_dependencies(bench_cu_load xsched_cuda xschedd)

# cl_load: the OpenCL counterpart of cu_load, a plain OpenCL program linked
# against the ICD loader (nothing of xsched), run natively on PoCL and
# unchanged under the OpenCL shim. Its workload (cl_work.c) is shared with
# bench_cl_priority. Only where OpenCL is built; the scenarios that need it
# say "skipped" without it.
if(XSCHED_WITH_OPENCL)
  add_executable(cl_load cl_load.c cl_work.c)
  target_include_directories(cl_load PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_include_directories(cl_load SYSTEM PRIVATE ${XSCHED_OPENCL_INCLUDE_DIR})
  target_link_libraries(cl_load PRIVATE xs_build ${XSCHED_OPENCL_LIBRARY})
  if(TARGET xsched_opencl)
    add_dependencies(cl_load xsched_opencl xschedd)
  endif()
endif()

# cu_llm and xs_llm: the LLM-serving scenario's workloads (llm.sh): an
# online server of Poisson requests (prefill, then decode steps, each one
# CUDA graph) and an offline flood of long kernels. cu_llm is a plain CUDA
# driver-API application like cu_load (the simulated driver by its SONAME,
# nothing of xsched's); xs_llm runs the same workload (llm_work.c) through
# the public API on the simulated XPU, for the levels above the CUDA
# shim's Lv1.
add_executable(cu_llm cu_llm.c llm_work.c)
target_include_directories(cu_llm PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(cu_llm PRIVATE xsched_sim_cuda m)
add_dependencies(cu_llm xsched_cuda xschedd)

add_executable(xs_llm xs_llm.c llm_work.c)
target_link_libraries(xs_llm PRIVATE xsched_core xsched_sim m)
add_dependencies(xs_llm xschedd)
