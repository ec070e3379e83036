#!/usr/bin/env python3
"""Writes a small tracked frame sequence to try the sharded example on: N binary PLY frames
(3DGS layout, SH degree 1) of the same gaussians, some still, some drifting, some accelerating.

    usage: make_frames.py DIRECTORY [FRAMES] [GAUSSIANS]
"""
import math
import os
import random
import struct
import sys

C0 = 0.28209479177387814
FPS = 8


def main():
    directory = sys.argv[1]
    frames = int(sys.argv[2]) if len(sys.argv) > 2 else 24
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 400
    rng = random.Random(17)
    rest = 9  # SH degree 1: 3 coefficients per colour component
    names = (["x", "y", "z", "nx", "ny", "nz", "f_dc_0", "f_dc_1", "f_dc_2"] +
             ["f_rest_%d" % k for k in range(rest)] +
             ["opacity", "scale_0", "scale_1", "scale_2", "rot_0", "rot_1", "rot_2", "rot_3"])
    side = math.ceil(n ** (1 / 3))
    base = []
    for i in range(n):
        p = [0.1 * (i % side), 0.1 * ((i // side) % side), 0.1 * (i // (side * side))]
        q = [rng.gauss(0, 1) for _ in range(4)]
        norm = math.sqrt(sum(v * v for v in q))
        base.append({
            "p": p,
            "v": [0.0] * 3 if i % 3 == 0 else [rng.uniform(-0.05, 0.05) for _ in range(3)],
            "a": 0.3 if i % 3 == 2 else 0.0,
            "dc": [(rng.uniform(0.1, 0.9) - 0.5) / C0 for _ in range(3)],
            "rest": [rng.uniform(-0.5, 0.5) for _ in range(rest)],
            "opacity": rng.uniform(-1, 3),
            "scale": [math.log(rng.uniform(0.01, 0.04)) for _ in range(3)],
            "rot": [v / norm for v in q],
        })
    os.makedirs(directory, exist_ok=True)
    header = ("ply\nformat binary_little_endian 1.0\nelement vertex %d\n" % n +
              "".join("property float %s\n" % name for name in names) + "end_header\n").encode()
    for k in range(frames):
        t = k / FPS
        with open(os.path.join(directory, "frame_%04d.ply" % k), "wb") as f:
            f.write(header)
            for g in base:
                p = [g["p"][c] + g["v"][c] * t + (g["a"] * t * t if c == 0 else 0) for c in range(3)]
                row = p + [0, 0, 0] + g["dc"] + g["rest"] + [g["opacity"]] + g["scale"] + g["rot"]
                f.write(struct.pack("<%df" % len(row), *row))


if __name__ == "__main__":
    main()
