# Sourced by scripts/demo and scripts/test: create .venv (once) and install mastkit into it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${MASTKIT_VENV:-$ROOT/.venv}"
PY="${PYTHON:-python3}"
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip
fi
"$VENV/bin/python" -m pip install -q -e "$ROOT${MASTKIT_EXTRAS:-}" 2>&1 | grep -v "^WARNING: Location" || true
