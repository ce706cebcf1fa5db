# pylines.py - checks the compact line tables collect-timer wrote
# (profview-raw(5): a pycode record's flag 0x10000) against the lines the
# interpreter running this script gives each instruction of the same code
# objects, compiled again from their files.
#
# usage: rawdump TRACE | python3.X pylines.py MIN
#        python3.X pylines.py --tables FILE... | rawdump --pylines
#        rawdump TRACE | python3.X pylines.py --names MIN
#
# Reads rawdump's pycode lines; for each code object with a compact table
# whose file exists (not "<frozen ...>"), finds the code of the same name
# and first line in the file compiled again, and compares the line of
# every instruction (code unit) of it.  Prints "compared CODES UNITS" and
# exits 1 on a difference, or when fewer than MIN code objects had a
# counterpart.  With --tables: writes, for every code object of the
# files, its line table as the collector reads it (co_lnotab before 3.10)
# with the line of each code unit, for rawdump --pylines to look up.
# With --names: checks that each packed code object (rawdump's pyentry
# lines, and the run's names' runentry lines, its names as the reader
# makes them of the strings shared) whose
# file name is a path is of a file that exists, and names a code object of
# that file compiled again, by its name and first line; prints "named
# CODES", exits 1 on one that does not or when fewer than MIN did.
import dis
import os
import sys
import types


def leb128(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 127) << shift
        shift += 7
        if not c & 128:
            return v, i


def compact_line(table, first, unit):
    line, at, i = first, 0, 0
    while i < len(table):
        units, i = leb128(table, i)
        v, i = leb128(table, i)
        z = v >> 1
        if not v & 1:
            line += (z >> 1) ^ -(z & 1)
        if units == 0 or unit < at + units:
            return 0 if v & 1 or line <= 0 else line
        at += units
    return 0


def lines_of(code):
    """the line of each code unit, as the interpreter says"""
    n = len(code.co_code) // 2
    if hasattr(code, "co_lines"):
        out = [0] * n
        for start, end, line in code.co_lines():
            for o in range(start, min(end, 2 * n), 2):
                out[o // 2] = line or 0
        return out
    starts = dict(dis.findlinestarts(code))
    out, cur = [], code.co_firstlineno
    for o in range(0, 2 * n, 2):
        cur = starts.get(o, cur)
        out.append(cur)
    return out


def codes_of(path, cache={}):
    if path not in cache:
        found = {}
        try:
            with open(path, encoding="utf-8") as f:
                todo = [compile(f.read(), path, "exec")]
        except (OSError, SyntaxError, ValueError):
            todo = []
        while todo:
            c = todo.pop()
            found[(getattr(c, "co_qualname", c.co_name), c.co_firstlineno)] = c
            todo += [k for k in c.co_consts if isinstance(k, types.CodeType)]
        cache[path] = found
    return cache[path]


def tables(paths):
    v = sys.version_info
    for path in paths:
        for code in codes_of(path).values():
            t = code.co_lnotab if v < (3, 10) else code.co_linetable
            units = " ".join(str(x) for x in lines_of(code))
            print(f"{v[0] << 8 | v[1]:x} {code.co_firstlineno} {t.hex() or '-'} {units}")


def names(want):
    ncodes = bad = 0
    for row in sys.stdin:
        f = row.rstrip("\n").split("\t")
        # (not a file: "<frozen ...>", "<string>", and from 3.12 on the
        # interpreter's shim that runs after a class's __init__, a code
        # object whose file name is its name, "__init__")
        if not f[0].startswith(("pyentry ", "runentry ")) or len(f) < 3 or "/" not in f[1]:
            continue
        if not os.path.isfile(f[1]):
            bad += 1
            if bad <= 5:
                print(f"{f[2]}: no file {f[1]}")
            continue
        found = codes_of(f[1])
        if not found:
            continue  # (a file that does not compile here)
        ncodes += 1
        if (f[2], int(f[0].split()[2])) not in found:
            bad += 1
            if bad <= 5:
                print(f"{f[2]} at line {f[0].split()[2]} is not in {f[1]}")
    print("named", ncodes)
    sys.exit(1 if bad or ncodes < want else 0)


def main():
    if sys.argv[1] == "--tables":
        tables(sys.argv[2:])
        return
    if sys.argv[1] == "--names":
        names(int(sys.argv[2]))
        return
    want = int(sys.argv[1])
    files, records = {}, []
    for row in sys.stdin:
        f = row.rstrip("\n").split("\t")
        if f[0] != "pycode" or len(f) < 8:
            continue
        index, first, version = int(f[2]), int(f[3]), int(f[4], 16)
        if not f[6].startswith("@"):
            files[index] = f[6]
        records.append((index, first, version, f[5], f[6], "\t".join(f[7:])))
    ncodes = nunits = bad = 0
    for index, first, version, table, file, name in records:
        if file.startswith("@"):
            file = files.get(int(file[1:]), "")
        if not version & 0x10000 or not os.path.isfile(file):
            continue
        code = codes_of(file).get((name, first))
        if code is None:
            continue
        table = b"" if table == "-" else bytes.fromhex(table)
        ncodes += 1
        for unit, line in enumerate(lines_of(code)):
            nunits += 1
            got = compact_line(table, first, unit)
            if got != line:
                bad += 1
                if bad <= 5:
                    print(f"{name} ({file}): unit {unit} at line {got}, the interpreter says {line}")
    print("compared", ncodes, nunits)
    sys.exit(1 if bad or ncodes < want else 0)


main()
