// Options: the library fills every default (fourdgs_*_init_sized, within the C# struct's size);
// a setting left null here keeps it.
// No default value of the library is repeated in C#.
using System;
using System.Runtime.InteropServices;
using Fourdgs.Native;

namespace Fourdgs
{
    /// <summary>How a file is opened (fourdgs_open_options). Null keeps the library's default.</summary>
    public sealed class OpenSettings
    {
        public uint? MaxShDegree;
        public bool? VerifySummaryCrc;
        /// <summary>Reader.OpenMemory: copy the bytes (otherwise they are pinned until Dispose).</summary>
        public bool? CopyMemory;
        public uint? DecodeThreads;
        public ulong? MaxRecordBytes, MaxSummaryBytes;
        public uint? MaxGaussiansPerChunk;
        /// <summary>Streams: keep attachment and audio payloads as they pass.</summary>
        public bool? KeepPayloads;
        /// <summary>URLs: extra request headers ("Name: value"), sent with every request.</summary>
        public string[] HttpHeaders;
        /// <summary>URLs: a PEM file of certificate authorities to trust instead of the system's.</summary>
        public string HttpCaBundle;
        public uint? HttpConnectTimeoutMs, HttpTransferTimeoutMs, HttpMaxAttempts;
        public bool? HttpVerifyTls;
    }

    internal static class Defaults
    {
        internal static OpenOptions Open()
        {
            var o = new OpenOptions();
            Api.fourdgs_open_options_init_sized(ref o, Lib.Size<OpenOptions>());
            return o;
        }

        internal static EvaluateOptions Evaluate()
        {
            var o = new EvaluateOptions();
            Api.fourdgs_evaluate_options_init_sized(ref o, Lib.Size<EvaluateOptions>());
            return o;
        }

        internal static PlayerOptions Player()
        {
            var o = new PlayerOptions();
            Api.fourdgs_player_options_init_sized(ref o, Lib.Size<PlayerOptions>());
            return o;
        }
    }

    /// <summary>fourdgs_open_options for one call, with the HTTP strings in native memory that
    /// lives until Dispose (the library copies them at open).</summary>
    internal sealed class NativeOpenOptions : IDisposable
    {
        internal OpenOptions Value = Defaults.Open();
        IntPtr headerArray = IntPtr.Zero;
        IntPtr[] headerStrings = new IntPtr[0];
        IntPtr caBundle = IntPtr.Zero;

        internal NativeOpenOptions(OpenSettings s)
        {
            if (s == null) return;
            if (s.MaxShDegree.HasValue) Value.max_sh_degree = s.MaxShDegree.Value;
            if (s.VerifySummaryCrc.HasValue) Value.verify_summary_crc = s.VerifySummaryCrc.Value ? 1u : 0u;
            if (s.CopyMemory.HasValue) Value.copy_memory = s.CopyMemory.Value ? 1u : 0u;
            if (s.DecodeThreads.HasValue) Value.decode_threads = s.DecodeThreads.Value;
            if (s.MaxRecordBytes.HasValue) Value.max_record_bytes = s.MaxRecordBytes.Value;
            if (s.MaxSummaryBytes.HasValue) Value.max_summary_bytes = s.MaxSummaryBytes.Value;
            if (s.MaxGaussiansPerChunk.HasValue) Value.max_gaussians_per_chunk = s.MaxGaussiansPerChunk.Value;
            if (s.KeepPayloads.HasValue) Value.keep_payloads = s.KeepPayloads.Value ? 1u : 0u;
            if (s.HttpConnectTimeoutMs.HasValue) Value.http_connect_timeout_ms = s.HttpConnectTimeoutMs.Value;
            if (s.HttpTransferTimeoutMs.HasValue) Value.http_transfer_timeout_ms = s.HttpTransferTimeoutMs.Value;
            if (s.HttpMaxAttempts.HasValue) Value.http_max_attempts = s.HttpMaxAttempts.Value;
            if (s.HttpVerifyTls.HasValue) Value.http_verify_tls = s.HttpVerifyTls.Value ? 1u : 0u;
            if (s.HttpCaBundle != null)
            {
                caBundle = Utf8z(s.HttpCaBundle);
                Value.http_ca_bundle = caBundle;
            }
            if (s.HttpHeaders != null && s.HttpHeaders.Length > 0)
            {
                headerStrings = new IntPtr[s.HttpHeaders.Length];
                headerArray = Marshal.AllocHGlobal(IntPtr.Size * headerStrings.Length);
                for (int i = 0; i < headerStrings.Length; i++)
                {
                    headerStrings[i] = Utf8z(s.HttpHeaders[i]);
                    Marshal.WriteIntPtr(headerArray, i * IntPtr.Size, headerStrings[i]);
                }
                Value.http_headers = headerArray;
                Value.http_header_count = (UIntPtr)(uint)headerStrings.Length;
            }
        }

