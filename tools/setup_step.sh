#!/bin/sh
# One step of `make setup` (creating .venv, installing the lock, building the kernels):
#   tools/setup_step.sh WHAT COMMAND [ARG...]
# The command's output goes to build/setup.log (appended: every step of one setup). On
# success nothing is printed; on failure one line names the step, its most telling
# line (the first error, else the last line) and the log, and the exit status is 4 (the
# README's code for a system or disk problem: no network, a full disk, a missing tool).
what=$1
shift
log=build/setup.log
mkdir -p build 2>/dev/null || { echo "setup: cannot create build/ here (check the disk and the folder's permissions)" >&2; exit 4; }
printf '== %s: %s\n' "$what" "$*" >>"$log" 2>/dev/null
start=$(wc -l <"$log" 2>/dev/null || echo 0)
if "$@" >>"$log" 2>&1; then
    exit 0
fi
out=$(tail -n "+$((start + 1))" "$log" 2>/dev/null)
# The most telling line: a compiler's error (file:line: error), a disk or permission
# error, a command that failed inside a build, else the first line saying error.
for pattern in '\.[ch]:[0-9]+(:[0-9]+)?: (fatal )?error' 'No space left|Permission denied|Read-only file system' \
               'error: [Cc]ommand' 'error|failed|not found'; do
    line=$(printf '%s\n' "$out" | grep -m 1 -iE "$pattern" || true)
    [ -z "$line" ] || break
done
[ -n "$line" ] || line=$(printf '%s\n' "$out" | grep -v '^[[:space:]]*$' | tail -n 1)
line=$(printf '%s' "$line" | sed 's/^[[:space:]]*//' | cut -c 1-300)
case $out in
    *"No space left"*) hint="free space on this disk" ;;
    *) hint="full output: $log" ;;
esac
echo "setup: $what failed: ${line:-no output} ($hint)" >&2
exit 4
