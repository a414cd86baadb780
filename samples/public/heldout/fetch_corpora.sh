#!/bin/bash
# Build the evaluation corpora (man-l10n, man-crossling, python-docs) from Debian 12 packages only.
# Usage: ./fetch_corpora.sh [TARGET_DIR]   (default ./corpora). Run as root on Debian 12 (bookworm).
set -euo pipefail
export LC_ALL=C.UTF-8
OUT="$(realpath -m "${1:-./corpora}")"
PKGS="manpages manpages-pl manpages-ru coreutils procps util-linux findutils grep sed gzip openssh-client passwd login python3.11-doc"

if ! command -v mandoc >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mandoc >/dev/null
fi
TMP="$(mktemp -d)"; trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/deb" "$TMP/root"
( cd "$TMP/deb" && apt-get download $PKGS >/dev/null 2>&1 || { apt-get update -qq; apt-get download $PKGS >/dev/null; } )
for f in $(ls "$TMP"/deb/*.deb | sort); do dpkg-deb -x "$f" "$TMP/root"; done
M="$TMP/root/usr/share/man"
H="$TMP/root/usr/share/doc/python3.11/html"

rm -rf "$OUT/man-l10n" "$OUT/man-crossling" "$OUT/python-docs"
mkdir -p "$OUT"

# groff/mdoc -> Markdown. mandoc -T markdown only accepts mdoc(7) input, so render as UTF-8 text,
# strip overstrike, and turn section headings (column 0) into "## " and sub-sections (3-space indent) into "### ".
conv() { # src.gz dest.md title
  mkdir -p "$(dirname "$2")"
  { echo "# $3"; echo
    mandoc -T utf8 -O width=100 "$1" 2>/dev/null | sed -e 's/.\x08//g' | awk '
      NR==1 {next}                                   # page header line
      { lines[++n]=$0 }
      END {
        last=n; while (last>0 && lines[last] ~ /^[[:space:]]*$/) last--; last--   # drop footer line
        for (i=1;i<=last;i++) { l=lines[i]
          if (l ~ /^[^[:space:]]/) print "## " l
          else if (l ~ /^   [^[:space:]]/) print "### " substr(l,4)
          else print l }
      }' | cat -s
  } > "$2"
}

# page lists: section/name
THREE="1/cat 1/chage 1/chsh 1/dir 1/expiry 1/ldd 1/ls 1/newgrp 1/sg 1/vdir
5/acct 5/faillog 5/filesystems 5/group 5/hosts 5/issue 5/locale 5/motd 5/nologin 5/proc 5/protocols 5/resolv.conf 5/rpc 5/securetty 5/services 5/shells 5/utmp
7/arp 7/ascii 7/bootparam 7/hier 7/ip 7/locale 7/man-pages 7/man 7/signal 7/suffixes 7/udp 7/unicode 7/units 7/utf-8
8/faillog 8/groupadd 8/groupdel 8/groupmems 8/groupmod 8/grpck 8/lastlog 8/userdel 8/usermod 8/vipw"
ENPL="1/cp 1/mv 1/rm 1/chmod 1/chown 1/df 1/du 1/date 1/dd 1/grep 1/sed 1/gzip 1/head 1/tail 1/sort 1/uniq 1/wc 1/xargs 1/ln 1/mkdir
1/touch 1/split 1/shred 1/timeout 1/stat 1/scp 1/free 1/uptime 1/pgrep 1/pmap 1/dmesg 1/mktemp 1/nohup 1/tee 1/cut 1/tr 1/base64 1/seq 1/truncate
8/lsblk 8/vmstat"
ENRU_L10N="1/passwd 1/login 1/getent 1/iconv 1/locale 5/passwd 5/shadow 7/tcp 7/pipe 8/useradd"
ENRU_X="1/chfn 1/gpasswd 1/localedef 5/gshadow 5/login.defs 5/nsswitch.conf 5/host.conf 5/networks 5/core 5/dir_colors 5/tmpfs
7/capabilities 7/inotify 7/namespaces 7/socket 7/unix 7/time 7/random 7/symlink 7/fifo 7/epoll 7/pthreads 7/uri 7/hostname
8/chpasswd 8/newusers 8/nologin 8/pwck 8/ld.so 8/zdump"

emit() { # corpus lang-dir-prefix(""=en) list
  local corpus=$1 lang=$2; shift 2
  for p in $*; do s=${p%%/*}; n=${p#*/}
    if [ "$lang" = en ]; then src="$M/man$s/$n.$s.gz"; else src="$M/$lang/man$s/$n.$s.gz"; fi
    [ -f "$src" ] || { echo "ERROR: missing $lang $p ($src)" >&2; exit 1; }
    conv "$src" "$OUT/$corpus/$lang/man$s/$n.md" "$n($s)"
  done
}
emit man-l10n en $THREE $ENPL $ENRU_L10N
emit man-l10n pl $THREE $ENPL
emit man-l10n ru $THREE $ENRU_L10N
emit man-crossling en $THREE $ENRU_L10N $ENRU_X
emit man-crossling ru $THREE $ENRU_L10N $ENRU_X

# python-docs: HTML kept as is
P="$OUT/python-docs"; mkdir -p "$P/library"
cp "$H/index.html" "$P/index.html"
for d in howto tutorial faq; do cp -r "$H/$d" "$P/$d"; done
LIB="index argparse asyncio asyncio-task collections csv datetime functools glob hashlib itertools json logging
logging.handlers os os.path pathlib pickle random re shutil sqlite3 string subprocess sys tempfile threading
time typing unittest unittest.mock urllib.request venv zipfile tarfile gzip heapq bisect dataclasses enum
contextlib timeit secrets statistics"
for f in $LIB; do cp "$H/library/$f.html" "$P/library/$f.html"; done
find "$OUT/man-l10n" "$OUT/man-crossling" "$OUT/python-docs" -exec touch -d '2023-01-01 00:00:00 UTC' {} +

{ echo "# Debian 12 (bookworm) package versions used"; for f in $(ls "$TMP"/deb/*.deb | sort); do echo "$(dpkg-deb -f "$f" Package) $(dpkg-deb -f "$f" Version)"; done
  echo "mandoc $(dpkg-query -W -f='${Version}' mandoc 2>/dev/null || echo unknown)"; } > "$OUT/VERSIONS.txt"
for c in man-l10n man-crossling python-docs; do echo "$c: $(find "$OUT/$c" -type f | wc -l) files"; done
