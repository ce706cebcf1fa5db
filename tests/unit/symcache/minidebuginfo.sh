#!/bin/sh
# minidebuginfo.sh IN OUT - OUT is IN stripped of .symtab, with the
# symbols .dynsym lacks in an xz-compressed ELF file in .gnu_debugdata
# ("MiniDebugInfo", as Fedora ships its programs): libdwfl then reads
# .dynsym as the main table and the embedded .symtab as an auxiliary one.
set -eu
in=$1 out=$2
tmp=$out.tmp
nm -D --defined-only --format=posix "$in" | awk '{ print $1 }' > "$tmp.dynsyms"
objcopy --only-keep-debug --strip-symbols="$tmp.dynsyms" "$in" "$tmp.debug"
rm -f "$tmp.debug.xz"
xz -q "$tmp.debug"
strip --strip-all -o "$tmp.stripped" "$in"
objcopy --add-section .gnu_debugdata="$tmp.debug.xz" "$tmp.stripped" "$out"
rm -f "$tmp.dynsyms" "$tmp.debug.xz" "$tmp.stripped"
