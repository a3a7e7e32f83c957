#!/usr/bin/env bash
# Installs what is missing (Debian/Ubuntu apt, as root) and builds ddpscale (Release).
# On the GPU machine nothing is installed: everything is there and nothing can be fetched.
#   bash scripts/setup.sh              what the tests need too, and every target, the tests included
#   bash scripts/setup.sh ddpscale     only what building and running ddpscale needs, and only the
#                                      targets named (scripts/run-main.sh: the one binary it runs)
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# What building ddpscale and running a study and its report need. libgtest-dev because the
# build's configuration includes tests/ (DDPSCALE_BUILD_TESTS).
BUILD_PACKAGES=(build-essential cmake ninja-build git pkg-config
  libtorch-dev libopenmpi-dev openmpi-bin libhdf5-dev
  libcxxopts-dev libeigen3-dev libgtest-dev libyaml-cpp-dev libboost-math-dev libssl-dev
  gnuplot-nox procps)
# Debian's libtorch takes its BLAS from the libblas.so.3 alternative, which is the netlib
# reference BLAS unless an optimised one is installed: a 512x128x384 matrix product took
# 21.6 ms there and 0.76 ms with OpenBLAS. Serial, because every rank is its own process.
BUILD_PACKAGES+=(libopenblas0-serial)
# The JSON files results/ writes (nlohmann-json), and gnuplot and a study's launches run through
# Boost.Process, whose search_path needs Boost.Filesystem's library with Debian 12's Boost 1.74.
BUILD_PACKAGES+=(nlohmann-json3-dev libboost-dev libboost-filesystem-dev)

# What only the tests use: 117 more packages, a third of the bytes (chromium alone 340 MB
# unpacked), which scripts/run-main.sh does without.
TEST_PACKAGES=(hdf5-tools python3 python3-h5py python3-numpy slurm-wlm munge)
# tests/check_report_html.sh renders the report headless; the statistics checks use SciPy.
TEST_PACKAGES+=(python3-scipy chromium)
# tests/check_prediction.py and scripts/check-one-gpu-prediction.py read and write the
# node_sharing blocks of interconnects files.
TEST_PACKAGES+=(python3-yaml)
# The two-node cluster test (tests/cluster/): veth pairs and tc shaping come from iproute2,
# which minimal Debian images leave out.
TEST_PACKAGES+=(iproute2)
# scripts/export_model.py and the tests of the TorchScript files it writes (torchscript_tests.cmake):
# PyTorch 1.13, the version of Debian's libtorch-dev, so LibTorch loads what it writes.
# Measured on the CPU machine: 25 packages, 17.9 MB, 26 s of apt-get install.
TEST_PACKAGES+=(python3-torch python3-torchvision)

if [ $# -gt 0 ]; then
  DEBIAN_PACKAGES=("${BUILD_PACKAGES[@]}")
else
  DEBIAN_PACKAGES=("${BUILD_PACKAGES[@]}" "${TEST_PACKAGES[@]}")
fi

# Package lists fetched in the last hour (run-tests.sh after run-main.sh) are not fetched again.
package_lists_are_fresh() {
  find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' -mmin -60 2>/dev/null | grep -q .
}

install_missing_packages() {
  local missing=()
  for pkg in "${DEBIAN_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    log "all Debian packages present"
    return
  fi
  log "installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  package_lists_are_fresh || apt-get update -q
  # dpkg syncs every file it unpacks to disk, and unpacking, not the download, is most of a
  # fresh machine's install (556 packages: 569 MB fetched in 30 s, 2 min 33 s in all with this
  # option). force-unsafe-io leaves the syncs to the kernel, as Docker's Debian images do; a
  # power cut mid-install would mean running this again.
  apt-get install -y -q --no-install-recommends -o Dpkg::Options::=--force-unsafe-io "${missing[@]}"
}

if [ "$DDPSCALE_MODE" = cpu ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    log "no apt-get: install the packages listed in scripts/setup.sh by hand"
  else
    install_missing_packages
  fi
else
  log "GPU machine: using the installed PyTorch's LibTorch ($CMAKE_PREFIX_PATH), no apt"
fi

generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
extra=()
[ "$DDPSCALE_MODE" = gpu ] && extra=(-DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}")
# More cache settings, e.g. DDPSCALE_CMAKE_ARGS="-DDDPSCALE_CUDA_GRAPHS=ON".
read -r -a more_args <<<"${DDPSCALE_CMAKE_ARGS:-}"
extra+=("${more_args[@]}")
log "configuring $BUILD_DIR ($DDPSCALE_MODE build)"
cmake -S "$DDPSCALE_ROOT" -B "$BUILD_DIR" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "${extra[@]}" >"$BUILD_DIR.configure.log" 2>&1 ||
  { cat "$BUILD_DIR.configure.log"; exit 1; }
targets=()
[ $# -gt 0 ] && targets=(--target "$@")
log "building ${*:-every target} with $JOBS jobs"
cmake --build "$BUILD_DIR" -j "$JOBS" "${targets[@]}"
