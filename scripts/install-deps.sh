#!/usr/bin/env bash
# Installs what building and running onboard needs on Debian 12 (`install-deps.sh run`: the
# libraries it links and PostgreSQL for the embedded cluster), and by default also what its tests
# need; only what is missing. Needs root (or sudo) for apt-get; the Swift toolchain itself is
# assumed present.
set -euo pipefail

packages=(libpq-dev libssl-dev zlib1g-dev libcrypt-dev libcurl4-openssl-dev postgresql pkg-config)
if [ "${1:-test}" != run ]; then
  # python3-aiosmtpd and openssl: the tests' SMTP server (tests/smtp/sink.py) and its certificate.
  # node-typescript (tsc) and mypy: the type checks of `onboard gen types`' TypeScript and Python
  # (Tests/TypeGenTests). Chromium and its driver: the dashboard's browser test.
  packages+=(python3-venv curl jq chromium chromium-driver python3-aiosmtpd openssl node-typescript mypy)
fi
missing=()
for package in "${packages[@]}"; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Debian's postgresql package starts a cluster of its own on port 5432; onboard never uses it.
command -v swift >/dev/null || { echo "the Swift toolchain (swift) is not on PATH" >&2; exit 1; }
