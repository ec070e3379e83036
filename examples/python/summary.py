#!/usr/bin/env python3
"""Prints a .4dgs file's summary and the first gaussians visible at an instant, with the fourdgs
package (python/; docs/python.md).

    usage: summary.py FILE [TIME]
"""
import sys

import fourdgs


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        with fourdgs.open(argv[1]) as scene:
            h = scene.header
            t = float(argv[2]) if len(argv) > 2 else h.duration_sec / 2
            print(f"{argv[1]}: {h.temporal_model}, {h.gaussian_count} gaussians, "
                  f"{h.duration_sec} s, SH degree {h.sh_degree}, {len(scene.chunks)} chunks")
            for record in scene.metadata:
                for key, value in record.entries:
                    print(f"  metadata {record.name}.{key} = {value}")
            frame = scene.evaluate(t, sh_degree=min(1, h.sh_degree))
            print(f"t = {t}: {len(frame)} visible")
            for i in range(min(len(frame), 3)):
                c, rgba = frame.center[i], frame.color[i]
                print(f"  #{i}: center ({c[0]:.3f}, {c[1]:.3f}, {c[2]:.3f}) "
                      f"rgba ({rgba[0]:.3f}, {rgba[1]:.3f}, {rgba[2]:.3f}, {rgba[3]:.3f}) "
                      f"object {frame.object_id[i]}")
    except fourdgs.Error as e:
        print(f"{argv[1]}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
