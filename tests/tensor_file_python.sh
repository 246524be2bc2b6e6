#!/bin/sh
# The Python writer and the C reader against each other.
# Usage: tensor_file_python.sh PYTHON CHECKER SOURCE_DIR WORK_DIR
# PYTHON is empty when configure found no python with torch: exit 77 (skipped).
py=$1 checker=$2 src=$3 work=$4
if [ -z "$py" ]; then
  echo "skipped: no python with torch at configure time"
  exit 77
fi
mkdir -p "$work" || exit 99
file=$work/sample.katensor
rm -f "$file"
"$py" "$src/tests/python/write_tensor_sample.py" "$src/runner" "$file" || exit 1
exec "$checker" "$file"
