#!/usr/bin/env bash
# Smoke test of the image with podman, where podman is present: load docker/target/kbackfill-image.tar and run
# `kbackfill --version` and `kbackfill demo` in a container (the demo starts its own broker inside the container,
# so it needs no services). Build the image first: mvn -B -ntp -DskipTests install
# On hosts with a hybrid cgroup layout (crun refuses it) the run happens in a private mount namespace without the
# cgroup v2 mount; file and process limits are set within the host's hard limits.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tarball="$here/target/kbackfill-image.tar"
image="kbackfill:$(sed -n 's:.*<version>\(.*\)</version>.*:\1:p' "$here/pom.xml" | head -1)"
if ! command -v podman >/dev/null 2>&1; then
  echo "smoke: podman is not installed here; nothing to do" >&2
  exit 0
fi
if [[ ! -f "$tarball" ]]; then
  echo "smoke: $tarball missing: run 'mvn -B -ntp -DskipTests install' first" >&2
  exit 1
fi
limits=(--ulimit nofile=20000:20000 --ulimit nproc=4096:4096)
run_podman() {
  if [[ -d /sys/fs/cgroup/unified ]] && mountpoint -q /sys/fs/cgroup/unified; then
    unshare -m bash -c 'umount /sys/fs/cgroup/unified && exec "$@"' podman podman "$@"
  else
    podman "$@"
  fi
}
set -x
run_podman load --quiet --input "$tarball"
run_podman image inspect --format '{{.Config.Entrypoint}} user={{.Config.User}} workdir={{.Config.WorkingDir}}' "$image"
run_podman run --rm "${limits[@]}" "$image" --version
run_podman run --rm "${limits[@]}" "$image" demo --records 2000
