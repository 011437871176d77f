# Sourced by the end-to-end scripts (from the repository's root, with $root set): sets $venv to
# the Python environment of tests/e2e, (re)made whenever tests/e2e/requirements.txt differs from
# the one it was made with.
venv="${E2E_VENV:-$root/.build/e2e-venv}"
if [ ! -x "$venv/bin/pytest" ] || ! cmp -s tests/e2e/requirements.txt "$venv/requirements.txt"; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q -r tests/e2e/requirements.txt
  cp tests/e2e/requirements.txt "$venv/requirements.txt"
fi
