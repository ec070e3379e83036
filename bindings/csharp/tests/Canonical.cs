// The canonical document of docs/conformance.md rebuilt from what the binding returns, as
// python/tests/test_conformance.py rebuilds it from the Python package: every number in the
// type it stands for (float for the gaussian columns, the visible state and the Object Table's
// vectors; double for every other non-integer; integers as long/ulong), on both read paths.
using System;
using System.Collections.Generic;
using System.Linq;
using System.Text;
using Fourdgs.Native;

namespace Fourdgs.Tests
{
    using D = Dictionary<string, object>;
    using L = List<object>;

    static class Canonical
    {
        public static readonly double[] InstantFractions = { 0.0, 0.125, 0.25, 0.5, 0.75, 0.999 };
        static readonly string[] Axes = { "+x", "+y", "+z", "-x", "-y", "-z" };
        static readonly string[] LengthUnits = { "unspecified", "metre", "centimetre", "millimetre", "kilometre", "foot", "inch" };
        static readonly string[] CameraModels = { "none", "pinhole", "brown-conrady", "kannala-brandt" };

        static string Spelling(string[] table, uint v) { return v < table.Length ? table[v] : v.ToString(); }
        static L Ds(IEnumerable<double> v) { return v.Select(x => (object)x).ToList(); }
        static L Fs(IEnumerable<float> v) { return v == null ? null : v.Select(x => (object)x).ToList(); }

        static string Hex(byte[] b, int start, int n)
        {
            var s = new StringBuilder(2 * n);
            for (int i = 0; i < n; i++) s.Append(b[start + i].ToString("x2"));
            return s.ToString();
        }

        static L Slice(float[] a, int i, int k)
        {
            var l = new L(k);
            for (int j = 0; j < k; j++) l.Add(a[i * k + j]);
            return l;
        }

        /// <summary>A block's gaussians as the canonical document lists them.</summary>
        public static L Gaussians(Block block)
        {
            var c = block.Columns;
            int n = (int)(ulong)c.count, sh = (int)(ulong)c.sh_per_gaussian;
            float[] position = Column.Floats(c.position, 3 * n), scale = Column.Floats(c.scale, 3 * n),
                rotation = Column.Floats(c.rotation, 4 * n), color = Column.Floats(c.color, 4 * n),
                motion = Column.Floats(c.motion, 3 * n), muT = Column.Floats(c.mu_t, n),
                sigmaT = Column.Floats(c.sigma_t, n), lo = Column.Floats(c.win_lo, n),
                hi = Column.Floats(c.win_hi, n);
            byte[] flags = Column.Bytes(c.flags, n), shBytes = Column.Bytes(c.sh, sh * n);
            int[] window = Column.Ints(c.window_index, n), objectId = Column.Ints(c.object_id, n),
                group = Column.Ints(c.source_group, n), index = Column.Ints(c.source_index, n),
                id = Column.Ints(c.gaussian_id, n);
            var out_ = new L();
            for (int i = 0; i < n; i++)
            {
                out_.Add(new D
                {
                    {"position", Slice(position, i, 3)}, {"scale", Slice(scale, i, 3)},
                    {"rotation", Slice(rotation, i, 4)}, {"color", Slice(color, i, 4)},
                    {"motion", Slice(motion, i, 3)}, {"mu_t", muT[i]},
                    {"sigma_t", float.IsInfinity(sigmaT[i]) ? null : (object)sigmaT[i]},
                    {"window", new L { lo[i], hi[i] }}, {"window_index", (long)(uint)window[i]},
                    {"flags", (long)flags[i]}, {"sh", sh == 0 ? "" : Hex(shBytes, i * sh, sh)},
                    {"object_id", objectId == null ? 0L : (long)(uint)objectId[i]},
                    {"source", group == null ? null : new L { (long)group[i], (long)index[i] }},
                    {"gaussian_id", id == null ? null : (object)(long)(uint)id[i]},
                });
            }
            return out_;
        }

