#!/usr/bin/env python3
"""Prints a .4dgs file's summary and the first gaussians visible at an instant.

    usage: summary.py FILE [TIME]
"""
import sys

import fourdgs


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        with fourdgs.Reader(argv[1]) as reader:
            info = reader.info()
            t = float(argv[2]) if len(argv) > 2 else info["duration_sec"] / 2
            print(f"{argv[1]}: {info['temporal_model_name']}, {info['gaussian_count']} gaussians, "
                  f"{info['duration_sec']} s, SH degree {info['sh_degree']}, "
                  f"{info['chunk_count']} chunks")
            for name, entries in reader.metadata():
                for key, value in entries.items():
                    print(f"  metadata {name}.{key} = {value}")
            frame = reader.evaluate(t, sh_degree=min(1, info["sh_degree"]))
            print(f"t = {t}: {frame.count} visible")
            for i in range(min(frame.count, 3)):
                c = frame.center[3 * i:3 * i + 3]
                rgba = frame.color[4 * i:4 * i + 4]
                print(f"  #{i}: center ({c[0]:.3f}, {c[1]:.3f}, {c[2]:.3f}) "
                      f"rgba ({rgba[0]:.3f}, {rgba[1]:.3f}, {rgba[2]:.3f}, {rgba[3]:.3f}) "
                      f"object {frame.object_id[i]}")
    except fourdgs.FourdgsError as e:
        print(f"{argv[1]}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
