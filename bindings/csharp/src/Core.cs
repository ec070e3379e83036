// Errors, strings and handles: what every other file of the binding stands on.
using System;
using System.Runtime.InteropServices;
using System.Text;
using Fourdgs.Native;

namespace Fourdgs
{
    /// <summary>A refusal or failure of the library: the status, the stable kebab-case refusal
    /// identifier (e.g. "magic-mismatch"), the message naming the offending value and the byte
    /// offset in the file (null when unknown), exactly as fourdgs_last_error reports them.</summary>
    public sealed class FourdgsException : Exception
    {
        public Status Status { get; }
        public string Refusal { get; }
        public ulong? Offset { get; }
        public string Detail { get; }

        public FourdgsException(Status status, string refusal, string message, ulong? offset)
            : base(refusal + ": " + message + (offset.HasValue ? " (at byte " + offset + ")" : ""))
        {
            Status = status;
            Refusal = refusal;
            Detail = message;
            Offset = offset;
        }
    }

    internal static class Lib
    {
        const ulong NoOffset = ulong.MaxValue;

        /// <summary>Throws the calling thread's last error when `status` is not Ok.</summary>
        internal static void Check(Status status)
        {
            if (status == Status.Ok) return;
            var e = new ErrorInfo { struct_size = Size<ErrorInfo>() };
            Api.fourdgs_last_error(ref e);
            throw new FourdgsException(status, Str(e.refusal), Str(e.message),
                                       e.offset == NoOffset ? (ulong?)null : e.offset);
        }

        internal static UIntPtr Size<T>() where T : struct
        {
            return (UIntPtr)Marshal.SizeOf(typeof(T));
        }

        internal static UIntPtr U(long v) { return (UIntPtr)(ulong)v; }

        /// <summary>A string the library lends (UTF-8, `size` bytes, may hold NULs).</summary>
        internal static string Str(FourdgsString s)
        {
            int n = checked((int)(ulong)s.size);
            if (n == 0 || s.data == IntPtr.Zero) return "";
            var bytes = new byte[n];
            Marshal.Copy(s.data, bytes, 0, n);
            return Encoding.UTF8.GetString(bytes);
        }

        internal static byte[] Utf8(string s) { return Encoding.UTF8.GetBytes(s ?? ""); }

        internal static T[] Copy<T>(T[] a) { return a == null ? new T[0] : (T[])a.Clone(); }
    }

    /// <summary>One owning SafeHandle class per kind of handle, each releasing through its own
    /// fourdgs_*_free. A SafeHandle is released exactly once, also by the finalizer, and is never
    /// freed while a P/Invoke call is using it (the calls take the SafeHandle itself); a call on
    /// a disposed one throws ObjectDisposedException.</summary>
    public abstract class FourdgsHandle : SafeHandle
    {
        protected FourdgsHandle() : base(IntPtr.Zero, true) { }
        public override bool IsInvalid { get { return handle == IntPtr.Zero; } }
        internal void Set(IntPtr h) { SetHandle(h); }
    }

    public sealed class ReaderHandle : FourdgsHandle
    {
        /// <summary>False for a stream's scene: lent by the stream, never freed here.</summary>
        internal bool Owned = true;
        protected override bool ReleaseHandle()
        {
            if (Owned) Api.fourdgs_reader_free(handle);
            return true;
        }
    }

    public sealed class FrameHandle : FourdgsHandle
    {
        protected override bool ReleaseHandle() { Api.fourdgs_frame_free(handle); return true; }
    }

    public sealed class BlockHandle : FourdgsHandle
    {
        protected override bool ReleaseHandle() { Api.fourdgs_block_free(handle); return true; }
    }

    public sealed class StreamHandle : FourdgsHandle
    {
        protected override bool ReleaseHandle() { Api.fourdgs_stream_free(handle); return true; }
    }

    public sealed class PlayerHandle : FourdgsHandle
    {
        protected override bool ReleaseHandle() { Api.fourdgs_player_free(handle); return true; }
    }

    public sealed class ValidationHandle : FourdgsHandle
    {
        protected override bool ReleaseHandle() { Api.fourdgs_validation_free(handle); return true; }
    }

    /// <summary>The library's version and ABI.</summary>
    public static class Library
    {
        /// <summary>The ABI this binding was written against (FOURDGS_C_ABI_VERSION).</summary>
        public const uint AbiVersion = 1;
        public static string Version { get { return Marshal.PtrToStringAnsi(Api.fourdgs_version()); } }
        public static uint LoadedAbiVersion { get { return Api.fourdgs_abi_version(); } }
    }
}
