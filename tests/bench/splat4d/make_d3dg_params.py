#!/usr/bin/env python3
"""Writes a synthetic Dynamic 3D Gaussians params.npz (the layout splat4d's
tools/gen_splat_frames.py reads: means3D, rgb_colors, unnorm_rotations (T, N, ...),
log_scales, logit_opacities, seg_colors (N, ...)) for tests/bench/bench_vs_splat4d.py,
so that splat4d's own frame generator writes the .splat sequence both encoders get.

The scene, like the captures D3DG trains on: a static background (the given share, 70 %
by default: positions, colours and rotations constant), and a foreground whose gaussians
move every frame — a few bodies turning and translating rigidly, each gaussian drifting a
little on its own (a slow sinusoid of about 1 cm), colours that wobble by about a level
(D3DG's "soft-fixed" colours) and rotations that turn with the body. Scales and opacities
are static, as in D3DG. Seeded: the same arguments write the same file.

  make_d3dg_params.py OUT.npz FRAMES GAUSSIANS [static share (0.7)]
"""
import sys

import numpy as np


def quat_mul(a, b):
    aw, ax, ay, az = a[..., 0], a[..., 1], a[..., 2], a[..., 3]
    bw, bx, by, bz = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    return np.stack([aw * bw - ax * bx - ay * by - az * bz,
                     aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw], axis=-1)


def main(out, frames, n, static_share):
    rng = np.random.default_rng(39)
    n_static = int(round(n * static_share))
    n_fg = n - n_static
    bodies = 6
    body = rng.integers(0, bodies, n_fg)
    # Background: a 10 m room's surfaces, foreground: bodies of ~0.5 m around the middle.
    bg = rng.uniform(-5, 5, (n_static, 3)).astype(np.float32)
    face = rng.integers(0, 3, n_static)
    bg[np.arange(n_static), face] = np.where(rng.random(n_static) < 0.5, -5, 5)
    centre = rng.uniform(-1.5, 1.5, (bodies, 3))
    local = rng.normal(0, 0.2, (n_fg, 3))
    drift_amp = rng.normal(0, 0.01, (n_fg, 3))
    drift_phase = rng.uniform(0, 2 * np.pi, (n_fg, 3))
    spin = rng.normal(0, 0.05, (bodies, 3))          # radians a frame about each axis
    velocity = rng.normal(0, 0.01, (bodies, 3))      # metres a frame

    means = np.empty((frames, n, 3), np.float32)
    rots = np.empty((frames, n, 4), np.float32)
    colors = np.empty((frames, n, 3), np.float32)
    base_rot = rng.normal(0, 1, (n, 4))
    base_rot /= np.linalg.norm(base_rot, axis=1, keepdims=True)
    base_col = rng.uniform(0.05, 0.95, (n, 3))
    for t in range(frames):
        means[t, :n_static] = bg
        angle = spin[body] * t
        half = np.linalg.norm(angle, axis=1, keepdims=True) / 2
        axis = angle / np.maximum(np.linalg.norm(angle, axis=1, keepdims=True), 1e-12)
        q = np.concatenate([np.cos(half), axis * np.sin(half)], axis=1)  # (n_fg, 4) w x y z
        w, v = q[:, :1], q[:, 1:]
        rotated = local + 2 * w * np.cross(v, local) + 2 * np.cross(v, np.cross(v, local))
        means[t, n_static:] = (centre[body] + velocity[body] * t + rotated
                               + drift_amp * np.sin(0.3 * t + drift_phase))
        rots[t, :n_static] = base_rot[:n_static]
        rots[t, n_static:] = quat_mul(q, base_rot[n_static:])
        colors[t] = base_col
        colors[t, n_static:] += rng.normal(0, 1.0 / 255, (n_fg, 3))
    np.clip(colors, 0, 1, out=colors)
    log_scales = rng.uniform(-6, -2.5, (n, 3)).astype(np.float32)
    logit_opacities = rng.normal(2, 2, (n, 1)).astype(np.float32)
    seg = np.zeros((n, 3), np.float32)
    seg[n_static:, 0] = 1
    np.savez(out, means3D=means, rgb_colors=colors, unnorm_rotations=rots,
             log_scales=log_scales, logit_opacities=logit_opacities, seg_colors=seg)
    print(f"{out}: {frames} frames x {n} gaussians, {n_static} static")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]),
         float(sys.argv[4]) if len(sys.argv) > 4 else 0.7)
