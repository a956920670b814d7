#!/usr/bin/env bash
# kernel.sh: the kernels of the guest tests (internal/vmtest).
#
#   kernel.sh custom   build (once) Debian 13's linux-source-6.12 with make
#                      tinyconfig + kernel.config; print the bzImage's path
#   kernel.sh stock    fetch (once) Debian 13's stock amd64 kernel image;
#                      print its vmlinuz's path
#   kernel.sh key      print the custom kernel's cache key
#
# Debian 13 packages come through a private apt configuration (its own
# sources list, lists and cache under the cache directory); the mirror is the
# one of the system's own sources. The system's apt setup is not touched.
#
# Cache: ${MDK_VMTEST_CACHE:-/var/cache/mdk-vmtest}. The custom kernel lives in
# custom-<source version>-<sha256 of kernel.config, 12 hex>/bzImage, so a second
# run, or a run after an unrelated change, costs nothing. Runs are serialised
# with flock (one lock per kernel); results are renamed into place only when complete.
#
# Needs: apt-get, dpkg-deb, xz, gcc, make, bc, flex, bison, libelf-dev,
# libssl-dev, cpio (.ci/run installs them). The build runs under nice -n 10.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${MDK_VMTEST_CACHE:-/var/cache/mdk-vmtest}
suite=${MDK_VMTEST_SUITE:-trixie}
jobs=${MDK_VMTEST_JOBS:-$(nproc)}
mkdir -p "$cache"
log() { echo "kernel.sh: $*" >&2; }

# mirror: the first URI of the system's Debian sources (deb822 or one-line).
mirror() {
  if [ -n "${MDK_VMTEST_MIRROR:-}" ]; then echo "$MDK_VMTEST_MIRROR"; return; fi
  local m=""
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    m=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
  fi
  if [ -z "$m" ] && [ -f /etc/apt/sources.list ]; then
    m=$(awk '$1 == "deb" {for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) {print $i; exit}}' /etc/apt/sources.list)
  fi
  [ -n "$m" ] || { log "no Debian mirror in the system's apt sources; set MDK_VMTEST_MIRROR"; exit 1; }
  echo "$m"
}

apt_dir="$cache/apt"
aptq() {
  apt-get -q -o Dir::Etc::SourceList="$apt_dir/sources.list" \
    -o Dir::Etc::SourceParts="$apt_dir/empty" \
    -o Dir::Etc::Preferences="$apt_dir/empty/none" \
    -o Dir::Etc::PreferencesParts="$apt_dir/empty" \
    -o Dir::State::Lists="$apt_dir/lists" \
    -o Dir::State::status="$apt_dir/status" \
    -o Dir::Cache="$apt_dir/cache" \
    -o Dir::Cache::Archives="$apt_dir/cache/archives" \
    -o APT::Architecture=amd64 -o APT::Architectures::=amd64 \
    -o Acquire::Languages=none "$@"
}
aptcache() {
  apt-cache -o Dir::Etc::SourceList="$apt_dir/sources.list" \
    -o Dir::Etc::SourceParts="$apt_dir/empty" \
    -o Dir::Etc::Preferences="$apt_dir/empty/none" \
    -o Dir::Etc::PreferencesParts="$apt_dir/empty" \
    -o Dir::State::Lists="$apt_dir/lists" \
    -o Dir::State::status="$apt_dir/status" \
    -o Dir::Cache="$apt_dir/cache" \
    -o APT::Architecture=amd64 -o APT::Architectures::=amd64 "$@"
}

# apt_setup: the private apt tree, its lists refreshed at most once a day.
apt_setup() {
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/empty" "$apt_dir/debs"
  : >"$apt_dir/status" 2>/dev/null || true
  [ -f "$apt_dir/status" ] || : >"$apt_dir/status"
  local src="deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $(mirror) $suite main"
  if [ "$(cat "$apt_dir/sources.list" 2>/dev/null)" != "$src" ]; then
    echo "$src" >"$apt_dir/sources.list"
    rm -f "$apt_dir/updated"
  fi
  if [ -z "$(find "$apt_dir/updated" -mmin -1440 2>/dev/null)" ]; then
    log "apt-get update ($suite, private configuration)"
    aptq update >&2
    touch "$apt_dir/updated"
  fi
}

