#!/usr/bin/env bash
# Build every native/tests/test_<family>.c against native/common.c and
# native/<family>.c, and run it:
#   plain  -O2 with the project's warnings-as-errors and hardening flags
#          (and, with SANITIZE_VALGRIND=1, the same build under valgrind's memcheck),
#   asan   AddressSanitizer + UndefinedBehaviorSanitizer (LeakSanitizer on),
#   tsan   ThreadSanitizer.
# A sanitizer the compiler or this machine cannot run is skipped with the
# reason printed; any failed check, sanitizer report or leak fails the script.
# The builds run one after another; each test program starts as soon as it is
# built, while the next one compiles (the programs mostly wait: on their
# partners, their watchdogs, their sleeps), at most SANITIZE_RUNS of them at once
# (default 4). The report lists them in order when all have ended.
# Usage: native/tests/run_sanitizers.sh [test_name ...]   (from the repository root)
set -u
cd "$(dirname "$0")/../.."
CC=${CC:-cc}
OUT=${SANITIZE_OUT:-build/sanitize}
mkdir -p "$OUT"

# The flags are the project's checks (every warning an error), kept in tools/cflags.py.
PYTHON=${PYTHON:-python3}
flags_of() {  # variant -> its flags, or the script stops
    "$PYTHON" tools/cflags.py "$1" || { printf 'sanitize: %s tools/cflags.py %s failed\n' "$PYTHON" "$1" >&2; exit 4; }
}
STRICT=$(flags_of plain) || exit 4
ASAN=$(flags_of asan) || exit 4
TSAN=$(flags_of tsan) || exit 4
# detect_stack_use_after_return: on by default from GCC 13 (a newer distribution's
# compiler); set here so every compiler checks the same way.
export ASAN_OPTIONS="detect_leaks=1:detect_stack_use_after_return=1:halt_on_error=1:abort_on_error=0:exitcode=66"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export TSAN_OPTIONS="halt_on_error=1:exitcode=66:second_deadlock_stack=1"
export LSAN_OPTIONS="exitcode=66"
# glibc keeps the stacks of joined threads for reuse (up to 40 MiB); with the
# cache off, a stack still mapped after a call is a leak, not a cached stack.
export GLIBC_TUNABLES="glibc.pthread.stack_cache_size=0"

failed=0
ran=0
RUNS=${SANITIZE_RUNS:-4}
results=()  # one file per build_and_run, in order: its report lines
say() { printf '%s\n' "$*"; }

# Can this compiler build and this machine run a program with these flags?
probe() {
    local flags=$1 probe_c="$OUT/probe.c" probe_bin="$OUT/probe-$2"
    printf '#include <pthread.h>\nstatic void *f(void *a){return a;}\nint main(void){pthread_t t;if(pthread_create(&t,0,f,0))return 1;return pthread_join(t,0);}\n' >"$probe_c"
    # shellcheck disable=SC2086
    if ! "$CC" $flags "$probe_c" -o "$probe_bin" 2>"$OUT/probe-$2.log"; then
        say "SKIP $2: $CC cannot build with '$flags' ($(head -c 200 "$OUT/probe-$2.log" | tr '\n' ' '))"
        return 1
    fi
    if ! "$probe_bin" >"$OUT/probe-$2.log" 2>&1; then
        say "SKIP $2: a program built with it does not run here ($(head -c 200 "$OUT/probe-$2.log" | tr '\n' ' '))"
        return 1
    fi
    return 0
}

# Run one built test program; its report goes to $result (first line: ok or FAIL).
run_one() {  # variant name bin log result runner...
    local variant=$1 name=$2 bin=$3 log=$4 result=$5
    shift 5
    if timeout 300 "$@" "$bin" >"$log" 2>&1; then
        say "ok   $variant $name ($(tail -n 1 "$log"))" >"$result"
    else
        { say "FAIL $variant $name (exit $?):"; sed 's/^/    /' "$log" | head -n 80; } >"$result"
    fi
}

build_and_run() {  # variant flags test_file
    local variant=$1 flags=$2 file=$3
    local name family bin log result
    name=$(basename "$file" .c)
    family=${name#test_}
    result="$OUT/$name-$variant.result"
    results+=("$result")
    local sources=(native/common.c)
    [ "$family" != common ] && sources+=("native/$family.c")
    for s in "${sources[@]}"; do
        if [ ! -f "$s" ]; then
            say "SKIP $variant $name: $s does not exist (kernel not written yet)" >"$result"
            return
        fi
    done
    bin="$OUT/$name-$variant"
    log="$OUT/$name-$variant.log"
    if [ "$variant" = valgrind ] && [ -x "$OUT/$name-plain" ]; then
        bin="$OUT/$name-plain"  # valgrind runs the plain build as it is
    # shellcheck disable=SC2086
    elif ! "$CC" $flags -Inative "$file" "${sources[@]}" -o "$bin" -lpthread 2>"$log"; then
        { say "FAIL $variant $name: does not compile"; cat "$log"; } >"$result"
        return
    fi
    local runner=()
    if [ "$variant" = valgrind ]; then
        runner=(valgrind --quiet --error-exitcode=66 --leak-check=full
                --errors-for-leak-kinds=definite,indirect --child-silent-after-fork=yes)
    fi
    ran=$((ran + 1))
    while [ "$(jobs -rp | wc -l)" -ge "$RUNS" ]; do
        wait -n
    done
    run_one "$variant" "$name" "$bin" "$log" "$result" "${runner[@]}" &
}

if [ $# -gt 0 ]; then
    tests=()
    for t in "$@"; do tests+=("native/tests/${t%.c}.c"); done
else
    tests=(native/tests/test_*.c)
fi

# SANITIZE_PLAIN=0 leaves out the plain build (make test: the extension itself is
# built with the same -O2 -Werror warnings, and ASan/TSan run the same checks).
variants=()
if [ "${SANITIZE_PLAIN:-1}" != 0 ]; then
    variants+=("plain|$STRICT")
fi
if [ "${SANITIZE_VALGRIND:-0}" != 1 ]; then
    say "SKIP valgrind: opt-in (SANITIZE_VALGRIND=1 make sanitize); ASan's LeakSanitizer checks leaks"
elif command -v valgrind >/dev/null 2>&1; then
    variants+=("valgrind|$STRICT")
else
    say "SKIP valgrind: not installed (ASan's LeakSanitizer still checks leaks)"
fi
probe "$ASAN" asan && variants+=("asan|$ASAN")
probe "$TSAN" tsan && variants+=("tsan|$TSAN")

for v in "${variants[@]}"; do
    for file in "${tests[@]}"; do
        build_and_run "${v%%|*}" "${v#*|}" "$file"
    done
done

wait  # every program started (each bounded by its timeout)
for result in "${results[@]}"; do
    cat "$result"
    if [ "$(head -c 4 "$result")" = FAIL ]; then
        failed=1
    fi
done

if [ "$failed" -ne 0 ]; then
    say "sanitize: FAILED"
    exit 1
fi
say "sanitize: $ran runs clean"
