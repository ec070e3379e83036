// A .4dgs file opened for random access (fourdgs_reader_*), or the scene a stream lends.
using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using Fourdgs.Native;

namespace Fourdgs
{
    public sealed class Reader : IDisposable
    {
        internal readonly ReaderHandle Handle;
        // What the handle depends on: a stream lending its scene, or bytes borrowed in place.
        readonly object owner;
        GCHandle pinned;
        EvaluateOptions evaluateDefaults = Defaults.Evaluate();

        internal Reader(ReaderHandle handle, object owner)
        {
            Handle = handle;
            this.owner = owner;
        }

        /// <summary>Opens a file by path (the tail, summary and front matter are read now, the
        /// chunks on demand).</summary>
        public static Reader Open(string path, OpenSettings settings = null)
        {
            byte[] p = Lib.Utf8(path);
            return Opened(settings, (ref OpenOptions o, out IntPtr h) =>
                Api.fourdgs_reader_open_file(p, Lib.U(p.Length), ref o, out h), null);
        }

        /// <summary>Opens a file on a web server (http:// or https://) by range requests, with the
        /// HTTP settings of `settings`.</summary>
        public static Reader OpenUrl(string url, OpenSettings settings = null)
        {
            byte[] u = Lib.Utf8(url);
            return Opened(settings, (ref OpenOptions o, out IntPtr h) =>
                Api.fourdgs_reader_open_url(u, Lib.U(u.Length), ref o, out h), null);
        }

        /// <summary>Opens a file held in memory. The bytes are copied, unless settings.CopyMemory
        /// is false: then `data` is pinned until Dispose (call it: a reader that is only
        /// finalized keeps its bytes pinned).</summary>
        public static Reader OpenMemory(byte[] data, OpenSettings settings = null)
        {
            if (data == null) throw new ArgumentNullException("data");
            bool borrow = settings != null && settings.CopyMemory == false;
            GCHandle pin = GCHandle.Alloc(data, GCHandleType.Pinned);
            Reader r = null;
            try
            {
                using (var o = new NativeOpenOptions(settings))
                {
                    o.Value.copy_memory = borrow ? 0u : 1u;
                    IntPtr h;
                    Lib.Check(Api.fourdgs_reader_open_memory(pin.AddrOfPinnedObject(),
                                                             Lib.U(data.Length), ref o.Value, out h));
                    var handle = new ReaderHandle();
                    handle.Set(h);
                    r = new Reader(handle, null);
                }
            }
            finally
            {
                if (r != null && borrow) r.pinned = pin; else pin.Free();
            }
            return r;
        }

        delegate Status OpenCall(ref OpenOptions o, out IntPtr handle);

        static Reader Opened(OpenSettings settings, OpenCall call, object owner)
        {
            using (var o = new NativeOpenOptions(settings))
            {
                IntPtr h;
                Lib.Check(call(ref o.Value, out h));
                var handle = new ReaderHandle();
                handle.Set(h);
                return new Reader(handle, owner);
            }
        }

        public void Dispose()
        {
            Handle.Dispose();
            if (pinned.IsAllocated) pinned.Free();
        }

        ReaderHandle H { get { return Handle; } }
        static UIntPtr I(int i) { return (UIntPtr)(uint)i; }

        // -- scene information ------------------------------------------------------------

        public SceneInfo Info
        {
            get
            {
                var raw = new Native.SceneInfo { struct_size = Lib.Size<Native.SceneInfo>() };
                Lib.Check(Api.fourdgs_reader_scene_info(H, ref raw));
                return new SceneInfo
                {
                    Raw = raw, Profile = Lib.Str(raw.profile), Library = Lib.Str(raw.library),
                    TemporalModel = Lib.Str(raw.temporal_model_name),
                    QuantizationScheme = Lib.Str(raw.quantization_scheme),
                    ScanCause = Lib.Str(raw.scan_cause)
                };
            }
        }

        delegate Status KeyValueCall(ReaderHandle r, UIntPtr i, out FourdgsString k, out FourdgsString v);

        List<KeyValuePair<string, string>> Pairs(ulong count, KeyValueCall call)
        {
            var list = new List<KeyValuePair<string, string>>();
            for (int i = 0; i < (int)count; i++)
            {
                FourdgsString k, v;
                Lib.Check(call(H, I(i), out k, out v));
                list.Add(new KeyValuePair<string, string>(Lib.Str(k), Lib.Str(v)));
            }
            return list;
        }

        public List<KeyValuePair<string, string>> HeaderAttributes
        {
            get { return Pairs(Info.Raw.header_attribute_count, Api.fourdgs_reader_header_attribute); }
        }