# download PKG: the .deb of PKG's candidate version in $apt_dir/debs; prints its path.
download() {
  local pkg=$1 ver deb
  ver=$(aptcache policy "$pkg" | awk '/Candidate:/ {print $2}')
  [ -n "$ver" ] && [ "$ver" != "(none)" ] || { log "no package $pkg in $suite"; exit 1; }
  deb=$(ls "$apt_dir/debs/${pkg}_${ver//:/%3a}_"*.deb 2>/dev/null | head -1 || true)
  if [ -z "$deb" ]; then
    log "downloading $pkg $ver"
    (cd "$apt_dir/debs" && aptq download "$pkg=$ver" >&2)
    deb=$(ls "$apt_dir/debs/${pkg}_${ver//:/%3a}_"*.deb | head -1)
  fi
  echo "$deb"
}

# version_of PKG: the candidate version, from the cached lists when they exist.
version_of() { aptcache policy "$1" | awk '/Candidate:/ {print $2}'; }

frag_hash() { sha256sum "$here/kernel.config" | cut -c1-12; }

custom() {
  exec 9>"$cache/.lock-custom"; flock 9
  apt_setup
  local ver key out
  ver=$(version_of linux-source-6.12)
  key="custom-${ver}-$(frag_hash)"
  out="$cache/$key"
  if [ -s "$out/bzImage" ]; then echo "$out/bzImage"; return; fi
  local deb; deb=$(download linux-source-6.12)
  local work="$cache/build-$key"
  rm -rf "$work"; mkdir -p "$work"
  log "unpacking $(basename "$deb")"
  dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$work" --wildcards './usr/src/linux-source-*.tar.xz'
  tar -xJf "$work"/usr/src/linux-source-*.tar.xz -C "$work"
  rm -rf "$work/usr"
  local src; src=$(ls -d "$work"/linux-source-*/ | head -1)
  log "configuring: tinyconfig + kernel.config"
  make -s -C "$src" tinyconfig >&2
  "$src/scripts/kconfig/merge_config.sh" -m -O "$src" "$src/.config" "$here/kernel.config" >&2
  make -s -C "$src" olddefconfig >&2
  local bad=0 line
  while IFS= read -r line; do
    case "$line" in CONFIG_*=*) ;; *) continue ;; esac
    grep -qx -- "$line" "$src/.config" || { log "option not in the final .config: $line"; bad=1; }
  done <"$here/kernel.config"
  [ "$bad" = 0 ] || exit 1
  log "building bzImage with $jobs jobs (several minutes)"
  local t0=$SECONDS
  nice -n 10 make -s -C "$src" -j"$jobs" bzImage >&2
  log "built in $((SECONDS - t0)) s"
  mkdir -p "$out.tmp"
  cp "$src/arch/x86/boot/bzImage" "$out.tmp/bzImage"
  cp "$src/.config" "$out.tmp/config"
  echo "$ver" >"$out.tmp/version"
  rm -rf "$out"; mv "$out.tmp" "$out"
  rm -rf "$work" "$deb"  # the bzImage is the cache; the source is 150 MB
  echo "$out/bzImage"
}

stock() {
  exec 9>"$cache/.lock-stock"; flock 9
  apt_setup
  local img ver out
  img=$(aptcache depends linux-image-amd64 | awk '/Depends: linux-image-6/ {print $2; exit}')
  [ -n "$img" ] || { log "linux-image-amd64 depends on no linux-image-6.*"; exit 1; }
  ver=$(version_of "$img")
  out="$cache/stock-$img-$ver"
  if [ -s "$out/vmlinuz" ]; then echo "$out/vmlinuz"; return; fi
  local deb; deb=$(download "$img")
  rm -rf "$out.tmp"; mkdir -p "$out.tmp/x"
  dpkg-deb -x "$deb" "$out.tmp/x"
  cp "$out.tmp"/x/boot/vmlinuz-* "$out.tmp/vmlinuz"
  cp "$out.tmp"/x/boot/config-* "$out.tmp/config"
  echo "$img $ver" >"$out.tmp/version"
  rm -rf "$out.tmp/x" "$out"; mv "$out.tmp" "$out"
  rm -f "$deb"
  echo "$out/vmlinuz"
}

case "${1:-}" in
  custom) custom ;;
  stock) stock ;;
  key) apt_setup; echo "custom-$(version_of linux-source-6.12)-$(frag_hash)" ;;
  *) echo "usage: kernel.sh custom|stock|key" >&2; exit 2 ;;
esac
