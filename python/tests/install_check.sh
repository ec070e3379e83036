#!/usr/bin/env bash
# ctest python.pip_install: docs/python.md's install command, then its one-liner, with nothing in
# the environment pointing at the library. The package is installed into a scratch prefix from a
# scratch checkout whose build/ is this build tree, so the installed package must find the
# library the way an installed package does: through the checkout it was installed from.
#   usage: install_check.sh PYTHON SOURCE_DIR BUILD_DIR SCRATCH_DIR
set -euo pipefail
python=$1 source=$2 build=$3 scratch=$4
rm -rf "$scratch"
mkdir -p "$scratch/checkout"
cp -r "$source/python" "$scratch/checkout/python"
rm -rf "$scratch/checkout/python/build" "$scratch/checkout/python/"*.egg-info
ln -s "$source/capi" "$scratch/checkout/capi"
ln -s "$build" "$scratch/checkout/build"
# The documented command is `python3 -m pip install --break-system-packages --no-build-isolation
# ./python`; --target keeps this test out of the system's site-packages.
(cd "$scratch/checkout" && "$python" -m pip install --quiet --no-build-isolation --no-deps \
    --disable-pip-version-check --target "$scratch/site" ./python)
cd "$source"
out=$(env -u FOURDGS_C_LIBRARY -u FOURDGS_BUILD_DIR PYTHONPATH="$scratch/site" \
      "$python" -c "import fourdgs; print(fourdgs.open('examples/data/example.4dgs').state_at(2.5)); print(fourdgs.library_path())")
echo "$out"
grep -q "^<fourdgs.State instant t=2.5: 120 gaussians" <<<"$out"
# It was the installed copy, and it found the library through the recorded checkout.
env -u FOURDGS_C_LIBRARY PYTHONPATH="$scratch/site" "$python" -c \
    "import fourdgs, sys; assert fourdgs.__file__.startswith(sys.argv[1]), fourdgs.__file__" "$scratch/site"
tail -n 1 <<<"$out" | grep -q "^$scratch/checkout/build/capi/libfourdgs-c.so"
echo "pip install and the one-liner: ok"