        public List<KeyValuePair<string, string>> QuantizationBounds
        {
            get { return Pairs(Info.Raw.quantization_bound_count, Api.fourdgs_reader_quantization_bound); }
        }

        /// <summary>The effective Window Table: (lo, hi) pairs.</summary>
        public List<double[]> Windows
        {
            get
            {
                var list = new List<double[]>();
                for (int i = 0, count = (int)Info.Raw.window_count; i < count; i++)
                {
                    double lo, hi;
                    Lib.Check(Api.fourdgs_reader_window(H, I(i), out lo, out hi));
                    list.Add(new[] { lo, hi });
                }
                return list;
            }
        }

        public List<Metadata> Metadata
        {
            get
            {
                var list = new List<Metadata>();
                for (int i = 0, count = (int)Info.Raw.metadata_count; i < count; i++)
                {
                    FourdgsString name;
                    UIntPtr n;
                    Lib.Check(Api.fourdgs_reader_metadata(H, I(i), out name, out n));
                    var m = new Metadata { Name = Lib.Str(name) };
                    for (int e = 0; e < (int)(ulong)n; e++)
                    {
                        FourdgsString k, v;
                        Lib.Check(Api.fourdgs_reader_metadata_entry(H, I(i), I(e), out k, out v));
                        m.Entries.Add(new KeyValuePair<string, string>(Lib.Str(k), Lib.Str(v)));
                    }
                    list.Add(m);
                }
                return list;
            }
        }

        public List<Attachment> Attachments
        {
            get
            {
                var list = new List<Attachment>();
                for (int i = 0, count = (int)Info.Raw.attachment_count; i < count; i++)
                {
                    var a = new AttachmentInfo { struct_size = Lib.Size<AttachmentInfo>() };
                    Lib.Check(Api.fourdgs_reader_attachment(H, I(i), ref a));
                    list.Add(new Attachment { Name = Lib.Str(a.name), MediaType = Lib.Str(a.media_type),
                                              Payload = a.payload });
                }
                return list;
            }
        }

        /// <summary>A payload's bytes (an attachment's, an audio source's).</summary>
        public byte[] ReadPayload(Payload payload)
        {
            UIntPtr size;
            Lib.Check(Api.fourdgs_reader_read_payload(H, payload, null, UIntPtr.Zero, out size));
            var bytes = new byte[(int)(ulong)size];
            Lib.Check(Api.fourdgs_reader_read_payload(H, payload, bytes, size, out size));
            return bytes;
        }

        /// <summary>The camera (§5.10), or null when the file has none.</summary>
        public Camera Camera
        {
            get
            {
                if (Info.Raw.has_camera == 0) return null;
                var c = new CameraInfo { struct_size = Lib.Size<CameraInfo>() };
                Lib.Check(Api.fourdgs_reader_camera(H, ref c));
                var cam = new Camera { FovYDeg = c.fov_y_deg, Position = Lib.Copy(c.position),
                                       Target = Lib.Copy(c.target),
                                       Interpolation = Lib.Str(c.interpolation), Loop = c.loop != 0 };
                for (int i = 0; i < (int)c.keyframe_count; i++)
                {
                    var k = new CameraKeyframe();
                    Lib.Check(Api.fourdgs_reader_camera_keyframe(H, I(i), ref k));
                    cam.Keyframes.Add(new CameraKey { Time = k.time, Position = Lib.Copy(k.position),
                                                      Target = Lib.Copy(k.target) });
                }
                return cam;
            }
        }

        public List<AudioSource> AudioSources
        {
            get
            {
                var list = new List<AudioSource>();
                for (int i = 0, count = (int)Info.Raw.audio_source_count; i < count; i++)
                {
                    var a = new AudioSourceInfo { struct_size = Lib.Size<AudioSourceInfo>() };
                    Lib.Check(Api.fourdgs_reader_audio_source(H, I(i), ref a));
                    var s = new AudioSource
                    {
                        SourceId = a.source_id, Legacy = a.legacy != 0, Name = Lib.Str(a.name),
                        Codec = Lib.Str(a.codec), ChannelLayout = Lib.Str(a.channel_layout),
                        Interpolation = Lib.Str(a.interpolation), StartSec = a.start_sec,
                        DurationSec = a.duration_sec, Gain = a.gain, Flags = a.flags,
                        Position = Lib.Copy(a.position), Rotation = Lib.Copy(a.rotation),
                        Payload = a.payload
                    };
                    for (int k = 0; k < (int)a.keyframe_count; k++)
                    {
                        var f = new AudioKeyframe();
                        Lib.Check(Api.fourdgs_reader_audio_keyframe(H, I(i), I(k), ref f));
                        s.Keyframes.Add(new AudioKey { Time = f.time, Position = Lib.Copy(f.position),
                                                       Rotation = Lib.Copy(f.rotation) });
                    }
                    list.Add(s);
                }
                return list;
            }
        }

