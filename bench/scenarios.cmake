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
