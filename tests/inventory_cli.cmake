# inventory_cli.cmake - `kaudit inventory` end to end, on synthetic libraries.
#   cmake -DKAUDIT=<kaudit> -DMKFIXTURE=<inventory_mkfixture> -DWORK=<dir> -P inventory_cli.cmake
# Each step checks the exit status and a piece of the output.

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${MKFIXTURE} ${WORK}/libs RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "inventory_mkfixture failed: ${rc}")
endif()

set(failures 0)
# run(<name> <expected exit> <regex that stdout+stderr must match> args...)
function(run name want regex)
  execute_process(COMMAND ${KAUDIT} inventory ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(all "${out}${err}")
  if(NOT rc STREQUAL "${want}")
    message(SEND_ERROR "${name}: exit ${rc}, want ${want}\n${all}")
  elseif(NOT regex STREQUAL "" AND NOT "${all}" MATCHES "${regex}")
    message(SEND_ERROR "${name}: output does not match '${regex}':\n${all}")
  else()
    message(STATUS "ok   ${name}")
  endif()
  set(last_out "${out}" PARENT_SCOPE)
endfunction()

set(L ${WORK}/libs)
run(build 0 "" build -o ${WORK}/a.inv ${L}/libsynth_a.so.1)
run(verify 0 "verified: xxh3-128 [0-9a-f]+; 1 libraries; 8 entries \\(cubin 5, ptx 2, observed 0, pattern 1\\); 7 module digests \\(4 cubins, 3 fatbin containers\\)"
    verify ${WORK}/a.inv)
run(lookup-exact 0 "k_alpha: exact \\(cubin\\) in libsynth_a.so.1 \\(xxh3-128 [0-9a-f]+\\); targets sm_80,sm_90a"
    lookup ${WORK}/a.inv k_alpha)
run(lookup-embedded 0 "k_embedded: exact \\(cubin\\) in libsynth_a.so.1 \\[embedded\\]"
    lookup ${WORK}/a.inv k_embedded)
run(lookup-ptx 0 "k_delta: exact \\(ptx\\) in libsynth_a.so.1.*targets compute_90"
    lookup ${WORK}/a.inv k_delta)
run(lookup-pattern 0 "nvjet_sm90_tst_64x8_h: pattern 'nvjet_sm%d_%s_%dx%d_%c' from libsynth_a.so.1"
    lookup ${WORK}/a.inv nvjet_sm90_tst_64x8_h)
run(lookup-none 1 "ampere_sgemm_128x64_tn_like_custom: no match"
    lookup ${WORK}/a.inv ampere_sgemm_128x64_tn_like_custom)
run(names 0 "^k_alpha\nk_beta\nk_embedded\nk_family\nk_gamma\n$" names --kind cubin ${WORK}/a.inv)
run(names-fatbin-only 0 "^k_alpha\nk_beta\nk_family\nk_gamma\n$" names --kind cubin --fatbin-only ${WORK}/a.inv)
run(stats 0 "libsynth_a.so.1 +[0-9]+ +5 +2 +0 +1" stats ${WORK}/a.inv)

run(build-dir 0 "" build -j 2 --meta source=test -o ${WORK}/ab.inv.zst ${L})
run(verify-zst 0 "2 libraries" verify ${WORK}/ab.inv.zst)
run(diff-same 0 "0 entries added, 0 removed, 0 changed; 0 modules added, 0 removed; 0 libraries changed" diff ${WORK}/a.inv ${WORK}/a.inv)
run(diff 1 "\\+ cubin k_gamma_v2 \\[libsynth_b.so.1\\] sm_90a.*library \\+ libsynth_b.so.1|library \\+ libsynth_b.so.1.*\\+ cubin k_gamma_v2"
    diff ${WORK}/a.inv ${WORK}/ab.inv.zst)

# the digest pin
execute_process(COMMAND ${KAUDIT} inventory verify ${WORK}/a.inv OUTPUT_VARIABLE out)
string(REGEX MATCH "xxh3-128 ([0-9a-f]+)" _ "${out}")
run(verify-pinned 0 "verified" verify --digest ${CMAKE_MATCH_1} ${WORK}/a.inv)
run(verify-wrong-pin 1 "has digest [0-9a-f]+, expected 00000000000000000000000000000000"
    verify --digest 00000000000000000000000000000000 ${WORK}/a.inv)
run(lookup-wrong-pin 1 "expected" lookup --digest 00000000000000000000000000000000 ${WORK}/a.inv k_alpha)

# tampering fails closed, naming the file and the offset
file(READ ${WORK}/a.inv text)
string(REPLACE "k_beta" "k_bxta" text "${text}")
file(WRITE ${WORK}/tampered.inv "${text}")
run(verify-tampered 1 "invalid inventory '.*tampered.inv': line 2, offset [0-9]+: digest mismatch"
    verify ${WORK}/tampered.inv)
run(lookup-tampered 1 "digest mismatch" lookup ${WORK}/tampered.inv k_alpha)
file(WRITE ${WORK}/empty.inv "")
run(verify-empty 1 "invalid inventory '.*empty.inv': line 1, offset 0: not an inventory file" verify ${WORK}/empty.inv)
run(verify-missing 1 "cannot open inventory" verify ${WORK}/does-not-exist.inv)

# broken libraries: an error naming the file and the offset, exit 1
run(build-truncated 1 "cannot read '.*libtruncated.so': .*offset 0x[0-9a-f]+"
    build -o ${WORK}/x.inv ${L}/bad/libtruncated.so)
run(build-corrupt-zstd 1 "cannot read '.*libcorrupt_zstd.so': fatbin entry at offset 0x[0-9a-f]+: corrupt ZSTD payload at offset 0x[0-9a-f]+"
    build -o ${WORK}/x.inv ${L}/bad/libcorrupt_zstd.so)
run(build-missing 1 "cannot read '.*nothing.so'" build -o ${WORK}/x.inv ${L}/nothing.so)
if(EXISTS ${WORK}/x.inv)
  message(SEND_ERROR "a failed build left an inventory behind")
endif()

set(synopsis "usage: kaudit inventory build \\[-o FILE\\] \\[-j N\\] \\[-v\\] \\[--no-patterns\\] \\[--no-scan\\] \\(kaudit inventory --help for more\\)")
run(usage 2 "^kaudit: error: unknown inventory command 'frobnicate'\n${synopsis}\n$" frobnicate)
run(usage-none 2 "^kaudit: error: inventory needs a command \\(build, verify, lookup, diff, stats, names, calibrate\\)\n${synopsis}\n$")
run(usage-build 2 "^kaudit: error: inventory build needs at least one library or directory\n${synopsis}\n$" build)
run(usage-option 2 "^kaudit: error: unknown option '--frobnicate'\n${synopsis}\n$" names --frobnicate x)
run(usage-value 2 "^kaudit: error: option '--output' needs a value\n${synopsis}\n$" build --output)
run(help 0 "usage: kaudit inventory build" --help)

# verify --libraries: the files themselves, last because it changes one
run(verify-libraries 0 "verified: .*1 libraries \\(files checked\\)" verify --libraries ${WORK}/a.inv)
file(APPEND ${L}/libsynth_a.so.1 "x")
run(verify-libraries-changed 1 "library '.*libsynth_a.so.1' has [0-9]+ bytes, the inventory says [0-9]+"
    verify --libraries ${WORK}/a.inv)
file(REMOVE ${L}/libsynth_a.so.1)
run(verify-libraries-missing 1 "library '.*libsynth_a.so.1' listed by the inventory cannot be read"
    verify --libraries ${WORK}/a.inv)
