#!/usr/bin/env bash
# Builds the base of kbackfill's image without a Docker daemon or a registry: a Java runtime trimmed by jlink from
# the newest long-term-support JDK on this machine (the one that runs the build, or one installed beside it in
# /usr/lib/jvm; $KBACKFILL_IMAGE_JDK names one instead), the C libraries it and the drivers' native code (SQLite,
# Snappy, zstd) load, copied from this machine, a non-root user and writable /tmp and /data, as a one-layer
# docker-archive tarball that jib builds the image on (docker/pom.xml). Usage: base-image.sh JAVA_HOME OUTPUT.tar
set -euo pipefail
out=$2

# the feature release of a JDK, from its release file (no JVM started)
feature() { sed -n 's/^JAVA_VERSION="\([0-9]*\).*/\1/p' "$1/release" 2>/dev/null || true; }
# long-term support: 17, 21, then every fourth release
lts() { [[ -n "$1" ]] && { [[ "$1" -eq 17 ]] || { [[ "$1" -ge 21 ]] && (( ($1 - 21) % 4 == 0 )); }; }; }
java_home=$1
if [[ -n "${KBACKFILL_IMAGE_JDK:-}" ]]; then
  java_home=$KBACKFILL_IMAGE_JDK
else
  best=$(feature "$java_home")
  for candidate in /usr/lib/jvm/*/; do
    candidate=${candidate%/}
    v=$(feature "$candidate")
    if [[ -x "$candidate/bin/jlink" ]] && lts "$v" && [[ "$v" -gt "${best:-0}" ]]; then
      java_home=$candidate
      best=$v
    fi
  done
fi
version=$(feature "$java_home")
echo "base image: the Java runtime of $java_home (Java $version)"
compress=2 # zip, named so from Java 21 on (the old name is deprecated there)
if [[ "$version" -ge 21 ]]; then
  compress=zip-6
fi
work="$(dirname "$out")/base-image"
rootfs="$work/rootfs"
rm -rf "$work" "$out"
mkdir -p "$rootfs"

# The modules of Java SE, plus what Kafka (SASL/Kerberos), Hadoop's file systems (Delta) and sun.misc.Signal need.
"$java_home/bin/jlink" --add-modules java.se,jdk.unsupported,jdk.crypto.ec,jdk.crypto.cryptoki,jdk.zipfs,jdk.security.auth,jdk.security.jgss,jdk.naming.dns,jdk.management,jdk.localedata \
  --strip-debug --no-header-files --no-man-pages --compress="$compress" --output "$rootfs/opt/java"

# The shared libraries of everything in the runtime except the desktop's (AWT, sound, fonts: never loaded
# headless), and what native code extracted from driver jars links against.
libs=()
while IFS= read -r f; do
  case "$(basename "$f")" in
    libawt.so|libawt_xawt.so|libawt_headless.so|libjawt.so|libsplashscreen.so|libjsound.so|libfontmanager.so|liblcms.so|libjavajpeg.so|libmlib_image.so) continue ;;
  esac
  libs+=("$f")
done < <(find "$rootfs/opt/java" -type f \( -name '*.so' -o -path '*/bin/*' \))
extra=(libpthread.so.0 libdl.so.2 librt.so.1 libm.so.6 libstdc++.so.6 libgcc_s.so.1 libz.so.1)
{
  ldd "${libs[@]}" 2>/dev/null | awk '/=> \//{print $3} /^\t\/lib/{print $1}'
  for l in "${extra[@]}"; do ldconfig -p | awk -v l="$l" '$1 == l && /x86-64/ && !seen {print $NF; seen = 1}'; done
} | grep -v "^$rootfs" | sort -u | while IFS= read -r lib; do
  dest="$rootfs$lib"
  mkdir -p "$(dirname "$dest")"
  cp -L "$lib" "$dest"
done
# glibc looks in /lib/x86_64-linux-gnu and /usr/lib/x86_64-linux-gnu; ldd names either, keep both places valid
mkdir -p "$rootfs/usr/lib/x86_64-linux-gnu" "$rootfs/lib/x86_64-linux-gnu"

# the JVM options this runtime needs, read by the entry point (@argfile; empty where none are needed): from Java 24
# on, the SQLite driver's native library and the Kafka log's buffer cleaner (the demo's broker) would otherwise
# print warnings on stderr, which carries a cron job's messages
if [[ "$version" -ge 24 ]]; then
  printf -- '--enable-native-access=ALL-UNNAMED\n--sun-misc-unsafe-memory-access=allow\n' > "$rootfs/opt/java/kbackfill.jvm-options"
else
  : > "$rootfs/opt/java/kbackfill.jvm-options"
fi

mkdir -p "$rootfs/etc" "$rootfs/tmp" "$rootfs/data"
chmod 1777 "$rootfs/tmp" "$rootfs/data"
printf 'root:x:0:0:root:/root:/sbin/nologin\nkbackfill:x:1000:1000:kbackfill:/data:/sbin/nologin\n' > "$rootfs/etc/passwd"
printf 'root:x:0:\nkbackfill:x:1000:\n' > "$rootfs/etc/group"
printf 'hosts: files dns\n' > "$rootfs/etc/nsswitch.conf"

# docker-archive: one layer, a config naming its digest, a manifest
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$rootfs" -cf "$work/layer.tar" .
diff_id="sha256:$(sha256sum "$work/layer.tar" | cut -d' ' -f1)"
cat > "$work/config.json" <<JSON
{"architecture":"amd64","os":"linux",
 "config":{"Env":["PATH=/opt/java/bin:/usr/bin:/bin","JAVA_HOME=/opt/java","LANG=C.UTF-8"],"WorkingDir":"/data"},
 "rootfs":{"type":"layers","diff_ids":["$diff_id"]},
 "history":[{"created":"1970-01-01T00:00:00Z","created_by":"docker/base-image.sh: jlink runtime and C libraries"}]}
JSON
printf '[{"Config":"config.json","RepoTags":["kbackfill-base:local"],"Layers":["layer.tar"]}]\n' > "$work/manifest.json"
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -C "$work" -cf "$out" manifest.json config.json layer.tar
echo "base image $out: $(du -h "$out" | cut -f1), layer $diff_id"