        /// <summary>A frame's rows, through the caller-owned arrays of Frame.CopyTo.</summary>
        public static L Visible(Frame frame, FrameArrays arrays)
        {
            var c = frame.Columns;
            int n = (int)(ulong)c.count;
            arrays.Reserve(n);
            int copied = frame.CopyTo(arrays);
            if (copied != n) throw new Exception("CopyTo wrote " + copied + " of " + n);
            // The frame's own SH degree, read from the borrowed column (CopyTo pads to arrays.ShDegree).
            int sh = (int)(ulong)c.sh_per_gaussian;
            byte[] shBytes = Column.Bytes(c.sh, sh * n);
            var out_ = new L();
            for (int i = 0; i < n; i++)
            {
                out_.Add(new D
                {
                    {"center", Slice(arrays.Center, i, 3)}, {"scale", Slice(arrays.Scale, i, 3)},
                    {"rotation", Slice(arrays.Rotation, i, 4)}, {"color", Slice(arrays.Color, i, 4)},
                    {"object_id", (long)arrays.ObjectId[i]}, {"flags", (long)arrays.Flags[i]},
                    {"sh", sh == 0 ? "" : Hex(shBytes, i * sh, sh)},
                });
            }
            return out_;
        }

        static D Payload(byte[] data)
        {
            return new D { {"length", (long)data.Length}, {"crc32", (long)Crc32(data)} };
        }

        static L Samples(List<Pose> samples)
        {
            return samples.Select(s => (object)new D { {"time", s.Time}, {"rotation", Ds(s.Rotation)},
                                                      {"translation", Ds(s.Translation)} }).ToList();
        }

