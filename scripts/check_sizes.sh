#!/usr/bin/env bash
# scripts/check_sizes.sh — keeps the house livable (a CI step of scripts/test.sh): no source
# file over 700 lines, no C/C++ function over 100 lines (as Debian's pmccabe counts them,
# from its opening line to its closing brace). Generated tables are exempt, listed below.
# Prints each offender and exits 1 if there is any.
set -euo pipefail
cd "$(dirname "$0")/.."

max_file_lines=700
max_function_lines=100
generated=(compiler/frontend/onnx/onnx_schemas_data.cc)  # scripts/gen_onnx_schemas.py

is_generated() {
  local g
  for g in "${generated[@]}"; do [ "$1" = "$g" ] && return 0; done
  return 1
}

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cc' '*.h' '*.c' '*.py' '*.js' '*.ts' '*.sh' '*.cmake' \
    'CMakeLists.txt' '*/CMakeLists.txt')
else
  mapfile -t files < <(find . -path ./build -prune -o -type f \( -name '*.cc' -o -name '*.h' \
    -o -name '*.c' -o -name '*.py' -o -name '*.js' -o -name '*.ts' -o -name '*.sh' \
    -o -name '*.cmake' -o -name CMakeLists.txt \) -print | sed 's|^\./||')
fi

bad=0
cxx=()
for f in "${files[@]}"; do
  is_generated "$f" && continue
  n=$(wc -l <"$f")
  if [ "$n" -gt "$max_file_lines" ]; then
    echo "file over $max_file_lines lines: $f ($n)"
    bad=1
  fi
  case "$f" in *.cc | *.h | *.c) cxx+=("$f") ;; esac
done

# pmccabe columns: modified and traditional complexity, statements, first line, lines,
# then "file(line): name".
while IFS=$'\t' read -r _ _ _ _ lines where; do
  if [ "$lines" -gt "$max_function_lines" ]; then
    echo "function over $max_function_lines lines: $where ($lines)"
    bad=1
  fi
done < <(pmccabe "${cxx[@]}" 2>/dev/null)

[ "$bad" -eq 0 ] && echo "sizes: ${#files[@]} files, none over $max_file_lines lines;" \
  "no C/C++ function over $max_function_lines lines"
exit "$bad"