        /// <summary>§7.1/§7.2: audio source `index` at scene time t (no allocation).</summary>
        public AudioState AudioStateAt(int index, double t)
        {
            AudioState s;
            Lib.Check(Api.fourdgs_reader_audio_state_at(H, I(index), t, out s));
            return s;
        }

        public List<CoordinateFrameInfo> CoordinateFrames
        {
            get
            {
                var list = new List<CoordinateFrameInfo>();
                for (int i = 0, count = (int)Info.Raw.coordinate_frame_count; i < count; i++)
                {
                    var f = new CoordinateFrame { struct_size = Lib.Size<CoordinateFrame>() };
                    Lib.Check(Api.fourdgs_reader_coordinate_frame(H, I(i), ref f));
                    list.Add(new CoordinateFrameInfo { Name = Lib.Str(f.name), Handedness = f.handedness,
                                                       UpAxis = f.up_axis, ForwardAxis = f.forward_axis,
                                                       LengthUnit = f.length_unit,
                                                       MetresPerUnit = f.metres_per_unit });
                }
                return list;
            }
        }

        public List<SensorInfo> Sensors
        {
            get
            {
                var list = new List<SensorInfo>();
                for (int i = 0, count = (int)Info.Raw.sensor_count; i < count; i++)
                {
                    var s = new Sensor { struct_size = Lib.Size<Sensor>() };
                    Lib.Check(Api.fourdgs_reader_sensor(H, I(i), ref s));
                    var d = new double[(int)s.distortion_count];
                    if (d.Length > 0) Marshal.Copy(s.distortion, d, 0, d.Length);
                    list.Add(new SensorInfo
                    {
                        Name = Lib.Str(s.name), Modality = Lib.Str(s.modality), RigName = Lib.Str(s.rig_name),
                        CameraModel = s.camera_model, WidthPx = s.width_px, HeightPx = s.height_px,
                        Fx = s.fx, Fy = s.fy, Cx = s.cx, Cy = s.cy, Distortion = d,
                        Rotation = Lib.Copy(s.rotation), Translation = Lib.Copy(s.translation),
                        PoseReference = s.pose_reference
                    });
                }
                return list;
            }
        }

        delegate Status SampleCall(ReaderHandle r, UIntPtr i, UIntPtr s, ref PoseSample o);

        List<Pose> Samples(int index, int count, SampleCall call)
        {
            var list = new List<Pose>();
            for (int k = 0; k < count; k++)
            {
                var p = new PoseSample();
                Lib.Check(call(H, I(index), I(k), ref p));
                list.Add(new Pose { Time = p.time, Rotation = Lib.Copy(p.rotation),
                                    Translation = Lib.Copy(p.translation) });
            }
            return list;
        }

        public List<RigTrajectory> RigTrajectories
        {
            get
            {
                var list = new List<RigTrajectory>();
                for (int i = 0, count = (int)Info.Raw.rig_trajectory_count; i < count; i++)
                {
                    FourdgsString name;
                    uint interpolation;
                    UIntPtr n;
                    Lib.Check(Api.fourdgs_reader_rig_trajectory(H, I(i), out name, out interpolation, out n));
                    list.Add(new RigTrajectory { Name = Lib.Str(name), Interpolation = interpolation,
                                                 Samples = Samples(i, (int)(ulong)n,
                                                                   Api.fourdgs_reader_rig_trajectory_sample) });
                }
                return list;
            }
        }

        public List<GeodeticAnchorInfo> GeodeticAnchors
        {
            get
            {
                var list = new List<GeodeticAnchorInfo>();
                for (int i = 0, count = (int)Info.Raw.geodetic_anchor_count; i < count; i++)
                {
                    var g = new GeodeticAnchor { struct_size = Lib.Size<GeodeticAnchor>() };
                    Lib.Check(Api.fourdgs_reader_geodetic_anchor(H, I(i), ref g));
                    list.Add(new GeodeticAnchorInfo { FrameName = Lib.Str(g.frame_name),
                                                      LatitudeDeg = g.latitude_deg,
                                                      LongitudeDeg = g.longitude_deg,
                                                      AltitudeM = g.altitude_m, HeadingDeg = g.heading_deg });
                }
                return list;
            }
        }

