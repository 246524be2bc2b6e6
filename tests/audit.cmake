# Tests of `kaudit audit` on CPU: the bad inputs of tests/audit/bad and the
# command line (audit_cli), and the semantic controls of
# tests/audit/controls.tsv against their pinned contracts (audit_controls).
# Included from tests/CMakeLists.txt after semantic.cmake, whose torch python
# it reuses.  The scripts skip (77) when that python has no torch, unless CI
# is set in the test's environment: then they fail.

if(DEFINED _kaudit_torch_python AND _kaudit_torch_python)
  set(_kaudit_audit_python "${_kaudit_torch_python}")
elseif(DEFINED KAUDIT_TORCH_PYTHON)
  # semantic.cmake found no torch there: the scripts skip (or fail under CI)
  set(_kaudit_audit_python "${KAUDIT_TORCH_PYTHON}")
else()
  set(_kaudit_audit_python "/usr/bin/python3")
endif()

add_test(NAME audit_cli COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/audit_cli.sh
  $<TARGET_FILE:kaudit> "${_kaudit_audit_python}" ${CMAKE_SOURCE_DIR})
add_test(NAME audit_controls COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/audit_controls.sh
  $<TARGET_FILE:kaudit> "${_kaudit_audit_python}" ${CMAKE_SOURCE_DIR})
set_tests_properties(audit_cli audit_controls PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900)
# The vendor-channel controls' extension on the stand-in cuBLAS (tests/programs/libprobe_ext.c).
if(TARGET standin_probe_ext)
  set_property(TEST audit_controls APPEND PROPERTY ENVIRONMENT
    "KAUDIT_TEST_PROBE_EXT=$<TARGET_FILE:standin_probe_ext>")
endif()

# The sitecustomize's operator sampler on real PyTorch (docs/python-provenance.md, "Operators").
add_test(NAME python_operators COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/python_operators.sh
  $<TARGET_FILE:kaudit> "${_kaudit_audit_python}" ${CMAKE_SOURCE_DIR})
set_tests_properties(python_operators PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)

# Stress v2: what a stress slot may convict (the contract-supported policy,
# docs/audit.md, "What gates"), aliasing judged against the reference.
add_test(NAME audit_stress_v2 COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/audit_stress_v2.sh
  $<TARGET_FILE:kaudit> "${_kaudit_audit_python}" ${CMAKE_SOURCE_DIR})
set_tests_properties(audit_stress_v2 PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)

# The weak surfaces of public validators (runner/kaudit_weak.py; docs/validators.md, "Weak surfaces").
add_test(NAME audit_weak COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/audit_weak.sh
  $<TARGET_FILE:kaudit> "${_kaudit_audit_python}" ${CMAKE_SOURCE_DIR})
set_tests_properties(audit_weak PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)

# The end-to-end demo: examples/validators-demo audited as a batch with the weak
# surfaces, scored by kaudit validators, checked against its manifest.
add_test(NAME validators_demo COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/validators_demo.sh
  $<TARGET_FILE:kaudit> "${_kaudit_audit_python}" ${CMAKE_SOURCE_DIR})
set_tests_properties(validators_demo PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)

# Concurrent audits' timed phases take turns per device (docs/timing.md, "Concurrent audits").
add_test(NAME audit_timing_turns COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/audit_timing_turns.sh
  $<TARGET_FILE:kaudit> "${_kaudit_audit_python}" ${CMAKE_SOURCE_DIR})
set_tests_properties(audit_timing_turns PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300)

# The attacker's half of the security rule: hostile candidates
# (tests/audit/attacks), one test each, asserting what a correct defence gives
# (tests/audit_attacks.sh says what).  Each was shown working against the
# tree before its defence (docs/threat-model.md, "Attacks on kaudit audit");
# label "attack".  Those whose defence has not landed are registered
# DISABLED, so that ctest lists them as not run instead of hiding them: each
# is enabled in the commit that defends it.
set(_kaudit_attacks_defended drop_inputs core_pattern proc_sys signal_ancestors forge_events steal_reference precomputed probe_detect_zeros probe_pop_mode probe_thread probe_pool probe_unclassified_op collect_directory poison_reference_tmp
  chmod_runner chmod_reference_tmp probe_overwrite_reference)
set(_kaudit_attacks_open)
# gpu-mode/pygpubench's exploits adapted to KernelBench format (pg_*.py;
# docs/threat-model.md, "pygpubench's exploits"): those that apply on the CPU.
# The GPU-only ones (pg_event_array, pg_function_detour, pg_got_patch,
# pg_gpu_scan_zeros, pg_error_counter, pg_warmup) run on the H200
# (tests/gpu/audit_h200.sh, part "attacks", or tests/audit_attacks.sh with
# DEVICE cuda), not here.
list(APPEND _kaudit_attacks_defended pg_gc_nan pg_gc_copy pg_combined pg_fd_overwrite pg_thread_fd
  pg_heap_sig_scan pg_stack_sig_scan pg_proc_mem_bypass pg_ptrace pg_replace_torch pg_seccomp_trap)
# Open on the CPU: the probe's report is the candidate's process's own there
# (on CUDA the trace convicts them; docs/threat-model.md).
list(APPEND _kaudit_attacks_open pg_pipe_interpose pg_file_struct)
foreach(_kaudit_attack ${_kaudit_attacks_defended} ${_kaudit_attacks_open})
  add_test(NAME audit_attack_${_kaudit_attack} COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/audit_attacks.sh
    $<TARGET_FILE:kaudit> "${_kaudit_audit_python}" ${CMAKE_SOURCE_DIR} ${_kaudit_attack})
  set_tests_properties(audit_attack_${_kaudit_attack} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 400
    LABELS attack)
endforeach()
foreach(_kaudit_attack ${_kaudit_attacks_open})
  set_tests_properties(audit_attack_${_kaudit_attack} PROPERTIES DISABLED TRUE)
endforeach()
# core_pattern is global: no other test crashes while the candidate holds it
set_tests_properties(audit_attack_core_pattern PROPERTIES RUN_SERIAL TRUE)

# A PASS certificate needs the worker's confinement in force (audit_exec.h).
if(TARGET kaudit_audit_pipeline)
  add_executable(test_audit_confinement ${CMAKE_CURRENT_LIST_DIR}/test_audit_confinement.c)
  target_link_libraries(test_audit_confinement PRIVATE kaudit_audit_pipeline PkgConfig::CRITERION)
  kaudit_sanitize(test_audit_confinement)
  add_test(NAME audit_confinement COMMAND test_audit_confinement)
endif()

# Builds kept across audits of one candidate (docs/audit.md, "Builds kept across audits").
add_test(NAME audit_build_store COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/audit_build_store.sh
  $<TARGET_FILE:kaudit> "${_kaudit_audit_python}" ${CMAKE_SOURCE_DIR})
set_tests_properties(audit_build_store PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
