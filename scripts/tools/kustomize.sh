#!/usr/bin/env bash
# Installs kustomize (once) with the Go toolchain and prints the binary's path on stdout.
#
#   scripts/tools/kustomize.sh                         -> /var/tmp/acm-tools/bin/kustomize
#   "$(scripts/tools/kustomize.sh)" build k8s/overlays/dev
#
# No Docker and no downloaded release binaries: `go install` builds kustomize from the Go module
# proxy. The first install takes ~40 s (module download + compile, measured on the dev box);
# later calls only check that the binary is there.
#
# Env: ACM_TOOLS_DIR      install root (default /var/tmp/acm-tools; the binary goes to its bin/)
#      KUSTOMIZE_VERSION  pin one version; unset, the newest candidate the local Go can build wins
#                         (v5.8.3 needs go >= 1.27, v5.8.2 go >= 1.26, v5.7.1 go >= 1.22.7).
set -euo pipefail

CANDIDATES=(v5.8.2 v5.7.1)
TOOLS_DIR="${ACM_TOOLS_DIR:-/var/tmp/acm-tools}"
BIN_DIR="$TOOLS_DIR/bin"
BIN="$BIN_DIR/kustomize"
STAMP="$BIN_DIR/.kustomize-version"

if [[ -n "${KUSTOMIZE_VERSION:-}" ]]; then
    CANDIDATES=("$KUSTOMIZE_VERSION")
fi

# Already installed: any candidate will do unless a version was pinned.
if [[ -x "$BIN" && -f "$STAMP" ]]; then
    installed="$(cat "$STAMP")"
    for v in "${CANDIDATES[@]}"; do
        if [[ "$installed" == "$v" ]]; then
            echo "$BIN"
            exit 0
        fi
    done
fi

if ! command -v go >/dev/null 2>&1; then
    echo "kustomize.sh: the Go toolchain (go) is needed to install kustomize" >&2
    exit 1
fi

mkdir -p "$BIN_DIR"
# Build into a temporary GOBIN and move the result in place, so an interrupted or concurrent
# install never leaves a half-written binary at $BIN.
tmp_bin="$(mktemp -d "$TOOLS_DIR/.kustomize-install.XXXXXX")"
trap 'rm -rf "$tmp_bin"' EXIT

for v in "${CANDIDATES[@]}"; do
    echo "kustomize.sh: go install sigs.k8s.io/kustomize/kustomize/v5@$v -> $BIN_DIR" >&2
    if GOBIN="$tmp_bin" go install "sigs.k8s.io/kustomize/kustomize/v5@$v" >&2; then
        mv -f "$tmp_bin/kustomize" "$BIN"
        echo "$v" >"$STAMP"
        echo "$BIN"
        exit 0
    fi
    echo "kustomize.sh: $v did not install with $(go version)" >&2
done
echo "kustomize.sh: no kustomize version could be installed (tried: ${CANDIDATES[*]})" >&2
exit 1