        /// <summary>The Object Table's entries (empty without one: see Info.Raw.has_object_table).</summary>
        public List<ObjectEntry> Objects
        {
            get
            {
                var info = Info.Raw;
                var list = new List<ObjectEntry>();
                for (int i = 0, count = (int)info.object_count; i < count; i++)
                {
                    var o = new ObjectInfo { struct_size = Lib.Size<ObjectInfo>() };
                    Lib.Check(Api.fourdgs_reader_object(H, I(i), ref o));
                    float[] embedding = null;
                    if (o.has_embedding != 0)
                    {
                        embedding = new float[info.object_embedding_dim];
                        if (embedding.Length > 0) Marshal.Copy(o.embedding, embedding, 0, embedding.Length);
                    }
                    bool dyn = o.has_dynamics != 0;
                    list.Add(new ObjectEntry
                    {
                        ObjectId = o.object_id, Label = Lib.Str(o.label), Anchor = Lib.Copy(o.anchor),
                        Velocity = dyn ? Lib.Copy(o.velocity) : null,
                        AngularVelocity = dyn ? Lib.Copy(o.angular_velocity) : null,
                        Acceleration = dyn ? Lib.Copy(o.acceleration) : null, Embedding = embedding
                    });
                }
                return list;
            }
        }

        public List<ObjectTrack> ObjectTracks
        {
            get
            {
                var list = new List<ObjectTrack>();
                for (int i = 0, count = (int)Info.Raw.object_track_count; i < count; i++)
                {
                    uint id, interpolation;
                    UIntPtr n;
                    Lib.Check(Api.fourdgs_reader_object_track(H, I(i), out id, out interpolation, out n));
                    list.Add(new ObjectTrack { ObjectId = id, Interpolation = interpolation,
                                               Samples = Samples(i, (int)(ulong)n,
                                                                 Api.fourdgs_reader_object_track_sample) });
                }
                return list;
            }
        }

        /// <summary>The Chunk Index entries, with their SH band ranges.</summary>
        public List<Chunk> Chunks
        {
            get
            {
                var list = new List<Chunk>();
                for (int i = 0, count = (int)Info.Raw.chunk_count; i < count; i++)
                {
                    var c = new Chunk { Raw = new ChunkInfo { struct_size = Lib.Size<ChunkInfo>() } };
                    Lib.Check(Api.fourdgs_reader_chunk_info(H, I(i), ref c.Raw));
                    for (int k = 0; k < (int)c.Raw.band_count; k++)
                    {
                        uint band;
                        ulong offset, length;
                        Lib.Check(Api.fourdgs_reader_chunk_band(H, I(i), I(k), out band, out offset, out length));
                        c.Bands.Add(new ulong[] { band, offset, length });
                    }
                    list.Add(c);
                }
                return list;
            }
        }

        delegate Status RangeCall(ReaderHandle r, UIntPtr k, out uint opcode, out ulong offset, out ulong length);

        List<RecordRange> Ranges(ulong count, RangeCall call)
        {
            var list = new List<RecordRange>();
            for (int k = 0; k < (int)count; k++)
            {
                var r = new RecordRange();
                Lib.Check(call(H, I(k), out r.Opcode, out r.Offset, out r.Length));
                list.Add(r);
            }
            return list;
        }

        public List<RecordRange> SummaryOffsets
        {
            get { return Ranges(Info.Raw.summary_offset_count, Api.fourdgs_reader_summary_offset); }
        }

        public List<RecordRange> SkippedRecords
        {
            get { return Ranges(Info.Raw.skipped_record_count, Api.fourdgs_reader_skipped_record); }
        }

        // -- evaluation ----------------------------------------------------------------------

        /// <summary>The visible gaussians at t into `frame` (reused: no allocation once warm).
        /// Thread-safe for distinct frames.</summary>
        public void Evaluate(double t, Frame frame, EvaluateSettings settings = null)
        {
            var o = settings == null ? evaluateDefaults : settings.ToNative();
            Lib.Check(Api.fourdgs_reader_evaluate(H, t, ref o, frame.Handle));
        }

        /// <summary>§3 on a block already decoded (by this reader or a stream of the file).</summary>
        public void EvaluateBlock(Block block, double t, Frame frame, EvaluateSettings settings = null)
        {
            var o = settings == null ? evaluateDefaults : settings.ToNative();
            Lib.Check(Api.fourdgs_reader_evaluate_block(H, block.Handle, t, ref o, frame.Handle));
        }

        /// <summary>Every gaussian of a gaussian-birth file, decoded into `block`.</summary>
        public void ReadAll(Block block)
        {
            Lib.Check(Api.fourdgs_reader_read_all(H, block.Handle));
        }

        /// <summary>The decoded state instant t needs, before §3.</summary>
        public void StateAt(double t, Block block)
        {
            Lib.Check(Api.fourdgs_reader_state_at(H, t, block.Handle));
        }

        internal object Owner { get { return owner; } }
    }
}
