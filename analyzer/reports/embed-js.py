#!/usr/bin/env python3
"""embed-js.py NAME IN.js OUT.c: the script IN.js as the C string NAME.

The reports write their scripts into a CDATA section of an SVG file that
may also be put inline in HTML, so a script must hold neither "]]>" nor
"</": the build stops on either.
"""
import sys


def literal(line):
    out = []
    for ch in line:
        if ch in '\\"':
            out.append('\\' + ch)
        elif ch == '\n':
            out.append('\\n')
        elif ch == '\t':
            out.append('\\t')
        elif ord(ch) < 0x20 or ord(ch) == 0x7f:
            out.append('\\%03o' % ord(ch))
        else:
            out.append(ch)
    return '"' + ''.join(out) + '"'


def main():
    name, src, dst = sys.argv[1:4]
    with open(src, encoding='utf-8') as f:
        text = f.read()
    for bad in (']]>', '</'):
        if bad in text:
            sys.exit('%s: holds "%s", which would end the script early' % (src, bad))
    lines = text.splitlines(keepends=True) or ['']
    with open(dst, 'w', encoding='utf-8') as f:
        f.write('/* Generated from %s by embed-js.py: edit that file. */\n' % src.split('/')[-1])
        f.write('#include "scripts.h"\n\n')
        f.write('const char %s[] =\n' % name)
        f.write('\n'.join('\t' + literal(l) for l in lines))
        f.write(';\n')


main()