        static IntPtr Utf8z(string s)
        {
            byte[] b = Lib.Utf8(s);
            IntPtr p = Marshal.AllocHGlobal(b.Length + 1);
            Marshal.Copy(b, 0, p, b.Length);
            Marshal.WriteByte(p, b.Length, 0);
            return p;
        }

        public void Dispose()
        {
            foreach (IntPtr p in headerStrings) Marshal.FreeHGlobal(p);
            headerStrings = new IntPtr[0];
            if (headerArray != IntPtr.Zero) Marshal.FreeHGlobal(headerArray);
            if (caBundle != IntPtr.Zero) Marshal.FreeHGlobal(caBundle);
            headerArray = caBundle = IntPtr.Zero;
        }
    }

    /// <summary>fourdgs_evaluate_options. Null keeps the library's default.</summary>
    public sealed class EvaluateSettings
    {
        public uint? MaxShDegree;
        public bool? ApplyObjectTracks;
        public bool? Append;

        internal EvaluateOptions ToNative()
        {
            var o = Defaults.Evaluate();
            if (MaxShDegree.HasValue) o.max_sh_degree = MaxShDegree.Value;
            if (ApplyObjectTracks.HasValue) o.apply_object_tracks = ApplyObjectTracks.Value ? 1u : 0u;
            if (Append.HasValue) o.append = Append.Value ? 1u : 0u;
            return o;
        }
    }

    /// <summary>fourdgs_player_options. Null keeps the library's default.</summary>
    public sealed class PlayerSettings
    {
        public uint? LookAhead;
        public double? Start, Rate;
        public bool? Loop, Playing;
        public uint? MaxShDegree;
        public bool? ApplyObjectTracks;
        public uint? DecodeThreads;
        public bool? Prefetch;
        public double? PrefetchStepSec;
        public uint? PrefetchHorizon;
        public ulong? PrefetchBytes;
        public double? StallTimeoutSec;

        internal PlayerOptions ToNative()
        {
            var o = Defaults.Player();
            if (LookAhead.HasValue) o.look_ahead = LookAhead.Value;
            if (Start.HasValue) o.start = Start.Value;
            if (Rate.HasValue) o.rate = Rate.Value;
            if (Loop.HasValue) o.loop = Loop.Value ? 1u : 0u;
            if (Playing.HasValue) o.playing = Playing.Value ? 1u : 0u;
            if (MaxShDegree.HasValue) o.max_sh_degree = MaxShDegree.Value;
            if (ApplyObjectTracks.HasValue) o.apply_object_tracks = ApplyObjectTracks.Value ? 1u : 0u;
            if (DecodeThreads.HasValue) o.decode_threads = DecodeThreads.Value;
            if (Prefetch.HasValue) o.prefetch = Prefetch.Value ? 1u : 0u;
            if (PrefetchStepSec.HasValue) o.prefetch_step_sec = PrefetchStepSec.Value;
            if (PrefetchHorizon.HasValue) o.prefetch_horizon = PrefetchHorizon.Value;
            if (PrefetchBytes.HasValue) o.prefetch_bytes = PrefetchBytes.Value;
            if (StallTimeoutSec.HasValue) o.stall_timeout_sec = StallTimeoutSec.Value;
            return o;
        }
    }
}
