#!/usr/bin/env bash
# Static checks of the Python worker SDK (sdks/python): black's formatting, flake8 and mypy --strict over
# the package, its tests and its examples (settings in sdks/python/pyproject.toml and .flake8). `npm run
# check` runs it. The tools are Debian's (black, flake8, mypy, python3-grpcio, python3-protobuf,
# python3-pytest: .ci/run installs them); the repository's .python-version makes pyenv's python3 that one.
set -euo pipefail
cd "$(dirname "$0")/../sdks/python"

missing=()
for module in black flake8 mypy grpc google.protobuf; do
  python3 -c "import ${module}" >/dev/null 2>&1 || missing+=("${module}")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "check-python: $(command -v python3) ($(python3 --version 2>&1)) lacks: ${missing[*]}" >&2
  echo "check-python: apt-get install black flake8 mypy python3-grpcio python3-protobuf" >&2
  exit 1
fi

echo "check-python: black"
python3 -m black --check --quiet .
echo "check-python: flake8"
python3 -m flake8
echo "check-python: mypy --strict"
python3 -m mypy
