# lib.sh: shared by scripts/demo and scripts/test. Source it; do not run it.
#
# locksim_install_dependencies: installs the Debian packages locksim needs that are missing
# (as root), or prints the exact apt-get line and exits 2 (as another user).
# locksim_build [extra cmake args]: configures and builds into build/ (or $LOCKSIM_BUILD_DIR).
# locksim_install_adapters: what the third-party lock adapters (adapters/) need: python3-redis
# and python3-tooz for /usr/bin/python3, php-cli with php-redis, php-symfony-lock and
# php-malkusch-lock, node and npm, and adapters/node/node_modules from its package-lock.json.

LOCKSIM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LOCKSIM_BUILD_DIR=${LOCKSIM_BUILD_DIR:-$LOCKSIM_ROOT/build}
LOCKSIM_PACKAGES=(
  build-essential cmake ninja-build pkg-config git
  libhiredis-dev libevent-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev liblua5.1-0-dev
  redis-server redis-tools redis-sentinel procps
  python3 python3-matplotlib
  libxml2-utils  # xmllint: the JUnit XML schema test
  chromium       # headless, for the HTML report pages in a real browser (tests/browser/)
  parallel       # GNU parallel: shards of a `locksim explore` campaign (tests/cli/explore_test.sh)
)

locksim_install_dependencies() {
  local missing=() package
  for package in "${LOCKSIM_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$package")
    fi
  done
  if ((${#missing[@]} == 0)); then
    return 0
  fi
  if [[ $(id -u) != 0 ]]; then
    echo "locksim needs these Debian packages: ${missing[*]}" >&2
    echo "Install them with:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
    exit 2
  fi
  echo "==> installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

locksim_build() {
  echo "==> building into ${LOCKSIM_BUILD_DIR#"$LOCKSIM_ROOT"/}"
  # A new build directory is made for Ninja, which keeps both cores busier than Make's recursive
  # makefiles (docs/testing.md, "Build and CI times"); one made before keeps its generator.
  local generator=()
  [[ -f $LOCKSIM_BUILD_DIR/CMakeCache.txt ]] || generator=(-G Ninja)
  cmake "${generator[@]}" -S "$LOCKSIM_ROOT" -B "$LOCKSIM_BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
  cmake --build "$LOCKSIM_BUILD_DIR" -j "$(nproc)" 2>&1 |
    grep -Ev '^\[ *[0-9]+%\] (Building|Linking|Built)|^\[[0-9]+/[0-9]+\] (Building|Linking)' || true
  if [[ ! -x $LOCKSIM_BUILD_DIR/locksim ]]; then
    echo "build failed: $LOCKSIM_BUILD_DIR/locksim is missing" >&2
    exit 3
  fi
}

locksim_install_adapters() {
  local missing=() dir=$LOCKSIM_ROOT/adapters/node
  if ! dpkg-query -W -f='${Status}' python3-redis 2>/dev/null | grep -q "install ok installed"; then
    missing+=(python3-redis)
  fi
  # The tooz adapter (adapters/python-tooz): OpenStack tooz 3.1.0 from Debian.
  if ! dpkg-query -W -f='${Status}' python3-tooz 2>/dev/null | grep -q "install ok installed"; then
    missing+=(python3-tooz)
  fi
  # node and npm by command: a node from elsewhere (NodeSource's nodejs carries its own npm)
  # does as well as Debian's, and Debian's npm would conflict with it.
  # The PHP adapters (php-symfony-lock, php-malkusch-lock): PHP's CLI, phpredis and the two
  # libraries, all from Debian.
  local pkg
  for pkg in php-cli php-redis php-symfony-lock php-malkusch-lock; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$pkg")
    fi
  done
  command -v node >/dev/null || missing+=(nodejs)
  command -v npm >/dev/null || missing+=(npm)
  if ((${#missing[@]} > 0)); then
    if [[ $(id -u) != 0 ]]; then
      echo "locksim's adapters need these Debian packages: ${missing[*]}" >&2
      echo "Install them with:" >&2
      echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
      exit 2
    fi
    echo "==> installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  if [[ ! -d $dir/node_modules || $dir/package-lock.json -nt $dir/node_modules ]]; then
    echo "==> npm ci in adapters/node"
    if ! (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null); then
      echo "npm ci failed in adapters/node" >&2
      exit 3
    fi
    touch "$dir/node_modules"
  fi
}
