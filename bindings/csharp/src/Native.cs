// The C ABI (capi/fourdgs.h) as P/Invoke declarations: every struct mirrors the header field by
// field (tests/layout.c checks sizes and offsets against the compiler's), every function keeps
// its C name. size_t is UIntPtr, pointers are IntPtr, C enums inside structs are uint.
// Structs read on every frame (frame columns, player frame info, audio state) are blittable:
// no marshalling copy and no allocation per call.
using System;
using System.Runtime.InteropServices;

namespace Fourdgs.Native
{
    public enum Status
    {
        Ok = 0, Malformed = 1, Truncated = 2, Unsupported = 3, IO = 4, InvalidArgument = 5,
        Limit = 6, OutOfMemory = 7, Internal = 8, BufferTooSmall = 9, NotFound = 10
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct FourdgsString
    {
        public IntPtr data;
        public UIntPtr size;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct ErrorInfo
    {
        public UIntPtr struct_size;
        public int status;
        public FourdgsString refusal, message;
        public ulong offset;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct OpenOptions
    {
        public UIntPtr struct_size;
        public uint max_sh_degree, verify_summary_crc, copy_memory, decode_threads;
        public ulong max_record_bytes, max_summary_bytes;
        public uint max_gaussians_per_chunk;
        public IntPtr allocator;
        public uint keep_payloads;
        public IntPtr http_headers;
        public UIntPtr http_header_count;
        public IntPtr http_ca_bundle;
        public uint http_connect_timeout_ms, http_transfer_timeout_ms, http_max_attempts,
            http_verify_tls;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct ReadCallbacks
    {
        public IntPtr user, size, read_at, release;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct StreamCallbacks
    {
        public IntPtr user, read, release;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct SceneInfo
    {
        public UIntPtr struct_size;
        public FourdgsString profile, library, temporal_model_name;
        public uint temporal_model;
        public double duration_sec;
        public ulong gaussian_count;
        public double cutoff;
        [MarshalAs(UnmanagedType.ByValArray, SizeConst = 6)] public double[] aabb;
        public uint sh_degree, header_flags;
        public FourdgsString quantization_scheme;
        [MarshalAs(UnmanagedType.ByValArray, SizeConst = 3)] public double[] pos_origin;
        public double step_pos, step_scale_log, step_rot, step_rgb, step_alpha, step_motion,
            step_time, step_sigma_log;
        public uint step_sh, sh_depth_count;
        [MarshalAs(UnmanagedType.ByValArray, SizeConst = 3)] public byte[] sh_depths;
        public ulong header_attribute_count, quantization_bound_count, window_count, chunk_count,
            metadata_count, attachment_count, audio_source_count, coordinate_frame_count,
            sensor_count, rig_trajectory_count, geodetic_anchor_count, object_count,
            object_track_count, skipped_record_count;
        public uint has_camera, has_object_table, object_embedding_dim, index_built_by_scan,
            summary_crc_verified;
        public ulong trailing_bytes;
        public uint read_by_scan;
        public FourdgsString scan_cause;
        public uint window_table_present, has_footer;
        public ulong summary_start, summary_offset_start;
        public uint summary_crc;
        public ulong summary_offset_count;
        public uint has_statistics;
        public ulong statistics_gaussian_count, statistics_chunk_count;
        public double statistics_duration_sec;
        [MarshalAs(UnmanagedType.ByValArray, SizeConst = 6)] public double[] statistics_aabb;
        public uint sh_depths_malformed;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct Payload
    {
        public ulong offset, size;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct AttachmentInfo
    {
        public UIntPtr struct_size;
        public FourdgsString name, media_type;
        public Payload payload;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct CameraInfo
    {
        public UIntPtr struct_size;
        public double fov_y_deg;
        [MarshalAs(UnmanagedType.ByValArray, SizeConst = 3)] public double[] position;
        [MarshalAs(UnmanagedType.ByValArray, SizeConst = 3)] public double[] target;
        public ulong keyframe_count;
        public FourdgsString interpolation;
        public uint loop;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct CameraKeyframe
    {
        public double time;
        [MarshalAs(UnmanagedType.ByValArray, SizeConst = 3)] public double[] position;
        [MarshalAs(UnmanagedType.ByValArray, SizeConst = 3)] public double[] target;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct AudioSourceInfo
    {
        public UIntPtr struct_size;
        public uint source_id, legacy;
        public FourdgsString name, codec, channel_layout, interpolation;
        public double start_sec, duration_sec, gain;
        public uint flags;
        [MarshalAs(UnmanagedType.ByValArray, SizeConst = 3)] public double[] position;
        [MarshalAs(UnmanagedType.ByValArray, SizeConst = 4)] public double[] rotation;
        public ulong keyframe_count;
        public Payload payload;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct AudioKeyframe
    {
        public double time;
        [MarshalAs(UnmanagedType.ByValArray, SizeConst = 3)] public double[] position;
        [MarshalAs(UnmanagedType.ByValArray, SizeConst = 4)] public double[] rotation;
    }

    /// <summary>§7.1/§7.2: one audio source at an instant. Blittable (read every frame).</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct AudioState
    {
        public uint active;
        public double local_time, gain;
        public double position_x, position_y, position_z;
        public double rotation_x, rotation_y, rotation_z, rotation_w;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct CoordinateFrame
    {
        public UIntPtr struct_size;
        public FourdgsString name;
        public uint handedness, up_axis, forward_axis, length_unit;
        public double metres_per_unit;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct Sensor
    {
        public UIntPtr struct_size;
        public FourdgsString name, modality, rig_name;
        public uint camera_model, width_px, height_px;
        public double fx, fy, cx, cy;
        public ulong distortion_count;
        public IntPtr distortion;
        [MarshalAs(UnmanagedType.ByValArray, SizeConst = 4)] public double[] rotation;
        [MarshalAs(UnmanagedType.ByValArray, SizeConst = 3)] public double[] translation;
        public uint pose_reference;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct PoseSample
    {
        public double time;
        [MarshalAs(UnmanagedType.ByValArray, SizeConst = 4)] public double[] rotation;
        [MarshalAs(UnmanagedType.ByValArray, SizeConst = 3)] public double[] translation;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct GeodeticAnchor
    {
        public UIntPtr struct_size;
        public FourdgsString frame_name;
        public double latitude_deg, longitude_deg, altitude_m, heading_deg;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct ObjectInfo
    {
        public UIntPtr struct_size;
        public uint object_id;
        public FourdgsString label;
        [MarshalAs(UnmanagedType.ByValArray, SizeConst = 3)] public float[] anchor;
        public uint has_dynamics;
        [MarshalAs(UnmanagedType.ByValArray, SizeConst = 3)] public float[] velocity;
        [MarshalAs(UnmanagedType.ByValArray, SizeConst = 3)] public float[] angular_velocity;
        [MarshalAs(UnmanagedType.ByValArray, SizeConst = 3)] public float[] acceleration;
        public uint has_embedding;
        public IntPtr embedding;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct EvaluateOptions
    {
        public UIntPtr struct_size;
        public uint max_sh_degree, apply_object_tracks, append;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct ChunkInfo
    {
        public UIntPtr struct_size;
        public double t0, t1;
        public ulong offset, size, gaussian_count, fetch_bytes;
        public uint kind, has_keyframe_fields, delta_mode, depth;
        public ulong reference_offset, keyframe_offset, live_count, band_count;
    }

    /// <summary>A frame's columns, borrowed until the next evaluate into it. Blittable.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct FrameColumns
    {
        public UIntPtr struct_size;
        public double time;
        public UIntPtr count;
        public IntPtr center, scale, rotation, color, object_id, source;
        public uint sh_degree;
        public UIntPtr sh_per_gaussian;
        public IntPtr sh, flags;
        public UIntPtr unrepresentable;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct FrameBuffers
    {
        public UIntPtr struct_size;
        public UIntPtr capacity;
        public IntPtr center, scale, rotation, color, object_id;
        public uint sh_degree;
        public IntPtr sh_bytes, sh_floats;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct BlockInfo
    {
        public UIntPtr struct_size;
        public uint kind;
        public double time;
        public ulong offset, length;
        public double t0, t1;
        public uint level, chunk_kind, delta_mode, depth;
        public ulong reference_offset, keyframe_offset, live_count;
        public uint update_count, birth_count, death_count, object_id_stream;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct BlockColumns
    {
        public UIntPtr struct_size;
        public UIntPtr count;
        public IntPtr position, scale, rotation, color, motion, mu_t, sigma_t, win_lo, win_hi,
            flags, window_index, object_id, source_group, source_index, gaussian_id;
        public uint sh_degree;
        public UIntPtr sh_per_gaussian;
        public IntPtr sh;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct PlayerOptions
    {
        public UIntPtr struct_size;
        public uint look_ahead;
        public double start, rate;
        public uint loop, playing, max_sh_degree, apply_object_tracks, decode_threads, prefetch;
        public double prefetch_step_sec;
        public uint prefetch_horizon;
        public ulong prefetch_bytes;
        public double stall_timeout_sec;
    }

    /// <summary>What a player frame call says beside its frame. Blittable.</summary>
    [StructLayout(LayoutKind.Sequential)]
    public struct PlayerFrameInfo
    {
        public UIntPtr struct_size;
        public double time, shown;
        public uint late, reason, state;
        public double state_t0, state_t1;
        public UIntPtr audio_count;
        public IntPtr changed_rows;
        public UIntPtr changed_count;
        public uint all_changed;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct PlayerInfo
    {
        public UIntPtr struct_size;
        public uint state, loop;
        public double rate, position, duration;
        public ulong frames, late_frames, chunks_decoded, states_composed, steps, discarded,
            resident_bytes;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct ValidationSummary
    {
        public UIntPtr struct_size;
        public ulong finding_count, errors, warnings, file_size, records, chunks;
        public uint truncated, findings_capped, valid;
    }

    [StructLayout(LayoutKind.Sequential)]
    public struct Finding
    {
        public UIntPtr struct_size;
        public uint severity;
        public FourdgsString rule, field, value, section, message;
        public ulong offset;
    }

    /// <summary>Marks a static method the native library calls back, so IL2CPP (ahead-of-time)
    /// generates a native entry for it. IL2CPP matches the attribute by name, so this local
    /// definition is enough; Mono's JIT ignores it.</summary>
    [AttributeUsage(AttributeTargets.Method)]
    public sealed class MonoPInvokeCallbackAttribute : Attribute
    {
        public MonoPInvokeCallbackAttribute(Type delegateType) { DelegateType = delegateType; }
        public Type DelegateType { get; private set; }
    }

    [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
    public delegate long StreamReadFn(IntPtr user, IntPtr buffer, ulong length);
    [UnmanagedFunctionPointer(CallingConvention.Cdecl)]
    public delegate void ReleaseFn(IntPtr user);

    /// <summary>The entry points. Handles go in as their SafeHandle (the marshaller holds a
    /// reference for the call, so no finalizer frees a handle in use) and come out of the
    /// creating calls as IntPtr, wrapped at once; the *_free functions are the handles' release.</summary>
    public static class Api
    {
        public const string Library = "fourdgs-c";
        const CallingConvention C = CallingConvention.Cdecl;

        [DllImport(Library, CallingConvention = C)] public static extern IntPtr fourdgs_version();
        [DllImport(Library, CallingConvention = C)] public static extern uint fourdgs_abi_version();
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_last_error(ref ErrorInfo o);
        [DllImport(Library, CallingConvention = C)] public static extern void fourdgs_clear_error();

        // The sized inits write the library's defaults only within struct_size bytes (the C#
        // struct's own size), so an older binding keeps working with a newer library.
        [DllImport(Library, CallingConvention = C)] public static extern void fourdgs_open_options_init_sized(ref OpenOptions o, UIntPtr struct_size);
        [DllImport(Library, CallingConvention = C)] public static extern void fourdgs_evaluate_options_init_sized(ref EvaluateOptions o, UIntPtr struct_size);
        [DllImport(Library, CallingConvention = C)] public static extern void fourdgs_player_options_init_sized(ref PlayerOptions o, UIntPtr struct_size);

        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_open_file(byte[] path, UIntPtr size, ref OpenOptions o, out IntPtr reader);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_open_memory(IntPtr data, UIntPtr size, ref OpenOptions o, out IntPtr reader);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_open_url(byte[] url, UIntPtr size, ref OpenOptions o, out IntPtr reader);
        [DllImport(Library, CallingConvention = C)] public static extern void fourdgs_reader_free(IntPtr reader);

        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_scene_info(ReaderHandle r, ref SceneInfo o);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_header_attribute(ReaderHandle r, UIntPtr i, out FourdgsString k, out FourdgsString v);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_quantization_bound(ReaderHandle r, UIntPtr i, out FourdgsString k, out FourdgsString v);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_window(ReaderHandle r, UIntPtr i, out double lo, out double hi);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_metadata(ReaderHandle r, UIntPtr i, out FourdgsString name, out UIntPtr entries);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_metadata_entry(ReaderHandle r, UIntPtr i, UIntPtr e, out FourdgsString k, out FourdgsString v);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_attachment(ReaderHandle r, UIntPtr i, ref AttachmentInfo o);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_read_payload(ReaderHandle r, Payload p, byte[] buffer, UIntPtr capacity, out UIntPtr size);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_camera(ReaderHandle r, ref CameraInfo o);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_camera_keyframe(ReaderHandle r, UIntPtr i, ref CameraKeyframe o);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_audio_source(ReaderHandle r, UIntPtr i, ref AudioSourceInfo o);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_audio_keyframe(ReaderHandle r, UIntPtr s, UIntPtr i, ref AudioKeyframe o);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_audio_state_at(ReaderHandle r, UIntPtr s, double t, out AudioState o);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_coordinate_frame(ReaderHandle r, UIntPtr i, ref CoordinateFrame o);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_sensor(ReaderHandle r, UIntPtr i, ref Sensor o);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_rig_trajectory(ReaderHandle r, UIntPtr i, out FourdgsString name, out uint interpolation, out UIntPtr samples);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_rig_trajectory_sample(ReaderHandle r, UIntPtr i, UIntPtr s, ref PoseSample o);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_geodetic_anchor(ReaderHandle r, UIntPtr i, ref GeodeticAnchor o);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_object(ReaderHandle r, UIntPtr i, ref ObjectInfo o);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_object_track(ReaderHandle r, UIntPtr i, out uint object_id, out uint interpolation, out UIntPtr samples);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_object_track_sample(ReaderHandle r, UIntPtr i, UIntPtr s, ref PoseSample o);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_chunk_info(ReaderHandle r, UIntPtr i, ref ChunkInfo o);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_chunk_band(ReaderHandle r, UIntPtr i, UIntPtr k, out uint band, out ulong offset, out ulong length);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_summary_offset(ReaderHandle r, UIntPtr k, out uint opcode, out ulong start, out ulong length);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_skipped_record(ReaderHandle r, UIntPtr k, out uint opcode, out ulong offset, out ulong length);

        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_frame_create(IntPtr allocator, out IntPtr frame);
        [DllImport(Library, CallingConvention = C)] public static extern void fourdgs_frame_free(IntPtr frame);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_evaluate(ReaderHandle r, double t, ref EvaluateOptions o, FrameHandle frame);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_evaluate_block(ReaderHandle r, BlockHandle block, double t, ref EvaluateOptions o, FrameHandle frame);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_frame_columns_get(FrameHandle frame, ref FrameColumns o);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_frame_copy(FrameHandle frame, ref FrameBuffers b, out UIntPtr count);

        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_block_create(IntPtr allocator, out IntPtr block);
        [DllImport(Library, CallingConvention = C)] public static extern void fourdgs_block_free(IntPtr block);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_block_columns_get(BlockHandle block, ref BlockColumns o);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_block_info_get(BlockHandle block, ref BlockInfo o);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_read_all(ReaderHandle r, BlockHandle block);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_reader_state_at(ReaderHandle r, double t, BlockHandle block);

        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_stream_open_callbacks(ref StreamCallbacks cb, ref OpenOptions o, out IntPtr stream);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_stream_open_url(byte[] url, UIntPtr size, ref OpenOptions o, out IntPtr stream);
        [DllImport(Library, CallingConvention = C)] public static extern void fourdgs_stream_free(IntPtr stream);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_stream_scene(StreamHandle stream, out IntPtr reader);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_stream_next_block(StreamHandle stream, BlockHandle block, out uint produced);

        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_player_create(ReaderHandle r, ref PlayerOptions o, out IntPtr player);
        [DllImport(Library, CallingConvention = C)] public static extern void fourdgs_player_free(IntPtr player);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_player_frame(PlayerHandle p, double now, uint wait, FrameHandle frame, ref PlayerFrameInfo info);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_player_frame_at(PlayerHandle p, double t, uint wait, FrameHandle frame, ref PlayerFrameInfo info);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_player_audio_state(PlayerHandle p, UIntPtr i, out AudioState o);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_player_play(PlayerHandle p);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_player_pause(PlayerHandle p);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_player_seek(PlayerHandle p, double t);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_player_set_rate(PlayerHandle p, double rate);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_player_set_loop(PlayerHandle p, uint loop);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_player_info_get(PlayerHandle p, ref PlayerInfo o);

        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_validate_file(byte[] path, UIntPtr size, ref OpenOptions o, out IntPtr validation);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_validate_memory(byte[] data, UIntPtr size, ref OpenOptions o, out IntPtr validation);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_validate_url(byte[] url, UIntPtr size, ref OpenOptions o, out IntPtr validation);
        [DllImport(Library, CallingConvention = C)] public static extern void fourdgs_validation_free(IntPtr v);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_validation_summary_get(ValidationHandle v, ref ValidationSummary o);
        [DllImport(Library, CallingConvention = C)] public static extern Status fourdgs_validation_finding(ValidationHandle v, UIntPtr i, ref Finding o);
    }
}
