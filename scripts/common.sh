# common.sh - what scripts/demo and scripts/test share: install what is
# missing, then configure and build.  Sourced, not run.

# Debian packages the build and the tests need.
# binutils-dev: libbfd (second symbolizer, C++ demangler); protobuf-c: pprof's
# profile.proto; g++ and binutils
# (addr2line) for the symbolizer cross-check test; graphviz (libgvc, libcgraph)
# lays out and draws --svg.
PROFVIEW_PACKAGES="meson ninja-build gcc g++ libc6-dev pkg-config libdw-dev libelf-dev zlib1g-dev libdeflate-dev libprotobuf-c-dev protobuf-c-compiler binutils binutils-dev groff-base libc6-dbg libgraphviz-dev libncurses-dev"
# The Go pprof, built offline from Debian's sources by scripts/install-pprof.
PROFVIEW_PPROF_PACKAGES="golang-go golang-github-google-pprof-dev golang-github-ianlancetaylor-demangle-dev golang-github-chzyer-readline-dev"
# Only the tests need these: the peers whose files and output they compare
# against (gperftools' libprofiler.so and google-pprof, the Go pprof, perf);
# xmllint and headless Chromium check and render the SVG reports; clang
# builds the fuzz targets (scripts/fuzz), and libclang-rt-14-dev, which
# clang only recommends, holds libFuzzer and the ASan and UBSan runtimes;
# sqlite3, a real program the attach test profiles while it runs a query.
PROFVIEW_TEST_PACKAGES="gdb elfutils strace python3.11-dbg linux-perf google-perftools libgoogle-perftools-dev libxml2-utils chromium tmux clang libclang-rt-14-dev sqlite3 $PROFVIEW_PPROF_PACKAGES"

missing_packages() {
	local p missing=""
	for p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
			missing="$missing $p"
	done
	echo "${missing# }"
}

# install_packages PKG...: apt-get what is missing when root; otherwise say
# the exact command and stop.
install_packages() {
	local missing
	missing=$(missing_packages "$@")
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "profview needs these Debian packages: $missing" >&2
		echo "install them with:  sudo apt-get install -y $missing" >&2
		exit 1
	fi
	echo "installing: $missing" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2 || { echo "apt-get update failed" >&2; exit 1; }
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >&2 ||
		{ echo "apt-get install failed: $missing" >&2; exit 1; }
}

# build_tree DIR [meson options...]: configure once, then build.
build_tree() {
	local dir=$1
	shift
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" "$@" >"$dir.setup.log" 2>&1 || {
			cat "$dir.setup.log" >&2
			echo "meson setup failed" >&2
			exit 1
		}
		rm -f "$dir.setup.log"
	fi
	meson compile -C "$dir" >"$dir.compile.log" 2>&1 || {
		cat "$dir.compile.log" >&2
		echo "build failed" >&2
		exit 1
	}
	rm -f "$dir.compile.log"
}

# install_summary DIR: say what `meson install` puts where from the build
# tree DIR (its commands, preload libraries and man pages, each by name),
# read from meson's own list, so that nothing installed goes unsaid.
install_summary() {
	meson introspect --installed "$1" | python3 -c '
import json, os, sys
kinds = {"commands": [], "preload libraries": [], "man pages": []}
dirs = {}
for dest in json.load(sys.stdin).values():
    name, where = os.path.basename(dest), os.path.dirname(dest)
    if ".so" in name:
        kind = "preload libraries"
    elif os.path.basename(os.path.dirname(where)) == "man":
        kind, where = "man pages", os.path.dirname(where)
    else:
        kind = "commands"
    kinds[kind].append(name)
    dirs.setdefault(kind, set()).add(where)
def words(names):
    names = sorted(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
for kind, names in kinds.items():
    if names:
        print("installed the %s %s in %s" % (kind, words(names), words(dirs[kind])))
'
}
