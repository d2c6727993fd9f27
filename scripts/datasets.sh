#!/usr/bin/env bash
# Lays out the public datasets the real-data test and `npm run bench -- --only learn-real` read
# (src/train/datasets/local.ts) from bare git mirrors of their repositories, without a checkout.
# Usage: scripts/datasets.sh MIRROR_DIR OUT_DIR
#   MIRROR_DIR holds anthropics+hh-rlhf/repo and microsoft+CodeXGLUE/repo (bare repositories).
# Prints OUT_DIR when at least one dataset was laid out; exits 1 (saying why) when none was.
set -euo pipefail
mirror=${1:?usage: scripts/datasets.sh MIRROR_DIR OUT_DIR} out=${2:?usage: scripts/datasets.sh MIRROR_DIR OUT_DIR}
found=0
take() { # repo-dir path-in-repo dest
  local git="$mirror/$1/repo"
  [[ -d "$git" ]] || return 0
  git --git-dir="$git" cat-file -e "HEAD:$2" 2>/dev/null || return 0
  mkdir -p "$(dirname "$out/$3")"
  git --git-dir="$git" show "HEAD:$2" >"$out/$3"
  found=1
}
take anthropics+hh-rlhf harmless-base/test.jsonl.gz hh-rlhf/harmless-base/test.jsonl.gz
take anthropics+hh-rlhf helpful-base/test.jsonl.gz hh-rlhf/helpful-base/test.jsonl.gz
for f in test.buggy-fixed.buggy test.buggy-fixed.fixed; do
  take microsoft+CodeXGLUE "Code-Code/code-refinement/data/small/$f" "CodeXGLUE/Code-Code/code-refinement/data/small/$f"
done
[[ $found == 1 ]] || { echo "no dataset found under $mirror" >&2; exit 1; }
echo "$out"
