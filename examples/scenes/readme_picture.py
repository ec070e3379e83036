#!/usr/bin/env python3
"""The README's picture: `4dgs preview` of the bundled showcase scene at one instant.

    readme_picture.py 4DGS SOURCE_DIR write    writes docs/images/showcase.png again
    readme_picture.py 4DGS SOURCE_DIR check    a fresh preview must equal the committed picture

`check` (ctest examples.readme_picture_is_current) compares the pixels exactly: the preview is
deterministic, so any difference means the scene, the renderer or the options changed and the
picture in the README no longer shows what the tool draws. Run `write` and commit the result.
"""
import os
import subprocess
import sys
import tempfile

SCENE = os.path.join("examples", "data", "showcase.4dgs")
PICTURE = os.path.join("docs", "images", "showcase.png")
# The instant and size shown: every shape is in the picture at t = 3.4 s (the ball in front of
# the torus, four boxes standing), through the scene's own camera.
OPTIONS = ["--at", "3.4", "--width", "640", "--height", "360"]


def preview(tool, source, out):
    subprocess.run([tool, "-q", "preview", os.path.join(source, SCENE), "-o", out] + OPTIONS,
                   check=True)


def main():
    tool, source, mode = sys.argv[1:4]
    picture = os.path.join(source, PICTURE)
    if mode == "write":
        preview(tool, source, picture)
        print("wrote %s (%d bytes)" % (picture, os.path.getsize(picture)))
        return 0
    sys.path.insert(0, os.path.join(source, "tests", "cli"))
    import cli_tests as cli
    with tempfile.TemporaryDirectory() as tmp:
        fresh = os.path.join(tmp, "fresh.png")
        preview(tool, source, fresh)
        if open(fresh, "rb").read() == open(picture, "rb").read():
            print("%s equals a fresh preview byte for byte" % PICTURE)
            return 0
        (wa, ha, pa), (wb, hb, pb) = cli.read_png(fresh), cli.read_png(picture)
        if (wa, ha) != (wb, hb):
            print("%s is %dx%d, a fresh preview %dx%d" % (PICTURE, wb, hb, wa, ha))
            return 1
        differ = sum(pa(x, y) != pb(x, y) for y in range(ha) for x in range(wa))
        if differ:
            print("%s differs from a fresh preview in %d pixels: run `%s %s %s write`"
                  % (PICTURE, differ, sys.argv[0], tool, source))
            return 1
        print("%s equals a fresh preview pixel for pixel (the PNG bytes differ)" % PICTURE)
        return 0


if __name__ == "__main__":
    sys.exit(main())
