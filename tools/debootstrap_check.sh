#!/usr/bin/env bash
# A reader's fresh Debian: make a Debian 13 (trixie) root with debootstrap holding only
# what the README asks for (python3, python3-venv, build-essential, git), clone this
# repository into it and run the two commands there, timing each:
#   make test    (TESTS='tests/test_x.py ...' runs those files instead of the whole suite)
#   make paper   (PARAMS=params/quick.yaml by default: the study's quick parameters)
# .ci/run runs its second lane with it (KEEP_ROOT=1 STEPS=test).
#
# Usage (as root, from anywhere in the repository):
#   tools/debootstrap_check.sh [ROOT]
# ROOT defaults to ${XDG_CACHE_HOME:-$HOME/.cache}/threadcost/debian13 (outside any clone,
# so a later run, CI's on a new clone included, can reuse it).
# Environment: SUITE (trixie), MIRROR (this machine's Debian mirror), REF (the commit to
# clone: HEAD), PARAMS, TESTS, STEPS ("paper test", in that order: the paper runs first
# in the fresh clone, so its time includes the setup; drop one to skip it; "setup" times
# make setup alone), STEP_TIMEOUT_S (each step's deadline, 1800), KEEP_ROOT=1
# (reuse the root made before when it is intact: made whole by this script for the same
# suite and packages, under ROOT_MAX_AGE_DAYS old (30), its python3 with venv and
# ensurepip, cc, make and git running; else it is made anew; the clone is always made
# anew). The root is built beside ROOT and moved into place only once debootstrap has
# finished, so an interrupted build never leaves a root that looks intact; a lock
# beside it keeps two runs from sharing one.
#
# Exit status: 0 every step passed, 1 a step failed, 4 no root could be had (not root,
# no debootstrap, debootstrap failed: no network, no mirror), 2 a usage error.
#
# So that the package registries answer from inside the root as they do here, it copies
# in this machine's extra CA certificates (/usr/local/share/ca-certificates, then
# update-ca-certificates), /etc/pip.conf, the PIP_*/UV_*/SSL_* variables, uv's, cargo's
# and npm's configuration if present, /etc/resolv.conf and apt's proxy settings.
# proc, sys and dev are mounted for the run and unmounted on exit; a process the run
# left inside the root is ended then too.
set -euo pipefail

say() { printf 'debootstrap_check: %s\n' "$*"; }
die() { say "$*" >&2; exit 4; }

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot and mounts)"
command -v debootstrap >/dev/null || die "debootstrap is not installed (apt-get install debootstrap)"

ROOT=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/threadcost/debian13}
ROOT=$(realpath -m "$ROOT")
SUITE=${SUITE:-trixie}
PACKAGES=python3,python3-venv,build-essential,git,ca-certificates
STAMP=etc/threadcost-root  # inside the root: what it was made of, written once it is whole
STEP_TIMEOUT_S=${STEP_TIMEOUT_S:-1800}
ROOT_MAX_AGE_DAYS=${ROOT_MAX_AGE_DAYS:-30}
PARAMS=${PARAMS:-params/quick.yaml}
STEPS=${STEPS-paper test}
REPO=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
REF=$(git -C "$REPO" rev-parse "${REF:-HEAD}")
LOG_DIR=${LOG_DIR:-$REPO/build/debootstrap}
mkdir -p "$LOG_DIR"

