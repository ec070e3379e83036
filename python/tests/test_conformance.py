"""The conformance corpus through the Python package, on both read paths.

Every valid file is decoded through fourdgs.open (indexed: footer, summary, ranges) and through
fourdgs.stream (front to back), rebuilt into the canonical document of docs/conformance.md from
what the package returns, and compared with the committed <name>.expected.json exactly. The
canonical form spells every number as the shortest decimal that reads back as the value in its
own type, so each expected number is parsed into the type it stands for and compared for
equality, not within a tolerance: the gaussian columns, the visible state and the Object Table's
vectors as numpy float32, every other non-integer as a Python float (an f64). Lists of gaussians
are compared as sorted multisets. Every refusal file is refused on both paths with its committed
identifier.

The file's tail and summary (trailing_bytes, window_table_present, statistics, summary_offsets,
footer, skipped_records) are compared through Scene.summary, the index (ranges, times, counts,
the six keyframe-delta fields, the SH band ranges) through Scene.chunks, a state's group counts
and object_id stream through State.chunk, and each visible gaussian's flags through Frame.flags.
Not compared here (the C++ runner compares it byte for byte): on the indexed path, whether a
gaussian-birth chunk carried an object_id stream. fourdgs_chunk_info answers from the index
alone, which does not say; a chunk read from a stream says so (State.chunk), and an absent stream
and an all-zero one decode alike (§6.6).
"""
import json
import math
import zlib
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest

import fourdgs

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "conformance" / "corpus"
VALID = sorted((CORPUS / "valid").glob("*.4dgs"))
REFUSALS = sorted((CORPUS / "refusals").glob("*.4dgs"))
INSTANT_FRACTIONS = (0.0, 0.125, 0.25, 0.5, 0.75, 0.999)


# -- the expected document: numbers as spelled, parsed into their type when compared ---------

class Num(str):
    """A JSON number as the canonical form spells it."""


def expected(file: Path):
    return json.loads((file.parent / (file.stem + ".expected.json")).read_text(),
                      parse_float=Num, parse_int=Num)


def f32(spelling: str) -> np.float32:
    """The float32 a decimal stands for, correctly rounded. Through a float64 first, which is
    exact unless the float64 lands on a float32 midpoint (rounding to 53 bits cannot cross one,
    only reach it): then the decimal itself decides which side it lies on."""
    x = float(spelling)
    v = np.float32(x)
    if np.isfinite(v) and float(v) != x:
        other = np.nextafter(v, np.float32(math.copysign(np.inf, x - float(v))))
        mid = (float(v) + float(other)) / 2  # exact: 25 significant bits
        if x == mid and Decimal(spelling) != Decimal(mid):
            v = other if (Decimal(spelling) > Decimal(mid)) == (other > v) else v
    return v


# The keys of a gaussian or a visible gaussian whose numbers are integers; every other number
# in those items is a float32.
INTEGER_KEYS = {"window_index", "flags", "object_id", "gaussian_id", "source"}


def typed_gaussian(item: dict) -> dict:
    """An expected gaussian (or visible gaussian) with its numbers in their types."""
    def typed(v, integer):
        if isinstance(v, list):
            return [typed(x, integer) for x in v]
        if isinstance(v, Num):
            return int(v) if integer else f32(v)
        return v
    return {k: typed(v, k in INTEGER_KEYS) for k, v in item.items()}


def sort_key(item: dict) -> str:
    """An order for typed gaussians, the same for equal items (-0 sorts as 0)."""
    def plain(v):
        if isinstance(v, list):
            return [plain(x) for x in v]
        if isinstance(v, (float, np.floating)):
            return float(v) + 0.0
        return v
    return json.dumps({k: plain(v) for k, v in item.items()}, sort_keys=True)


def same_number(got, want: str) -> bool:
    """`got` (a float32, a float or an integer from the package) against an expected spelling:
    a number token, or a string for non-finite values and integers above 2^53."""
    if isinstance(got, (bool, np.bool_)):
        return False
    if isinstance(got, (int, np.integer)):
        return str(int(got)) == want if not isinstance(want, Num) else int(got) == int(want)
    if not isinstance(want, Num):  # "inf", "-inf", "nan"
        return (want == "nan" and math.isnan(got)) or (math.isinf(got) and
                                                       want == ("inf" if got > 0 else "-inf"))
    if isinstance(got, np.float32):
        return got == f32(want)
    return isinstance(got, float) and got == float(want)