        /// <summary>The scene part: header, quantization, windows and every extra.</summary>
        public static D Scene(Reader r)
        {
            var info = r.Info;
            var i = info.Raw;
            var doc = new D();
            doc["header"] = new D
            {
                {"profile", info.Profile}, {"library", info.Library}, {"duration_sec", i.duration_sec},
                {"gaussian_count", i.gaussian_count}, {"cutoff", i.cutoff},
                {"temporal_model", info.TemporalModel}, {"aabb", Ds(i.aabb)}, {"sh_degree", (long)i.sh_degree},
                {"flags", (long)i.header_flags},
                {"attributes", r.HeaderAttributes.Select(p => (object)new L { p.Key, p.Value }).ToList()},
            };
            var bounds = new D();
            foreach (var p in r.QuantizationBounds) bounds[p.Key] = p.Value;
            doc["quantization"] = new D
            {
                {"scheme", info.QuantizationScheme}, {"pos_origin", Ds(i.pos_origin)},
                {"step_pos", i.step_pos}, {"step_scale_log", i.step_scale_log}, {"step_rot", i.step_rot},
                {"step_rgb", i.step_rgb}, {"step_alpha", i.step_alpha}, {"step_motion", i.step_motion},
                {"step_time", i.step_time}, {"step_sigma_log", i.step_sigma_log},
                {"step_sh", (long)i.step_sh}, {"bounds", bounds},
                {"sh_depths", i.sh_depths.Take((int)i.sh_depth_count).Select(d => (object)(long)d).ToList()},
                {"sh_depths_malformed", i.sh_depths_malformed != 0},
            };
            var windows = r.Windows.Select(w => (object)Ds(w)).ToList();
            doc["windows"] = windows.Count > 0 ? windows : new L { Ds(new[] { 0.0, 0.0 }) };
            doc["summary_crc_verified"] = i.summary_crc_verified != 0;
            doc["metadata"] = r.Metadata.Select(m => (object)new D
            {
                {"name", m.Name}, {"entries", m.Entries.Select(p => (object)new L { p.Key, p.Value }).ToList()}
            }).ToList();
            doc["attachments"] = r.Attachments.Select(a => (object)new D
            {
                {"name", a.Name}, {"media_type", a.MediaType}, {"payload", Payload(r.ReadPayload(a.Payload))}
            }).ToList();
            var cam = r.Camera;
            doc["camera"] = cam == null ? null : new D
            {
                {"fov_y_deg", cam.FovYDeg}, {"position", Ds(cam.Position)}, {"target", Ds(cam.Target)},
                {"interpolation", cam.Interpolation}, {"loop", cam.Loop},
                {"keyframes", cam.Keyframes.Select(k => (object)new D
                    { {"time", k.Time}, {"position", Ds(k.Position)}, {"target", Ds(k.Target)} }).ToList()},
            };
            var ts = InstantFractions.Select(f => f * i.duration_sec).ToArray();
            var audio = new List<D>();
            var sources = r.AudioSources;
            for (int k = 0; k < sources.Count; k++)
            {
                var a = sources[k];
                var states = new L();
                foreach (double t in ts)
                {
                    var st = r.AudioStateAt(k, t);
                    states.Add(new D
                    {
                        {"t", t}, {"active", st.active != 0}, {"local_time", st.local_time}, {"gain", st.gain},
                        {"position", Ds(new[] { st.position_x, st.position_y, st.position_z })},
                        {"rotation", Ds(new[] { st.rotation_x, st.rotation_y, st.rotation_z, st.rotation_w })},
                    });
                }
                byte[] data = r.ReadPayload(a.Payload);
                audio.Add(new D
                {
                    {"source_id", (long)a.SourceId}, {"legacy", a.Legacy}, {"name", a.Name}, {"codec", a.Codec},
                    {"channel_layout", a.ChannelLayout}, {"data_length", (long)data.Length},
                    {"start_sec", a.StartSec}, {"duration_sec", a.DurationSec}, {"gain", a.Gain},
                    {"flags", (long)a.Flags}, {"position", Ds(a.Position)}, {"rotation", Ds(a.Rotation)},
                    {"keyframes", a.Keyframes.Select(f => (object)new D
                        { {"time", f.Time}, {"position", Ds(f.Position)}, {"rotation", Ds(f.Rotation)} }).ToList()},
                    {"interpolation", a.Interpolation}, {"payload", Payload(data)}, {"states", states},
                });
            }
            doc["audio"] = audio.OrderBy(a => (long)a["source_id"]).Select(a => (object)a).ToList();
            doc["coordinate_frames"] = r.CoordinateFrames.Select(f => (object)new D
            {
                {"name", f.Name}, {"handedness", (long)f.Handedness}, {"up_axis", Spelling(Axes, f.UpAxis)},
                {"forward_axis", Spelling(Axes, f.ForwardAxis)}, {"length_unit", Spelling(LengthUnits, f.LengthUnit)},
                {"metres_per_unit", f.MetresPerUnit},
            }).ToList();
            doc["sensors"] = r.Sensors.Select(s => (object)new D
            {
                {"name", s.Name}, {"modality", s.Modality}, {"camera_model", Spelling(CameraModels, s.CameraModel)},
                {"width_px", (long)s.WidthPx}, {"height_px", (long)s.HeightPx}, {"fx", s.Fx}, {"fy", s.Fy},
                {"cx", s.Cx}, {"cy", s.Cy}, {"distortion", Ds(s.Distortion)}, {"rotation", Ds(s.Rotation)},
                {"translation", Ds(s.Translation)}, {"pose_reference", (long)s.PoseReference},
                {"rig_name", s.RigName},
            }).ToList();
            doc["rig_trajectories"] = r.RigTrajectories.Select(t => (object)new D
                { {"name", t.Name}, {"interpolation", (long)t.Interpolation}, {"samples", Samples(t.Samples)} }).ToList();
            doc["geodetic_anchors"] = r.GeodeticAnchors.Select(g => (object)new D
            {
                {"frame_name", g.FrameName}, {"latitude_deg", g.LatitudeDeg}, {"longitude_deg", g.LongitudeDeg},
                {"altitude_m", g.AltitudeM}, {"heading_deg", g.HeadingDeg},
            }).ToList();
            doc["object_table"] = i.has_object_table == 0 ? null : new D
            {
                {"embedding_dim", (long)i.object_embedding_dim},
                {"entries", r.Objects.Select(o => (object)new D
                {
                    {"object_id", (long)o.ObjectId}, {"label", o.Label}, {"anchor", Fs(o.Anchor)},
                    {"dynamics", o.Velocity == null ? null : new D
                        { {"velocity", Fs(o.Velocity)}, {"angular_velocity", Fs(o.AngularVelocity)},
                          {"acceleration", Fs(o.Acceleration)} }},
                    {"embedding", Fs(o.Embedding)},
                }).ToList()},
            };
            doc["object_tracks"] = r.ObjectTracks.Select(t => (object)new D
                { {"object_id", (long)t.ObjectId}, {"interpolation", (long)t.Interpolation}, {"samples", Samples(t.Samples)} }).ToList();
            return doc;
        }