# The mirror this machine's apt uses (deb822 sources first, then sources.list).
if [ -z "${MIRROR:-}" ]; then
    MIRROR=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\/debian\)\/\{0,1\}$/\1/p' \
                 /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
    [ -n "$MIRROR" ] || MIRROR=$(awk '$1 == "deb" && $2 ~ /\/debian\/?$/ {print $2; exit}' \
                                     /etc/apt/sources.list 2>/dev/null || true)
    MIRROR=${MIRROR:-http://deb.debian.org/debian}
fi
# apt's proxy, if this machine sets one, for debootstrap's downloads too.
proxy=$(apt-config dump 2>/dev/null | sed -n 's/^Acquire::http::Proxy "\(.*\)";$/\1/p' | head -n 1)
[ -n "$proxy" ] && export http_proxy=${http_proxy:-$proxy}

# Only one run uses a root at a time (another run's mounts and processes are its own).
mkdir -p "$(dirname "$ROOT")"
exec 9>"$ROOT.lock"
flock -w "$STEP_TIMEOUT_S" 9 || die "another run has held $ROOT.lock for $STEP_TIMEOUT_S s"

mounts_under() {  # dir: the mount points at or under dir, deepest first
    awk -v d="$1" '$2 == d || index($2, d "/") == 1 {print $2}' /proc/self/mounts | sort -r
}
end_processes_in() {  # dir: end every process whose root is dir (this run's, under the lock)
    local p ended=0
    for p in /proc/[0-9]*; do
        [ "$(readlink "$p/root" 2>/dev/null)" = "$1" ] || continue
        kill -KILL "${p#/proc/}" 2>/dev/null && ended=$((ended + 1))
    done
    [ "$ended" = 0 ] || say "ended $ended process(es) left in $1"
}
unmount_under() {  # dir
    local m
    while read -r m; do
        [ -n "$m" ] && umount -l "$m" 2>/dev/null || true
    done < <(mounts_under "$1")
}
remove_root() {  # dir: never through a mount (a bound /dev or /sys)
    [ -e "$1" ] || return 0
    end_processes_in "$1"
    unmount_under "$1"
    [ -z "$(mounts_under "$1")" ] || die "$1 still has mounts; not removing it"
    rm -rf --one-file-system "$1"
}
cleanup() {
    end_processes_in "$ROOT"
    unmount_under "$ROOT"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

elapsed() { printf '%d min %02d s' $(($1 / 60)) $(($1 % 60)); }
# The 1-minute load average and the CPUs: a time on a shared machine means little without them.
load() { printf 'load %s on %s CPUs' "$(cut -d' ' -f1 /proc/loadavg)" "$(nproc)"; }

stamp_text="suite=$SUITE packages=$PACKAGES"
intact() {  # why the root at $ROOT cannot be reused (nothing: it can)
    if [ ! -f "$ROOT/$STAMP" ]; then echo "not made whole by this script"; return; fi
    if [ "$(cat "$ROOT/$STAMP")" != "$stamp_text" ]; then echo "made of other packages"; return; fi
    if [ -n "$(find "$ROOT/$STAMP" -mtime +"$ROOT_MAX_AGE_DAYS")" ]; then
        echo "older than $ROOT_MAX_AGE_DAYS days"; return
    fi
    unmount_under "$ROOT"  # what a killed run left mounted
    chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin sh -c \
        'python3 -c "import ensurepip, venv" && cc --version && make --version && git --version' \
        >/dev/null 2>&1 || echo "its python3, cc, make or git does not run"
}

start=$SECONDS
why=
[ "${KEEP_ROOT:-0}" = 1 ] && why=$(intact)
if [ "${KEEP_ROOT:-0}" = 1 ] && [ -z "$why" ]; then
    say "reusing the root at $ROOT (checked in $((SECONDS - start)) s)"
else
    [ "${KEEP_ROOT:-0}" = 1 ] && [ -e "$ROOT" ] && say "not reusing $ROOT: $why"
    remove_root "$ROOT.new"
    debootstrap --include="$PACKAGES" "$SUITE" "$ROOT.new" "$MIRROR" \
        >"$LOG_DIR/debootstrap.log" 2>&1 || {
        remove_root "$ROOT.new"
        die "debootstrap failed: $(tail -n 3 "$LOG_DIR/debootstrap.log" | tr '\n' ' ')"
    }
    printf '%s\n' "$stamp_text" >"$ROOT.new/$STAMP"
    remove_root "$ROOT"
    mv "$ROOT.new" "$ROOT"
    say "debootstrap $SUITE into $ROOT from $MIRROR: $(elapsed $((SECONDS - start)))"
fi

# The registries as this machine reaches them.
cp /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null || true
if [ -d /usr/local/share/ca-certificates ]; then
    mkdir -p "$ROOT/usr/local/share/ca-certificates"
    cp -r /usr/local/share/ca-certificates/. "$ROOT/usr/local/share/ca-certificates/"
    chroot "$ROOT" update-ca-certificates >/dev/null 2>&1 \
        || cp /etc/ssl/certs/ca-certificates.crt "$ROOT/etc/ssl/certs/ca-certificates.crt"
fi
for f in /etc/pip.conf /etc/uv/uv.toml /root/.config/pip/pip.conf /root/.config/uv/uv.toml \
         /root/.cargo/config.toml /root/.npmrc /etc/apt/apt.conf.d/*proxy*; do
    [ -f "$f" ] || continue
    mkdir -p "$ROOT$(dirname "$f")"
    cp "$f" "$ROOT$f"
done
mapfile -t pass_env < <(env | grep -E '^(PIP_|UV_|SSL_CERT_|REQUESTS_CA_BUNDLE=|CURL_CA_BUNDLE=|GIT_SSL_CAINFO=|https?_proxy=|no_proxy=)' || true)

for fs in proc sys dev dev/pts; do
    mkdir -p "$ROOT/$fs"
    case $fs in
        proc) mount -t proc proc "$ROOT/proc" ;;
        sys) mount --rbind /sys "$ROOT/sys" ;;
        dev) mount --rbind /dev "$ROOT/dev" ;;
        dev/pts) continue ;;  # came with the recursive bind of /dev
    esac
    mounted+=("$ROOT/$fs")
done

# A fresh clone of the commit under test, as a reader would have it.
rm -rf "$ROOT/root/threadcost"
git clone --quiet --no-checkout "$REPO" "$ROOT/root/threadcost"
git -C "$ROOT/root/threadcost" checkout --quiet "$REF"
say "cloned $(git -C "$REPO" rev-parse --short "$REF") into $ROOT/root/threadcost"
say "inside: $(chroot "$ROOT" sh -c '. /etc/os-release; echo "$PRETTY_NAME"'), $(chroot "$ROOT" python3 --version), $(chroot "$ROOT" cc --version | head -n 1)"

in_root() {  # command... : run in the clone inside the root, with a plain environment
    chroot "$ROOT" /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "${pass_env[@]}" \
        sh -c 'cd /root/threadcost && exec "$@"' in_root "$@"
}

status=0
for step in $STEPS; do
    case $step in
        test) if [ -n "${TESTS:-}" ]; then
                  # shellcheck disable=SC2086
                  cmd=(sh -c "make setup && .venv/bin/python -m pytest -p no:cacheprovider -n 2 $TESTS")
              else cmd=(make test); fi ;;
        paper) cmd=(make paper "PARAMS=$PARAMS") ;;
        setup) cmd=(make setup) ;;  # the setup alone, timed (a fresh clone each run)
        *) say "unknown step $step (setup, paper, test)" >&2; exit 2 ;;
    esac
    say "running: ${cmd[*]} (log: $LOG_DIR/$step.log; $(load))"
    start=$SECONDS
    if in_root timeout --kill-after=30 "$STEP_TIMEOUT_S" "${cmd[@]}" \
            >"$LOG_DIR/$step.log" 2>&1; then
        say "$step passed in $(elapsed $((SECONDS - start))) ($(load) at the end)"
        # the last line of a test run is pytest's count ("N passed, N skipped in T s")
        [ "$step" = test ] && printf '    %s\n' "$(tail -n 1 "$LOG_DIR/$step.log")"
    else
        rc=$?
        status=1
        say "$step FAILED (exit $rc) after $(elapsed $((SECONDS - start))) ($(load) at the end); last lines:"
        tail -n 15 "$LOG_DIR/$step.log" | sed 's/^/    /'
    fi
done
exit $status