def is_gaussian_list(items) -> bool:
    """A list of decoded gaussians ("mu_t") or of visible ones ("center")."""
    return bool(items) and isinstance(items[0], dict) and ("mu_t" in items[0] or
                                                          "center" in items[0])


def compare(got, want, where=""):
    """Asserts that `got` (the package's values, in their types) equals `want` (the expected
    document), naming the first place that differs. Lists of gaussians are compared as
    multisets (their order is the canonical serialization's)."""
    if isinstance(want, dict):
        assert isinstance(got, dict), f"{where}: got {type(got).__name__}"
        for k in want:
            assert k in got, f"{where}.{k} missing"
            compare(got[k], want[k], f"{where}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), \
            f"{where}: {len(got) if isinstance(got, list) else got!r} items, {len(want)} expected"
        if is_gaussian_list(want):
            mine = sorted(got, key=sort_key)
            theirs = sorted((typed_gaussian(w) for w in want), key=sort_key)
            for k, (g, w) in enumerate(zip(mine, theirs)):
                assert g == w, f"{where} (sorted) [{k}] differs:\n got {g}\nwant {w}"
        else:
            for k, (g, w) in enumerate(zip(got, want)):
                compare(g, w, f"{where}[{k}]")
    elif isinstance(want, Num) or (isinstance(want, str) and not isinstance(got, str)):
        assert same_number(got, want), f"{where}: got {got!r}, want {want}"
    else:
        assert got == want, f"{where}: got {got!r}, want {want!r}"


# -- the document from the package, every number in the type it stands for -------------------

def f32s(values):
    return [np.float32(v) for v in values]


def gaussians_json(states):
    """Decoded gaussians (their columns are float32: tolist() gives each value exactly)."""
    out = []
    for s in states:
        position, scale, rotation = s.position.tolist(), s.scale.tolist(), s.rotation.tolist()
        color, motion = s.color.tolist(), s.motion.tolist()
        mu_t, sigma_t, lo, hi = (s.mu_t.tolist(), s.sigma_t.tolist(), s.win_lo.tolist(),
                                 s.win_hi.tolist())
        window_index, flags, object_id = (s.window_index.tolist(), s.flags.tolist(),
                                          s.object_id.tolist())
        for i in range(len(s)):
            out.append({
                "position": position[i], "scale": scale[i], "rotation": rotation[i],
                "color": color[i], "motion": motion[i], "mu_t": mu_t[i],
                "sigma_t": None if math.isinf(sigma_t[i]) else sigma_t[i],
                "window": [lo[i], hi[i]], "window_index": window_index[i], "flags": flags[i],
                "sh": s.sh[i].tobytes().hex(), "object_id": object_id[i],
                "source": None if s.source_group is None else
                [int(s.source_group[i]), int(s.source_index[i])],
                "gaussian_id": None if s.gaussian_id is None else int(s.gaussian_id[i]),
            })
    return out


def frame_json(frame):
    center, scale, rotation = frame.center.tolist(), frame.scale.tolist(), frame.rotation.tolist()
    color, object_id = frame.color.tolist(), frame.object_id.tolist()
    flags = frame.flags.tolist()
    return [{"center": center[i], "scale": scale[i], "rotation": rotation[i], "color": color[i],
             "object_id": object_id[i], "sh": frame.sh[i].tobytes().hex(), "flags": flags[i]}
            for i in range(len(frame))]


def samples_json(samples):
    return [{"time": s.time, "rotation": list(s.rotation), "translation": list(s.translation)}
            for s in samples]


def payload_json(data: bytes):
    return {"length": len(data), "crc32": zlib.crc32(data)}


def scene_json(scene: fourdgs.Scene):
    h, q = scene.header, scene.quantization
    doc = {
        "header": {"profile": h.profile, "library": h.library, "duration_sec": h.duration_sec,
                   "gaussian_count": h.gaussian_count, "cutoff": h.cutoff,
                   "temporal_model": h.temporal_model, "aabb": list(h.aabb),
                   "sh_degree": h.sh_degree, "flags": h.flags,
                   "attributes": [[k, v] for k, v in h.attributes]},
        "quantization": {"scheme": q.scheme, "pos_origin": list(q.pos_origin),
                         **{k: getattr(q, k) for k in (
                             "step_pos", "step_scale_log", "step_rot", "step_rgb", "step_alpha",
                             "step_motion", "step_time", "step_sigma_log")},
                         "step_sh": q.step_sh, "bounds": q.bounds, "sh_depths": list(q.sh_depths),
                         "sh_depths_malformed": q.sh_depths_malformed},
        "windows": [[lo, hi] for lo, hi in scene.windows] or [[0.0, 0.0]],
        "summary_crc_verified": scene.summary_crc_verified,
        "metadata": [{"name": m.name, "entries": [[k, v] for k, v in m.entries]}
                     for m in scene.metadata],
        "attachments": [{"name": a.name, "media_type": a.media_type,
                         "payload": payload_json(scene.attachment_data(i))}
                        for i, a in enumerate(scene.attachments)],
    }
    cam = scene.camera
    doc["camera"] = None if cam is None else {
        "fov_y_deg": cam.fov_y_deg, "position": list(cam.position), "target": list(cam.target),
        "interpolation": cam.interpolation, "loop": cam.loop,
        "keyframes": [{"time": k.time, "position": list(k.position), "target": list(k.target)}
                      for k in cam.keyframes]}
    ts = [f * h.duration_sec for f in INSTANT_FRACTIONS]
    audio = []
    for i, a in enumerate(scene.audio_sources):
        states = []
        for t in ts:
            st = scene.audio_state_at(i, t)
            states.append({"t": t, "active": st.active, "local_time": st.local_time,
                           "gain": st.gain, "position": list(st.position),
                           "rotation": list(st.rotation)})
        data = scene.audio_data(i)
        audio.append({"source_id": a.source_id, "legacy": a.legacy, "name": a.name,
                      "codec": a.codec, "channel_layout": a.channel_layout,
                      "data_length": len(data), "start_sec": a.start_sec,
                      "duration_sec": a.duration_sec, "gain": a.gain, "flags": a.flags,
                      "position": list(a.position), "rotation": list(a.rotation),
                      "keyframes": [{"time": k.time, "position": list(k.position),
                                     "rotation": list(k.rotation)} for k in a.keyframes],
                      "interpolation": a.interpolation, "payload": payload_json(data),
                      "states": states})
    doc["audio"] = sorted(audio, key=lambda a: a["source_id"])
    doc["coordinate_frames"] = [
        {"name": f.name, "handedness": f.handedness, "up_axis": f.up_axis,
         "forward_axis": f.forward_axis, "length_unit": f.length_unit,
         "metres_per_unit": f.metres_per_unit} for f in scene.coordinate_frames]
    doc["sensors"] = [
        {"name": s.name, "modality": s.modality, "camera_model": s.camera_model,
         "width_px": s.width_px, "height_px": s.height_px, "fx": s.fx, "fy": s.fy,
         "cx": s.cx, "cy": s.cy, "distortion": list(s.distortion),
         "rotation": list(s.rotation), "translation": list(s.translation),
         "pose_reference": s.pose_reference, "rig_name": s.rig_name} for s in scene.sensors]
    doc["rig_trajectories"] = [{"name": r.name, "interpolation": r.interpolation,
                                "samples": samples_json(r.samples)} for r in scene.rig_trajectories]
    doc["geodetic_anchors"] = [
        {"frame_name": g.frame_name, "latitude_deg": g.latitude_deg,
         "longitude_deg": g.longitude_deg, "altitude_m": g.altitude_m,
         "heading_deg": g.heading_deg} for g in scene.geodetic_anchors]
    dim = scene.object_embedding_dim
    doc["object_table"] = None if dim is None else {  # the table's vectors are float32
        "embedding_dim": dim,
        "entries": [{"object_id": o.object_id, "label": o.label, "anchor": f32s(o.anchor),
                     "dynamics": None if o.dynamics is None else {
                         "velocity": f32s(o.dynamics.velocity),
                         "angular_velocity": f32s(o.dynamics.angular_velocity),
                         "acceleration": f32s(o.dynamics.acceleration)},
                     "embedding": None if o.embedding is None else f32s(o.embedding)}
                    for o in scene.objects]}
    doc["object_tracks"] = [{"object_id": t.object_id, "interpolation": t.interpolation,
                             "samples": samples_json(t.samples)} for t in scene.object_tracks]
    return doc


def decoded_json(scene: fourdgs.Scene, path: str):
    """The gaussian part of the document (and the scene part, read after the stream ended)."""
    duration = scene.header.duration_sec
    ts = [f * duration for f in INSTANT_FRACTIONS]
    kd = scene.model == "keyframe-delta"
    doc = {"model": scene.model}
    if path == "streamed":
        blocks = list(scene.blocks())
    if not kd:
        if path == "indexed":
            states = [scene.read_all()]
            chunks = [{"offset": c.offset, "t0": c.t0, "t1": c.t1,
                       "gaussian_count": c.gaussian_count} for c in scene.chunks]
            frames = [scene.evaluate(t) for t in ts]
        else:
            states = blocks
            chunks = [{"offset": b.chunk["offset"], "t0": b.chunk["t0"], "t1": b.chunk["t1"],
                       "gaussian_count": len(b), "object_id_stream": b.chunk["object_id_stream"]}
                      for b in blocks]
            frames = [scene.evaluate(t, blocks) for t in ts]
        doc["chunks"] = sorted(chunks, key=lambda c: c["offset"])
        doc["gaussians"] = gaussians_json(states)
    else:
        if path == "indexed":
            blocks = [scene.state_at(c.t0) for c in scene.chunks]
            frames = [scene.evaluate(t) for t in ts]
        else:
            frames = [scene.evaluate(t, [b for b in blocks
                                         if b.chunk["t0"] <= t < b.chunk["t1"]]) for t in ts]
        blocks.sort(key=lambda b: b.chunk["t0"])
        doc["states"] = [{"chunk": dict(b.chunk), "gaussians": gaussians_json([b])}
                         for b in blocks]
    doc["instants"] = [{"t": t, "visible": frame_json(f), "unrepresentable": f.unrepresentable}
                       for t, f in zip(ts, frames)]
    doc.update(scene_json(scene))
    doc.update(summary_json(scene, path))
    return doc


def summary_json(scene: fourdgs.Scene, path: str):
    """The file's tail and summary as the canonical document spells them: through Scene.summary
    and (the file's own index, not one built by scanning) Scene.chunks."""
    s = scene.summary
    from_file = path == "streamed" or not scene.counts["index_built_by_scan"]
    index = []
    for c in scene.chunks if from_file else []:
        index.append({"t0": c.t0, "t1": c.t1, "chunk_offset": c.offset, "chunk_length": c.size,
                      "gaussian_count": c.gaussian_count,
                      "bands": [{"band": b, "offset": o, "length": n} for b, o, n in c.bands],
                      "keyframe": c.keyframe})
    return {"trailing_bytes": s["trailing_bytes"],
            "window_table_present": s["window_table_present"],
            "footer": s["footer"], "statistics": s["statistics"],
            "summary_offsets": [{"group_opcode": c, "group_start": o, "group_length": n}
                                for c, o, n in s["summary_offsets"]],
            "skipped_records": [{"opcode": c, "offset": o, "length": n}
                                for c, o, n in s["skipped_records"]],
            "index": index}


def without_unexposed(want, path: str):
    """`want` less what the package does not expose on `path` (the module docstring)."""
    want = dict(want)
    if path == "indexed" and want.get("model") == "gaussian-birth":
        want["chunks"] = [{k: v for k, v in c.items() if k != "object_id_stream"}
                          for c in want["chunks"]]
    # A visible gaussian whose centre is beyond float32 (spelled as its f64 there) has no row in
    # a Frame: it is counted in Frame.unrepresentable instead.
    def fits(item):
        with np.errstate(over="ignore"):  # a spelling beyond float32 is what this looks for
            return all(isinstance(v, Num) and np.isfinite(f32(v)) or not isinstance(v, Num)
                       for v in item["center"] + item["rotation"])
    want["instants"] = [{"t": i["t"], "visible": [v for v in i["visible"] if fits(v)],
                         "unrepresentable": sum(not fits(v) for v in i["visible"])}
                        for i in want["instants"]]
    return want


def open_path(file: Path, path: str) -> fourdgs.Scene:
    if path == "indexed":
        return fourdgs.open(file)
    return fourdgs.stream(file, keep_payloads=True)  # the payloads pass by once


def test_exact_numbers_parse_into_their_own_type():
    assert f32("0.1") == np.float32(0.1) and float(f32("0.1")) == 0.10000000149011612
    assert same_number(np.float32(0.1), Num("0.1")) and not same_number(0.1, Num("0.1000001"))
    assert same_number(0.10000000149011612, Num("0.10000000149011612"))
    assert not same_number(0.1, Num("0.10000000149011612"))
    # Decimals a hair either side of a float32 midpoint, whose float64 is the midpoint itself.
    lo = np.float32(1.0)
    hi = np.nextafter(lo, np.float32(2.0))
    mid = "1.000000059604644775390625"  # (lo + hi) / 2, exactly
    assert Decimal(mid) == (Decimal(float(lo)) + Decimal(float(hi))) / 2
    assert f32(mid) == lo  # a tie: to even
    assert f32(mid + "000001") == hi and f32("1.000000059604644775390624999") == lo
    assert float(mid + "000001") == float(mid)
    assert same_number(2**60, "1152921504606846976") and same_number(float("inf"), "inf")


@pytest.mark.parametrize("path", ["indexed", "streamed"])
@pytest.mark.parametrize("file", VALID, ids=[f.stem for f in VALID])
def test_valid_file_decodes_to_its_committed_canonical_document(file, path):
    want = expected(file)
    with open_path(file, path) as scene:
        got = decoded_json(scene, path)
        counts = scene.counts
        chunks = scene.chunks
    want_doc = without_unexposed(want, path)
    assert set(got) >= set(want_doc)
    compare(got, want_doc)
    assert counts["skipped_record_count"] == len(want["skipped_records"])
    assert [c.kind for c in chunks] == \
        [c.keyframe["chunk_kind"] if c.keyframe else 0 for c in chunks]


def first_refusal(file: Path, path: str) -> fourdgs.Error:
    """What reading the whole file (gaussians, payloads) refuses first."""
    try:
        with open_path(file, path) as scene:
            if path == "streamed":
                for _ in scene.blocks():
                    pass
            elif scene.model == "keyframe-delta":
                for c in scene.chunks:
                    scene.state_at(c.t0)
            else:
                scene.read_all()
            for i in range(len(scene.attachments)):
                scene.attachment_data(i)
            for i in range(len(scene.audio_sources)):
                scene.audio_data(i)
    except fourdgs.Error as e:
        return e
    pytest.fail(f"{file.name} was read on the {path} path without a refusal")


@pytest.mark.parametrize("path", ["indexed", "streamed"])
@pytest.mark.parametrize("file", REFUSALS, ids=[f.stem for f in REFUSALS])
def test_refusal_file_is_refused_with_its_identifier(file, path):
    want = expected(file)
    e = first_refusal(file, path)
    assert e.refusal == want["refused"], f"{e}"
    if "kind" in want:
        assert e.kind == want["kind"]
    else:
        assert e.kind in ("malformed", "unsupported", "truncated")
    assert isinstance(e.message, str) and e.message


def test_the_corpus_is_there():
    assert len(VALID) >= 40 and len(REFUSALS) >= 60


def test_read_by_scan_and_its_cause_through_the_c_abi(tmp_path):
    """Scene.summary says how the indexed reader read the file: a file without an index is read
    by the scan with no cause (nothing was refused: there is no index to use) and an index built
    from its chunks; bytes after the trailing magic make the tail unusable, so the file is
    scanned with the tail's refusal as the cause, and counted as trailing_bytes. A whole file is
    not scanned."""
    whole = CORPUS / "valid" / "shape-long-lived.4dgs"
    with fourdgs.open(whole) as scene:
        s = scene.summary
        assert (s["read_by_scan"], s["scan_cause"], s["trailing_bytes"]) == (False, None, 0)
    no_index = ROOT / "tests" / "data" / "birth-never-fades-no-index.4dgs"
    with fourdgs.open(no_index) as scene:
        s = scene.summary
        assert (s["read_by_scan"], s["scan_cause"]) == (True, None)
        assert scene.counts["index_built_by_scan"] == 1 and s["footer"]["summary_start"] == 0
    trailing = tmp_path / "trailing.4dgs"
    trailing.write_bytes(whole.read_bytes() + b"xyz")
    with fourdgs.open(trailing) as scene:
        s = scene.summary
        assert (s["read_by_scan"], s["scan_cause"], s["trailing_bytes"]) == \
            (True, "magic-mismatch", 3)
        assert scene.counts["index_built_by_scan"] == 0  # the file's own index, checked
    with fourdgs.stream(trailing) as stream:  # front to back there is no tail to refuse
        for _ in stream.blocks():
            pass
        s = stream.summary
        assert (s["read_by_scan"], s["scan_cause"], s["trailing_bytes"]) == (False, None, 3)
