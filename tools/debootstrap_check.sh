#!/usr/bin/env bash
# A reader's fresh Debian: make a Debian 13 (trixie) root with debootstrap holding only
# what the README asks for (python3, python3-venv, build-essential, git), clone this
# repository into it and run the two commands there, timing each:
#   make test    (TESTS='tests/test_x.py ...' runs those files instead of the whole suite)
#   make paper   (PARAMS=params/quick.yaml by default: the study's quick parameters)
#
# Usage (as root, from anywhere in the repository):
#   tools/debootstrap_check.sh [ROOT]        ROOT defaults to /var/tmp/threadcost-debian13
# Environment: SUITE (trixie), MIRROR (this machine's Debian mirror), REF (the commit to
# clone: HEAD), PARAMS, TESTS, STEPS ("paper test", in that order: the paper runs first
# in the fresh clone, so its time includes the setup; drop one to skip it; "setup" times
# make setup alone), KEEP_ROOT=1
# (reuse an existing root: skips debootstrap; the clone is always made anew).
#
# So that the package registries answer from inside the root as they do here, it copies
# in this machine's extra CA certificates (/usr/local/share/ca-certificates, then
# update-ca-certificates), /etc/pip.conf, the PIP_*/UV_*/SSL_* variables, uv's, cargo's
# and npm's configuration if present, /etc/resolv.conf and apt's proxy settings.
# proc, sys and dev are mounted for the run and unmounted on exit.
set -euo pipefail

ROOT=${1:-/var/tmp/threadcost-debian13}
SUITE=${SUITE:-trixie}
PARAMS=${PARAMS:-params/quick.yaml}
STEPS=${STEPS-paper test}
REPO=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
REF=$(git -C "$REPO" rev-parse "${REF:-HEAD}")
LOG_DIR=${LOG_DIR:-$REPO/build/debootstrap}
mkdir -p "$LOG_DIR"
say() { printf 'debootstrap_check: %s\n' "$*"; }
die() { say "$*" >&2; exit 4; }

[ "$(id -u)" = 0 ] || die "needs root (debootstrap, chroot and mounts)"
command -v debootstrap >/dev/null || die "debootstrap is not installed (apt-get install debootstrap)"

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

mounted=()
cleanup() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" 2>/dev/null || true; done
}
trap cleanup EXIT

elapsed() { printf '%d min %02d s' $(($1 / 60)) $(($1 % 60)); }
# The 1-minute load average and the CPUs: a time on a shared machine means little without them.
load() { printf 'load %s on %s CPUs' "$(cut -d' ' -f1 /proc/loadavg)" "$(nproc)"; }

if [ "${KEEP_ROOT:-0}" = 1 ] && [ -x "$ROOT/usr/bin/python3" ]; then
    say "reusing $ROOT"
else
    rm -rf "$ROOT"
    say "debootstrap $SUITE into $ROOT from $MIRROR"
    start=$SECONDS
    debootstrap --include=python3,python3-venv,build-essential,git,ca-certificates \
        "$SUITE" "$ROOT" "$MIRROR" >"$LOG_DIR/debootstrap.log" 2>&1 \
        || die "debootstrap failed: $(tail -n 3 "$LOG_DIR/debootstrap.log" | tr '\n' ' ')"
    say "debootstrap: $(elapsed $((SECONDS - start)))"
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
        *) die "unknown step $step (setup, paper, test)" ;;
    esac
    say "running: ${cmd[*]} (log: $LOG_DIR/$step.log; $(load))"
    start=$SECONDS
    if in_root "${cmd[@]}" >"$LOG_DIR/$step.log" 2>&1; then
        say "$step passed in $(elapsed $((SECONDS - start))) ($(load) at the end)"
    else
        rc=$?
        status=1
        say "$step FAILED (exit $rc) after $(elapsed $((SECONDS - start))) ($(load) at the end); last lines:"
        tail -n 15 "$LOG_DIR/$step.log" | sed 's/^/    /'
    fi
done
exit $status