        /// <summary>The file's tail and summary, and the index (the file's own, not a scan's).</summary>
        public static D Summary(Reader r, bool streamed)
        {
            var i = r.Info.Raw;
            bool fromFile = streamed || i.index_built_by_scan == 0;
            var index = new L();
            foreach (var c in fromFile ? r.Chunks : new List<Chunk>())
            {
                var k = c.Raw;
                index.Add(new D
                {
                    {"t0", k.t0}, {"t1", k.t1}, {"chunk_offset", k.offset}, {"chunk_length", k.size},
                    {"gaussian_count", k.gaussian_count},
                    {"bands", c.Bands.Select(b => (object)new D { {"band", b[0]}, {"offset", b[1]}, {"length", b[2]} }).ToList()},
                    {"keyframe", k.has_keyframe_fields == 0 ? null : new D
                    {
                        {"chunk_kind", (long)k.kind}, {"delta_mode", (long)k.delta_mode}, {"depth", (long)k.depth},
                        {"keyframe_offset", k.keyframe_offset}, {"live_count", k.live_count},
                        {"reference_offset", k.reference_offset},
                    }},
                });
            }
            return new D
            {
                {"trailing_bytes", i.trailing_bytes}, {"window_table_present", i.window_table_present != 0},
                {"footer", i.has_footer == 0 ? null : new D
                    { {"summary_start", i.summary_start}, {"summary_offset_start", i.summary_offset_start},
                      {"summary_crc", (long)i.summary_crc} }},
                {"statistics", i.has_statistics == 0 ? null : new D
                    { {"gaussian_count", i.statistics_gaussian_count}, {"chunk_count", i.statistics_chunk_count},
                      {"duration_sec", i.statistics_duration_sec}, {"aabb", Ds(i.statistics_aabb)} }},
                {"summary_offsets", r.SummaryOffsets.Select(s => (object)new D
                    { {"group_opcode", (long)s.Opcode}, {"group_start", s.Offset}, {"group_length", s.Length} }).ToList()},
                {"skipped_records", r.SkippedRecords.Select(s => (object)new D
                    { {"opcode", (long)s.Opcode}, {"offset", s.Offset}, {"length", s.Length} }).ToList()},
                {"index", index},
            };
        }

        static D StateChunk(BlockInfo b)
        {
            bool delta = b.chunk_kind == 1;
            return new D
            {
                {"offset", b.offset}, {"length", b.length}, {"t0", b.t0}, {"t1", b.t1}, {"level", (long)b.level},
                {"chunk_kind", (long)b.chunk_kind}, {"delta_mode", (long)b.delta_mode}, {"depth", (long)b.depth},
                {"reference_offset", b.reference_offset}, {"keyframe_offset", b.keyframe_offset},
                {"live_count", b.live_count},
                // A keyframe has no groups to count: null, as the canonical document spells it.
                {"update_count", delta ? (object)(long)b.update_count : null},
                {"birth_count", delta ? (object)(long)b.birth_count : null},
                {"death_count", delta ? (object)(long)b.death_count : null},
                {"object_id_stream", b.object_id_stream != 0},
            };
        }

        /// <summary>The whole document of `file` on the indexed (Reader.Open) or streamed
        /// (SceneStream over a FileStream, keep_payloads) path.</summary>
        public static D Document(string file, bool streamed)
        {
            var blocks = new List<Block>();
            SceneStream stream = null;
            System.IO.FileStream fileStream = null;
            Reader r = null;
            try
            {
                if (streamed)
                {
                    fileStream = System.IO.File.OpenRead(file);
                    stream = new SceneStream(fileStream, new OpenSettings { KeepPayloads = true });
                    while (true)
                    {
                        var b = new Block();
                        if (!stream.NextBlock(b)) { b.Dispose(); break; }
                        blocks.Add(b);
                    }
                    r = stream.Scene;
                }
                else r = Reader.Open(file);
                return Decoded(r, blocks, streamed);
            }
            finally
            {
                foreach (var b in blocks) b.Dispose();
                if (stream != null) stream.Dispose(); else if (r != null) r.Dispose();
                if (fileStream != null) fileStream.Dispose();
            }
        }

        static D Decoded(Reader r, List<Block> blocks, bool streamed)
        {
            var info = r.Info;
            double duration = info.DurationSec;
            var ts = InstantFractions.Select(f => f * duration).ToArray();
            var doc = new D { {"model", info.TemporalModel} };
            var frames = new List<L>();
            var unrepresentable = new List<long>();
            var arrays = new FrameArrays(0, info.Raw.sh_degree);
            var owned = new List<Block>();
            try
            {
                if (!info.KeyframeDelta)
                {
                    var gaussians = new L();
                    var chunks = new List<D>();
                    if (!streamed)
                    {
                        var all = new Block();
                        owned.Add(all);
                        r.ReadAll(all);
                        gaussians = Gaussians(all);
                        foreach (var c in r.Chunks)
                            chunks.Add(new D { {"offset", c.Raw.offset}, {"t0", c.Raw.t0}, {"t1", c.Raw.t1},
                                               {"gaussian_count", c.Raw.gaussian_count} });
                    }
                    else
                    {
                        foreach (var b in blocks)
                        {
                            gaussians.AddRange(Gaussians(b));
                            var bi = b.Info;
                            chunks.Add(new D { {"offset", bi.offset}, {"t0", bi.t0}, {"t1", bi.t1},
                                               {"gaussian_count", (long)b.Count},
                                               {"object_id_stream", bi.object_id_stream != 0} });
                        }
                    }
                    doc["chunks"] = chunks.OrderBy(c => (ulong)c["offset"]).Select(c => (object)c).ToList();
                    doc["gaussians"] = gaussians;
                    foreach (double t in ts) Instant(r, t, streamed ? blocks : null, arrays, frames, unrepresentable);
                }
                else
                {
                    var states = blocks;
                    if (!streamed)
                    {
                        states = new List<Block>();
                        foreach (var c in r.Chunks)
                        {
                            var b = new Block();
                            owned.Add(b);
                            r.StateAt(c.Raw.t0, b);
                            states.Add(b);
                        }
                    }
                    foreach (double t in ts)
                        Instant(r, t, streamed ? blocks.Where(b => b.Info.t0 <= t && t < b.Info.t1).ToList() : null,
                                arrays, frames, unrepresentable);
                    doc["states"] = states.OrderBy(b => b.Info.t0).Select(b => (object)new D
                        { {"chunk", StateChunk(b.Info)}, {"gaussians", Gaussians(b)} }).ToList();
                }
            }
            finally
            {
                foreach (var b in owned) b.Dispose();
            }
            var instants = new L();
            for (int k = 0; k < ts.Length; k++)
                instants.Add(new D { {"t", ts[k]}, {"visible", frames[k]}, {"unrepresentable", unrepresentable[k]} });
            doc["instants"] = instants;
            foreach (var p in Scene(r)) doc[p.Key] = p.Value;
            foreach (var p in Summary(r, streamed)) doc[p.Key] = p.Value;
            return doc;
        }

        /// <summary>The visible state at t: Reader.Evaluate (indexed), or EvaluateBlock over the
        /// given blocks gathered in one frame (streamed).</summary>
        static void Instant(Reader r, double t, List<Block> blocks, FrameArrays arrays, List<L> frames,
                            List<long> unrepresentable)
        {
            using (var frame = new Frame())
            {
                if (blocks == null) r.Evaluate(t, frame);
                else
                    for (int k = 0; k < blocks.Count; k++)
                        r.EvaluateBlock(blocks[k], t, frame, new EvaluateSettings { Append = k > 0 });
                frames.Add(Visible(frame, arrays));
                unrepresentable.Add((long)(ulong)frame.Columns.unrepresentable);
            }
        }

        static uint[] crcTable;

        public static uint Crc32(byte[] data)
        {
            if (crcTable == null)
            {
                crcTable = new uint[256];
                for (uint n = 0; n < 256; n++)
                {
                    uint c = n;
                    for (int k = 0; k < 8; k++) c = (c & 1) != 0 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
                    crcTable[n] = c;
                }
            }
            uint crc = 0xFFFFFFFFu;
            foreach (byte b in data) crc = crcTable[(crc ^ b) & 0xFF] ^ (crc >> 8);
            return crc ^ 0xFFFFFFFFu;
        }
    }
}
